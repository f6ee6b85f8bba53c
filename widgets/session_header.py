"""The one-line header of the main screen: session, model, permission mode, cwd, tokens, and
whether a turn is running. `HeaderState` folds session events (plain Python); `SessionHeader`
shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.content import Content
from textual.widgets import Static

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
from widgets.text.formatting import tilde
from widgets.text.line_render import load_css
from widgets.text.untrusted import one_line

MODE_STYLES = {
    "default": "$text-success",
    "acceptEdits": "bold $text-warning",
    "plan": "bold $text-primary",
    "dontAsk": "bold $text-warning",
    "bypassPermissions": "bold $text-error",
}


#: said in the header when Bash commands do not run in a sandbox
SANDBOX_LABELS = {"unavailable": ("⚠ no sandbox", "bold $text-error"), "off": ("sandbox off", "bold $text-warning")}


def fmt_tokens(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


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
                isinstance(event, PermissionResolved) and event.request_id is not None):
            self.waiting = max(0, self.waiting - 1)
        elif isinstance(event, SessionEnded):
            self.ended = True
            self.running = False
        elif isinstance(event, Warning) and event.code == "log_write_failed":
            self.log_failure = str(event.detail.get("reason") or "write failed")
        else:
            return False
        return True

    def content(self, cwd_label: str | None = None) -> Content:
        sep = (" · ", "$foreground 60%")
        parts: list[Any] = [(" Vigil ", "bold $text-primary")]
        if self.log_failure:  # first: the one thing that must not be cut off
            parts += [(f"⚠ LOG NOT SAVED ({one_line(self.log_failure, 40)}) ", "bold $text-error")]
        if self.tag:
            parts += [(f"[{self.tag}] ", "bold $text-warning")]
        parts += [(one_line(self.session_id or "starting…", 40), "$foreground 80%"), sep]
        if self.agent:
            parts += [(one_line(self.agent, 20), "bold $text-accent"), (" ", "")]
        parts += [(one_line(self.model or ("?" if not self.agent else "its default model"), 40), "bold"), sep,
                  ("mode ", "$foreground 60%"), (self.mode, MODE_STYLES.get(self.mode, "bold")), sep]
        if self.agent_mode:  # the agent's own mode decides what it asks Vigil at all
            parts[-1:-1] = [(" · agent ", "$foreground 60%"), (one_line(self.agent_mode, 30), "bold")]
        if self.sandbox in SANDBOX_LABELS:
            parts += [SANDBOX_LABELS[self.sandbox], sep]
        if self.ended:
            parts.append(("ended", "$foreground 60%"))
        elif self.waiting:
            parts.append((f"◆ waiting for you ({self.waiting})", "bold $text-warning"))
        elif self.running:
            parts.append(("▶ working", "bold $text-primary"))
        else:
            parts.append(("idle", "$foreground 60%"))
        # the cwd last: on a narrow terminal it is what gets cut
        parts += [sep, (f"tokens {fmt_tokens(self.input_tokens)} in / {fmt_tokens(self.output_tokens)} out",
                        "$foreground 70%"), sep,
                  (one_line(cwd_label if cwd_label is not None else tilde(self.cwd), 200), "$foreground 80%")]
        return Content.assemble(*parts)


class SessionHeader(Static):
    DEFAULT_CSS = load_css("session_header")

    def __init__(self, state: HeaderState | None = None, *, cwd_label: str | None = None,
                 id: str | None = None) -> None:
        super().__init__(Content(""), id=id)
        self.state = state or HeaderState()
        #: shown instead of the real cwd (a demo's temp copy, a snapshot's fixed path)
        self.cwd_label = cwd_label

    def on_mount(self) -> None:
        self.redraw()

    def apply(self, events: Any) -> None:
        if any([self.state.apply(event) for event in events]):
            self.redraw()

    def redraw(self) -> None:
        self.update(self.state.content(self.cwd_label))
