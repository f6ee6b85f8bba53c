"""Which plan dialog is up: ExitPlanMode requests from the session's events, one at a time, opened
only over the main screen (like the approvals); the answer goes back through the broker, and a
plan withdrawn by an interrupt closes its dialog by itself."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from textual.app import App

from tui_app.app.dialogs import Answer, DialogOptions, tell_waiting
from tui_app.app.screens.plan import PlanScreen
from tui_app.runtime.commands import AnswerPlan
from tui_app.runtime.events import PlanApprovalAsked, UserQuestionAnswered


@dataclass
class PlanQueue:
    app: App[Any]
    answer: Answer
    options: DialogOptions = field(default_factory=DialogOptions)
    waiting: list[PlanApprovalAsked] = field(default_factory=list)
    current: PlanApprovalAsked | None = None
    screen: PlanScreen | None = None
    told: set[str] = field(default_factory=set)

    def observe(self, events: Iterable[Any]) -> None:
        for event in events:
            if isinstance(event, PlanApprovalAsked):
                self.waiting.append(event)
            elif isinstance(event, UserQuestionAnswered):
                self._gone(event.request_id, event.outcome)
        self._update()

    def _update(self) -> None:
        if self.current is None and self.waiting:
            if self.options.can_open():
                self._show(self.waiting.pop(0))
            else:
                tell_waiting(self.app, self.options, self.told, self.waiting[0].request_id, "The agent's plan")

    def _gone(self, request_id: str, outcome: str) -> None:
        if self.current is not None and self.current.request_id == request_id:
            if outcome == "cancelled" and self.screen is not None:
                self.screen.close_from_outside("The plan was withdrawn: the turn was interrupted")
            return
        self.waiting = [p for p in self.waiting if p.request_id != request_id]

    def _show(self, request: PlanApprovalAsked) -> None:
        options = self.options
        self.current = request
        self.screen = PlanScreen(request, key_guard_s=options.key_guard_s, ring_bell=options.ring_bell,
                                 clock=options.clock, forward_keys=options.forward_keys)
        self.app.push_screen(self.screen, self._closed)

    def _closed(self, answers: dict[str, str] | None) -> None:
        request = self.current
        if request is not None:
            decision = (answers or {}).get("decision") if answers is not None else None
            self.answer(AnswerPlan(request_id=request.request_id,
                                   decision=decision if decision in ("acceptEdits", "default", "keep") else None,
                                   feedback=(answers or {}).get("feedback", "")))
        self.current = None
        self.screen = None
        self._update()
