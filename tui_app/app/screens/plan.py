"""The plan dialog (ExitPlanMode): the model's plan, rendered as Markdown, and the user's answer —
approve and let edits run (acceptEdits), approve and keep asking (default), or keep planning with
feedback for the model. Returns {"decision": …, "feedback": …} via `dismiss`, or None (Esc: keep
planning, no feedback).

The plan is model text: neutralised and rendered as Markdown whose links open nothing. Like the
approval dialog, keys pressed in the first moment after it opens are ignored (and handed back to
the prompt box), so a keystroke meant for the prompt cannot approve a plan.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Static

from tui_app.app.screens.guarded_modal import KEY_GUARD_S, GuardedModal
from tui_app.runtime.events import PlanApprovalAsked
from widgets.text.assistant_markdown import AssistantMarkdown
from widgets.text.line_render import load_css

CHOICES = (("1", "acceptEdits", "Approve, and let edits run without asking (acceptEdits)"),
           ("2", "default", "Approve, and keep asking before each edit (default)"),
           ("3", "keep", "Keep planning: tell the model what to change"))


class PlanScreen(GuardedModal[dict[str, str] | None]):
    CLOSED_TITLE = "Plan closed"
    DEFAULT_CSS = load_css("plan")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "choose('acceptEdits')", "Approve, auto-accept edits"),
        Binding("2", "choose('default')", "Approve, ask before edits"),
        Binding("3", "choose('keep')", "Keep planning"),
        Binding("escape", "escape", "Keep planning / back"),
    ]

    def __init__(self, request: PlanApprovalAsked, *, asked_by: str | None = None, key_guard_s: float = KEY_GUARD_S,
                 ring_bell: bool = True, clock: Callable[[], float] = time.monotonic,
                 forward_keys: Callable[[str], None] | None = None) -> None:
        super().__init__(key_guard_s=key_guard_s, ring_bell=ring_bell, clock=clock, forward_keys=forward_keys)
        self.request = request
        self.asked_by = asked_by
        self.writing_feedback = False

    def compose(self) -> ComposeResult:
        with Vertical(id="plan-dialog"):
            yield Static(Content.assemble(("The agent's plan", "bold"),
                                          ("   approve it to start the work", "$foreground 70%")), id="plan-title")
            with VerticalScroll(id="plan-body"):
                yield AssistantMarkdown(self.request.plan)
            yield Static(Content("\n").join([Content.assemble((f" {key} ", "bold reverse $text-primary"), f" {text}")
                                             for key, _, text in CHOICES]), id="plan-choices")
            yield Input(placeholder="What should the plan change? (Enter sends, Esc goes back)", id="plan-feedback")
            yield Static(self._keys(), id="plan-keys")

    def _keys(self) -> Content:
        if self.writing_feedback:
            return Content.from_markup("[b]enter[/b] keep planning with this feedback   [b]esc[/b] back")
        return Content.from_markup("[b]1[/b] / [b]2[/b] approve   [b]3[/b] keep planning…   [b]esc[/b] keep "
                                   "planning   [dim]arrows, pgup/pgdn scroll the plan[/dim]")

    def on_mount(self) -> None:
        self.opened()
        self.query_one("#plan-body").focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # while the feedback is typed, digits are text, not answers
        return not (self.writing_feedback and action == "choose")

    def action_choose(self, decision: str) -> None:
        if not self.armed:
            return
        if decision == "keep":
            self.writing_feedback = True
            field = self.query_one("#plan-feedback", Input)
            field.add_class("-shown")
            field.focus()
            self.query_one("#plan-keys", Static).update(self._keys())
            return
        self.finish({"decision": decision})

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.armed:
            self.finish({"decision": "keep", "feedback": event.value.strip()})

    def action_escape(self) -> None:
        if not self.armed:
            return
        if self.writing_feedback:
            self.writing_feedback = False
            self.query_one("#plan-feedback", Input).remove_class("-shown")
            self.query_one("#plan-body").focus()
            self.query_one("#plan-keys", Static).update(self._keys())
            return
        self.finish(None)
