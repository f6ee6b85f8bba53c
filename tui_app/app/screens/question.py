"""The AskUserQuestion dialog: the model's questions, one at a time, each with its options (one
choice, or several with multiSelect) or the user's own words. Returns {question: answer} via
`dismiss`, or None when the user declines (Esc).

Question and option texts come from the model: they are shown as plain Content, never markup.
Like the approval dialog (the guard of `GuardedModal`), it ignores keys for a moment after it
opens (and hands typed characters back to the prompt box), so a keystroke meant for the prompt
cannot pick an answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui_app.app.screens.guarded_modal import KEY_GUARD_S, GuardedModal
from tui_app.runtime.events import UserQuestionAsked
from widgets.text.line_render import load_css
from widgets.text.untrusted import one_line, plain


class QuestionScreen(GuardedModal[dict[str, str] | None]):
    CLOSED_TITLE = "Question closed"
    DEFAULT_CSS = load_css("question")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle", "Toggle", show=False),
        Binding("escape", "decline", "Decline"),
    ]

    def __init__(self, request: UserQuestionAsked, *, key_guard_s: float = KEY_GUARD_S, ring_bell: bool = True,
                 clock: Callable[[], float] = time.monotonic,
                 forward_keys: Callable[[str], None] | None = None) -> None:
        super().__init__(key_guard_s=key_guard_s, ring_bell=ring_bell, clock=clock, forward_keys=forward_keys)
        self.request = request
        self.questions: list[dict[str, Any]] = [q for q in request.questions if isinstance(q, dict)]
        self.index = 0
        self.answers: dict[str, str] = {}
        self.chosen: set[int] = set()

    # ---- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="question-dialog"):
            yield Static(Content(""), id="question-title")
            yield Static(Content(""), id="question-text")
            yield OptionList(id="question-options")
            yield Input(placeholder="…or answer in your own words (Enter sends)", id="question-other")
            yield Static(Content(""), id="question-keys")

    def on_mount(self) -> None:
        self.opened()
        self._show_question()

    @property
    def question(self) -> dict[str, Any]:
        return self.questions[self.index] if self.questions else {}

    @property
    def multi(self) -> bool:
        return bool(self.question.get("multiSelect"))

    def _options(self) -> list[dict[str, Any]]:
        return [o for o in self.question.get("options") or [] if isinstance(o, dict)]

    def _show_question(self) -> None:
        question = self.question
        count = len(self.questions)
        where = f"   question {self.index + 1} of {count}" if count > 1 else ""
        self.query_one("#question-title", Static).update(Content.assemble(
            ("The agent asks you", "bold"), (where, "$text-warning bold")))
        self.query_one("#question-text", Static).update(Content.assemble(
            (f" {one_line(str(question.get('header', '')), 30)} ", "bold reverse $text-primary"), "  ",
            plain(str(question.get("question", "")), "bold")))
        self.chosen = set()
        self._fill_options()
        options = self.query_one(OptionList)
        options.highlighted = 0 if self._options() else None
        options.focus()
        self.query_one("#question-other", Input).value = ""
        keys = ("↑↓ move   space choose/unchoose   enter next   tab own words   esc decline" if self.multi
                else "↑↓ move   enter choose   tab own words   esc decline")
        self.query_one("#question-keys", Static).update(Content(keys))

    def _fill_options(self) -> None:
        options = self.query_one(OptionList)
        highlighted = options.highlighted
        prompts = []
        for i, option in enumerate(self._options()):
            mark = ("[x] " if i in self.chosen else "[ ] ") if self.multi else ""
            prompts.append(Option(Content.assemble(
                (mark, "bold"), plain(one_line(str(option.get("label", "")), 80), "bold"),
                ("  " if option.get("description") else ""),
                plain(str(option.get("description", "")), "$foreground 70%"),
            ), id=str(i)))
        options.set_options(prompts)
        if highlighted is not None:
            options.highlighted = min(highlighted, len(prompts) - 1) if prompts else None

    # ---- keys -------------------------------------------------------------------------------

    def action_toggle(self) -> None:
        if not self.multi or not self.armed:
            return
        index = self.query_one(OptionList).highlighted
        if index is None:
            return
        self.chosen ^= {index}
        self._fill_options()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if not self.armed:
            return
        labels = [str(o.get("label", "")) for o in self._options()]
        if self.multi:
            picked = sorted(self.chosen) or [event.option_index]
            self._answer(", ".join(labels[i] for i in picked))
        else:
            self._answer(labels[event.option_index])

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.armed and event.value.strip():
            self._answer(event.value.strip())

    def _answer(self, text: str) -> None:
        self.answers[str(self.question.get("question", ""))] = text
        if self.index + 1 < len(self.questions):
            self.index += 1
            self.arm()
            self._show_question()
        else:
            self.finish(dict(self.answers))

    def action_decline(self) -> None:
        if self.armed:
            self.finish(None)
