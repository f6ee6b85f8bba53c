"""Which dialog is up: one queue over every request that waits for the user — approvals,
AskUserQuestion, plan approvals — as the session's view model holds them (`PendingRequests`).

Requests are shown one at a time in the order they were asked, and an approval says where it is
in the queue ("2 of 3"). A dialog opens only over the main screen: while the user is in the
command palette, the artifact browser or any other screen, a notification says what waits, and
the dialog opens when they are back (keys meant for that screen never answer a request). A
request decided by someone else (a PermissionRequest hook, a timeout, an interrupt that cancelled
the call) closes its dialog by itself and a notification says who decided. The answers go to the
session as commands of its port (AnswerApproval, AnswerQuestion, AnswerPlan) through `answer`.
All of this runs on the UI thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from textual.app import App

from tui_app.app.screens.approval import ApprovalResult, ApprovalScreen
from tui_app.app.screens.guarded_modal import GuardedModal
from tui_app.app.screens.plan import PlanScreen
from tui_app.app.screens.question import QuestionScreen
from tui_app.runtime.commands import AnswerPlan, AnswerQuestion
from tui_app.runtime.events import (
    PermissionRequested,
    PermissionResolved,
    PlanApprovalAsked,
    ToolCallError,
    ToolCallResult,
    UserQuestionAnswered,
)
from tui_app.view_model.pending import PendingRequests, Request, Settled
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
    """ "A PermissionRequest hook allowed Edit calc/stats.py first: reason"."""
    who = WHO.get(event.decided_by, event.decided_by)
    if event.decided_by == "user" and event.client:
        who = f"Another client ({one_line(event.client, 40)})"
    verb = "allowed" if event.decision == "allow" else "denied"
    target = request.input.get("file_path") or request.input.get("command") or ""
    what = f"{request.tool} {short_path(target, cwd) if isinstance(target, str) else ''}".strip()
    text = f"{who} {verb} {one_line(what, 120)} first"
    return text + (f": {one_line(event.reason, 200)}" if event.reason else "")


def why_closed(settled: Settled, cwd: str | None, delivered: str | None = None) -> str | None:
    """What the dialog showing a request says when it closes by itself (None: this screen's user
    answered; `delivered`: the request they answered last)."""
    request, event = settled.request, settled.event
    if isinstance(event, PermissionResolved):
        # a hook, or another client of the same session (the host's), was first
        elsewhere = event.decided_by != "user" or delivered != request.request_id
        if not elsewhere or not isinstance(request, PermissionRequested):
            return None
        return decided_elsewhere(request, event, cwd)
    if isinstance(event, ToolCallResult | ToolCallError):
        code = getattr(event, "code", "")
        return (
            f"{one_line(request.tool, 60) if isinstance(request, PermissionRequested) else 'The call'} "
            f"was {code or 'settled'} before you answered"
        )
    if isinstance(event, UserQuestionAnswered) and event.outcome == "cancelled":
        what = "plan" if isinstance(request, PlanApprovalAsked) else "question"
        return f"The {what} was withdrawn: the turn was interrupted"
    return None


def waiting_label(request: Request) -> str:
    if isinstance(request, PermissionRequested):
        return f"Approval of {one_line(request.tool, 60)}"
    if isinstance(request, PlanApprovalAsked):
        return "The agent's plan"
    return "A question from the agent"


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


#: sends an answer (a command of the session port) to the session
Answer = Callable[[Any], None]


@dataclass
class RequestQueue:
    app: App[Any]
    #: the session's pending requests (its view model folds them)
    pending: PendingRequests
    answer: Answer
    options: DialogOptions = field(default_factory=DialogOptions)
    current: Request | None = None
    screen: GuardedModal[Any] | None = None
    #: answered here but not yet settled by the session (not shown again)
    answered_ids: set[str] = field(default_factory=set)
    #: answered since the queue was last empty (for "2 of 3")
    answered: int = 0
    #: requests already announced while no dialog could open
    told: set[str] = field(default_factory=set)
    #: the request this screen's user answered last (any other answer came from elsewhere)
    delivered: str | None = None

    @property
    def waiting(self) -> list[Request]:
        """The requests still to show, in the order they were asked."""
        current = self.current.request_id if self.current is not None else None
        return [r for r in self.pending.waiting if r.request_id != current and r.request_id not in self.answered_ids]

    @property
    def position(self) -> tuple[int, int]:
        return self.answered + 1, self.answered + 1 + len(self.waiting)

    def observe(self, settled: Iterable[Settled]) -> None:
        """After a batch of events was folded: close a dialog whose request was settled elsewhere,
        and show (or announce) what waits."""
        for item in settled:
            self.answered_ids.discard(item.request.request_id)
            if (
                self.current is not None
                and item.request.request_id == self.current.request_id
                and self.screen is not None
            ):
                reason = why_closed(item, self.options.cwd, self.delivered)
                if reason is not None:
                    self.screen.close_from_outside(reason)
        self._update()

    def _update(self) -> None:
        waiting = self.waiting
        if self.current is None and waiting:
            if self.options.can_open():
                self._show(waiting[0])
            else:
                first = waiting[0]
                self._tell_waiting(first.request_id, waiting_label(first))
        elif isinstance(self.screen, ApprovalScreen):
            self.screen.set_queue(*self.position)
        if self.current is None and not self.waiting:
            self.answered = 0

    def _tell_waiting(self, request_id: str, what: str) -> None:
        """Once per request: what waits for the user, while a dialog cannot open."""
        if request_id in self.told:
            return
        self.told.add(request_id)
        self.app.notify(
            f"{what} waits for you: it opens when you are back on the main screen.",
            title="Waiting for you",
            severity="warning",
            markup=False,
            timeout=8,
        )
        if self.options.ring_bell:
            self.app.bell()

    def _show(self, request: Request) -> None:
        options = self.options
        guard: dict[str, Any] = {
            "key_guard_s": options.key_guard_s,
            "ring_bell": options.ring_bell,
            "clock": options.clock,
            "forward_keys": options.forward_keys,
        }
        self.current = request
        position, total = self.position
        screen: GuardedModal[Any]
        if isinstance(request, PermissionRequested):
            screen = ApprovalScreen(
                request,
                position=position,
                total=total,
                cwd=options.cwd,
                asked_by=self.pending.asked_by(request),
                on_answer=self._deliver,
                **guard,
            )
        elif isinstance(request, PlanApprovalAsked):
            screen = PlanScreen(request, **guard)
        else:
            screen = QuestionScreen(request, **guard)
        self.screen = screen
        self.app.push_screen(screen, self._closed)

    def _deliver(self, result: ApprovalResult) -> None:
        """The user's answer to an approval goes to the session at once; the dialog closes after."""
        command = result.to_command()
        if command is not None:
            self.delivered = command.request_id
            self.answer(command)

    def _closed(self, result: Any) -> None:
        request = self.current
        if isinstance(request, PlanApprovalAsked):
            answers = result if isinstance(result, dict) else None
            decision = answers.get("decision") if answers is not None else None
            self.answer(
                AnswerPlan(
                    request_id=request.request_id,
                    decision=decision if decision in ("acceptEdits", "default", "keep") else None,
                    feedback=(answers or {}).get("feedback", ""),
                )
            )
        elif request is not None and not isinstance(request, PermissionRequested):
            # a withdrawn question is gone from the broker: the answer is refused
            self.answer(AnswerQuestion(request_id=request.request_id, answers=result))
        if request is not None and self.pending.get(request.request_id) is not None:
            self.answered_ids.add(request.request_id)
        self.current = None
        self.screen = None
        self.answered += 1
        self._update()
