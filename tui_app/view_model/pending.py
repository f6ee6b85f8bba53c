"""The requests waiting for a human — approvals, questions, plan approvals — in the order they were
asked, folded from session events; and what settled each one (so a dialog showing it can say who
decided). The dialogs and, later, an inbox are views of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tui_app.runtime.events import (
    PermissionRequested,
    PermissionResolved,
    PlanApprovalAsked,
    SubagentStarted,
    ToolCallError,
    ToolCallResult,
    UserQuestionAnswered,
    UserQuestionAsked,
)

Request = PermissionRequested | UserQuestionAsked | PlanApprovalAsked


@dataclass(frozen=True)
class Settled:
    """A request that no longer waits, and the event that settled it (a PermissionResolved, a
    UserQuestionAnswered, or the call's result or error when the call ended first)."""

    request: Request
    event: Any


class PendingRequests:
    def __init__(self) -> None:
        self.waiting: list[Request] = []
        #: subagent → how a dialog names it ("the Explore subagent “find callers”")
        self.subagents: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self.waiting)

    def get(self, request_id: str) -> Request | None:
        return next((r for r in self.waiting if r.request_id == request_id), None)

    def asked_by(self, request: Request) -> str | None:
        """Which subagent asked (None: the session's own agent)."""
        agent_id = request.agent_id
        return self.subagents.get(agent_id, agent_id) if agent_id else None

    def apply(self, event: Any) -> list[Settled]:
        """Fold one event in; return the requests it settled."""
        if isinstance(event, SubagentStarted) and event.agent_id is not None:
            self.subagents[event.agent_id] = f"the {event.subagent_type} subagent “{event.description}”"
        elif isinstance(event, PermissionRequested):
            if event.interactive:
                self.waiting.append(event)
        elif isinstance(event, UserQuestionAsked | PlanApprovalAsked):
            self.waiting.append(event)
        elif isinstance(event, PermissionResolved) and event.request_id is not None:
            return self._settle(
                lambda r: isinstance(r, PermissionRequested) and r.request_id == event.request_id, event
            )
        elif isinstance(event, UserQuestionAnswered):
            return self._settle(
                lambda r: not isinstance(r, PermissionRequested) and r.request_id == event.request_id, event
            )
        elif isinstance(event, ToolCallResult | ToolCallError) and event.call_id is not None:
            # a call that ended while its request waited (the turn was interrupted)
            return self._settle(lambda r: isinstance(r, PermissionRequested) and r.call_id == event.call_id, event)
        return []

    def _settle(self, match: Any, event: Any) -> list[Settled]:
        gone = [r for r in self.waiting if match(r)]
        if gone:
            self.waiting = [r for r in self.waiting if not match(r)]
        return [Settled(r, event) for r in gone]
