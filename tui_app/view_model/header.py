"""The header's state: session, model, permission mode, cwd, tokens, whether a turn runs and how
many requests wait, folded from session events (plain Python; `widgets/session_header.py` shows it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tui_app.runtime.events import (
    AgentConnected,
    AgentModeChanged,
    ModelStepEnded,
    PermissionModeChanged,
    PermissionRequested,
    PermissionResolved,
    SandboxStatus,
    SessionEnded,
    SessionStarted,
    TurnEnded,
    TurnStarted,
    UserQuestionAnswered,
    UserQuestionAsked,
    Warning,
)


@dataclass
class HeaderState:
    session_id: str = ""
    provider: str = ""
    model: str = ""
    #: the external agent supervised (shown before its model), "" for Vigil's own
    agent: str = ""
    #: the name of the agent's own mode (ACP agents), "" when it has none
    agent_mode: str = ""
    mode: str = "default"
    cwd: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    running: bool = False
    waiting: int = 0
    ended: bool = False
    resumed: bool = False
    #: shown before the session id ("demo", "replay")
    tag: str = ""
    #: why the session log stopped being written ("disk full"), shown until the app ends
    log_failure: str = ""
    #: "on", "off", "unavailable" ("" until the session says)
    sandbox: str = ""

    def apply(self, event: Any) -> bool:
        """Fold one event in; True when the header should be redrawn."""
        if isinstance(event, SessionStarted):
            self.session_id, self.provider, self.model = event.session_id, event.provider, event.model
            self.agent = event.agent or ""
            self.mode, self.cwd = event.permission_mode, event.cwd
            self.resumed = event.resumed_from is not None
            self.ended = False
        elif isinstance(event, PermissionModeChanged):
            self.mode = event.mode
        elif isinstance(event, AgentConnected) and (event.capabilities is None or event.capabilities.own_tools):
            # an agent of its own is named before its model (Vigil's own agent is not)
            self.agent, self.model = event.agent, event.model or self.model
        elif isinstance(event, AgentModeChanged):
            self.agent_mode = next((m.name for m in event.modes if m.id == event.mode), "") or event.mode
        elif isinstance(event, SandboxStatus):
            self.sandbox = event.status
        elif isinstance(event, ModelStepEnded):
            self.input_tokens += int(event.usage.get("input_tokens", 0) or 0)
            self.output_tokens += int(event.usage.get("output_tokens", 0) or 0)
        elif isinstance(event, TurnStarted):
            self.running = True
        elif isinstance(event, TurnEnded):
            self.running = False
            self.waiting = 0
        elif isinstance(event, PermissionRequested | UserQuestionAsked):
            self.waiting += 1
        elif isinstance(event, UserQuestionAnswered) or (
            isinstance(event, PermissionResolved) and event.request_id is not None
        ):
            self.waiting = max(0, self.waiting - 1)
        elif isinstance(event, SessionEnded):
            self.ended = True
            self.running = False
        elif isinstance(event, Warning) and event.code == "log_write_failed":
            self.log_failure = str(event.detail.get("reason") or "write failed")
        else:
            return False
        return True
