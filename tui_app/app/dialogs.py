"""Which dialog is up: approvals and AskUserQuestion, driven by the session's events.

Requests queue in the order they were asked; one dialog is shown at a time and says where it is
in the queue ("2 of 3"). A dialog opens only over the main screen: while the user is in the
command palette, the artifact browser or any other screen, a notification says what waits, and the
dialog opens when they are back (keys meant for that screen never answer a request). A request
decided by someone else (a PermissionRequest hook, a timeout, an interrupt that cancelled the call)
closes its dialog by itself and a notification says who decided. The answers go to the session as
commands of its port (AnswerApproval, AnswerQuestion, AnswerPlan) through `answer`. All of this
runs on the UI thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from textual.app import App

from tui_app.app.screens.approval import ApprovalResult, ApprovalScreen
from tui_app.app.screens.question import QuestionScreen
from tui_app.runtime.commands import AnswerQuestion
from tui_app.runtime.events import (
    PermissionRequested,
    PermissionResolved,
    SubagentStarted,
    ToolCallError,
    ToolCallResult,
    UserQuestionAnswered,
    UserQuestionAsked,
)
from widgets.text.formatting import short_path
from widgets.text.untrusted import one_line

WHO = {
    "hook": "A PermissionRequest hook",
    "rule": "A permission rule",
    "mode": "The permission mode",
    "timeout": "The approval timeout",
    "no_client": "Vigil (no client)",
    "turn": "The turn",
    "guard": "A guard",
    "tool": "The tool",
    "expired": "Nobody (the request expired)",
    "agent": "The agent",
}


def decided_elsewhere(request: PermissionRequested, event: PermissionResolved, cwd: str | None) -> str:
    """"A PermissionRequest hook allowed Edit calc/stats.py first: reason"."""
    who = WHO.get(event.decided_by, event.decided_by)
    if event.decided_by == "user" and event.client:
        who = f"Another client ({one_line(event.client, 40)})"
    verb = "allowed" if event.decision == "allow" else "denied"
    target = request.input.get("file_path") or request.input.get("command") or ""
    what = f"{request.tool} {short_path(target, cwd) if isinstance(target, str) else ''}".strip()
    text = f"{who} {verb} {one_line(what, 120)} first"
    return text + (f": {one_line(event.reason, 200)}" if event.reason else "")


@dataclass
class DialogOptions:
    cwd: str | None = None
    key_guard_s: float = 0.3
    clock: Callable[[], float] = time.monotonic
    ring_bell: bool = True
    #: where characters typed during a dialog's key guard go (the prompt box)
    forward_keys: Callable[[str], None] | None = None
    #: may a dialog open now (the user is on the main screen)?
    can_open: Callable[[], bool] = lambda: True


def tell_waiting(app: App[Any], options: DialogOptions, told: set[str], request_id: str, what: str) -> None:
    """Once per request: what waits for the user, while a dialog cannot open."""
    if request_id in told:
        return
    told.add(request_id)
    app.notify(f"{what} waits for you: it opens when you are back on the main screen.", title="Waiting for you",
               severity="warning", markup=False, timeout=8)
    if options.ring_bell:
        app.bell()


#: sends an answer (a command of the session port) to the session
Answer = Callable[[Any], None]


@dataclass
class ApprovalQueue:
    app: App[Any]
    answer: Answer
    options: DialogOptions = field(default_factory=DialogOptions)
    waiting: list[PermissionRequested] = field(default_factory=list)
    current: PermissionRequested | None = None
    screen: ApprovalScreen | None = None
    #: answered since the queue was last empty (for "2 of 3")
    answered: int = 0
    #: requests already announced while no dialog could open
    told: set[str] = field(default_factory=set)
    #: subagent → how the dialog names it ("the Explore subagent “find callers”")
    subagents: dict[str, str] = field(default_factory=dict)
    #: the request this screen's user answered last (any other answer came from elsewhere)
    delivered: str | None = None

    @property
    def position(self) -> tuple[int, int]:
        return self.answered + 1, self.answered + 1 + len(self.waiting)

    def observe(self, events: Iterable[Any]) -> None:
        for event in events:
            if isinstance(event, SubagentStarted) and event.agent_id is not None:
                self.subagents[event.agent_id] = f"the {event.subagent_type} subagent “{event.description}”"
            elif isinstance(event, PermissionRequested) and event.interactive:
                self.waiting.append(event)
            elif isinstance(event, PermissionResolved) and event.request_id is not None:
                self._resolved(event)
            elif isinstance(event, ToolCallResult | ToolCallError):
                self._settled(event)
        self._update()

    def _resolved(self, event: PermissionResolved) -> None:
        if self.current is not None and self.current.request_id == event.request_id:
            # a hook, or another client of the same session (the host's), was first
            elsewhere = event.decided_by != "user" or self.delivered != event.request_id
            if elsewhere and self.screen is not None:
                self.screen.close_from_outside(decided_elsewhere(self.current, event, self.options.cwd))
            return
        self.waiting = [r for r in self.waiting if r.request_id != event.request_id]

    def _settled(self, event: ToolCallResult | ToolCallError) -> None:
        """A call that ended while its request waited (the turn was interrupted)."""
        if self.current is not None and self.current.call_id == event.call_id and self.screen is not None:
            code = getattr(event, "code", "")
            self.screen.close_from_outside(f"{one_line(self.current.tool, 60)} was {code or 'settled'} "
                                           "before you answered")
        self.waiting = [r for r in self.waiting if r.call_id != event.call_id]

    def _update(self) -> None:
        if self.current is None and self.waiting:
            if self.options.can_open():
                self._show(self.waiting.pop(0))
            else:
                first = self.waiting[0]
                what = f"Approval of {one_line(first.tool, 60)}"
                tell_waiting(self.app, self.options, self.told, first.request_id, what)
        elif self.screen is not None:
            self.screen.set_queue(*self.position)
        if self.current is None and not self.waiting:
            self.answered = 0

    def _show(self, request: PermissionRequested) -> None:
        options = self.options
        position, total = self.position
        self.current = request
        asked_by = self.subagents.get(request.agent_id or "", request.agent_id) if request.agent_id else None
        self.screen = ApprovalScreen(request, position=position, total=total, cwd=options.cwd,
                                     key_guard_s=options.key_guard_s, ring_bell=options.ring_bell,
                                     clock=options.clock, forward_keys=options.forward_keys, asked_by=asked_by,
                                     on_answer=self._deliver)
        self.app.push_screen(self.screen, self._closed)

    def _deliver(self, result: ApprovalResult) -> None:
        """The user's answer goes to the session at once; the dialog closes after."""
        command = result.to_command()
        if command is not None:
            self.delivered = getattr(command, "request_id", None)
            self.answer(command)

    def _closed(self, _result: ApprovalResult | None) -> None:
        self.current = None
        self.screen = None
        self.answered += 1
        self._update()


@dataclass
class QuestionQueue:
    app: App[Any]
    answer: Answer
    options: DialogOptions = field(default_factory=DialogOptions)
    waiting: list[UserQuestionAsked] = field(default_factory=list)
    current: UserQuestionAsked | None = None
    screen: QuestionScreen | None = None
    told: set[str] = field(default_factory=set)

    def observe(self, events: Iterable[Any]) -> None:
        for event in events:
            if isinstance(event, UserQuestionAsked):
                self.waiting.append(event)
            elif isinstance(event, UserQuestionAnswered):
                self._gone(event.request_id, event.outcome)
        self._update()

    def _update(self) -> None:
        if self.current is None and self.waiting:
            if self.options.can_open():
                self._show(self.waiting.pop(0))
            else:
                tell_waiting(self.app, self.options, self.told, self.waiting[0].request_id, "A question from the agent")

    def _gone(self, request_id: str, outcome: str) -> None:
        if self.current is not None and self.current.request_id == request_id:
            if outcome == "cancelled" and self.screen is not None:
                self.screen.close_from_outside("The question was withdrawn: the turn was interrupted")
            return
        self.waiting = [q for q in self.waiting if q.request_id != request_id]

    def _show(self, request: UserQuestionAsked) -> None:
        options = self.options
        self.current = request
        self.screen = QuestionScreen(request, key_guard_s=options.key_guard_s, ring_bell=options.ring_bell,
                                     clock=options.clock, forward_keys=options.forward_keys)
        self.app.push_screen(self.screen, self._closed)

    def _closed(self, answers: dict[str, str] | None) -> None:
        request = self.current
        if request is not None:  # a withdrawn question is gone from the broker: the answer is refused
            self.answer(AnswerQuestion(request_id=request.request_id, answers=answers))
        self.current = None
        self.screen = None
        self._update()
