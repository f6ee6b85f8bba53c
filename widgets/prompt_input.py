"""The prompt box: multi-line, Enter sends, ctrl+j (or shift/alt+enter where the terminal reports
them) inserts a newline, and up/down on the first/last visual line walk the history of prompts.

What the user typed is never lost: a prompt is cleared only once the owner accepted it
(`accept()`), a draft survives walking the history, and text typed while a dialog's key guard
was up can be handed back here (`insert_typed`).

An owner may set `completer` (slash-command completion): it sees each key first and says whether
it took it.
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

from widgets.text.line_render import load_css

#: keys that insert a newline instead of sending (terminals differ in what they report)
NEWLINE_KEYS = frozenset({"ctrl+j", "shift+enter", "alt+enter", "ctrl+enter"})
HISTORY_LIMIT = 500
PLACEHOLDER = "Ask the agent…   enter sends · ctrl+j new line · ↑ history"


class Completer(Protocol):
    def handle_key(self, key: str) -> bool: ...


class PromptInput(TextArea):
    DEFAULT_CSS = load_css("prompt_input")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "send", "Send", show=True, priority=False),
        Binding("ctrl+j", "newline", "New line", show=True),
    ]

    class Submitted(Message):
        """The user pressed Enter on a prompt (the owner decides whether to take it)."""

        def __init__(self, prompt_input: PromptInput, text: str) -> None:
            super().__init__()
            self.prompt_input = prompt_input
            self.text = text

        @property
        def control(self) -> PromptInput:
            return self.prompt_input

    def __init__(self, *, history: list[str] | None = None, id: str | None = None,
                 placeholder: str = PLACEHOLDER) -> None:
        super().__init__("", id=id, soft_wrap=True, show_line_numbers=False, highlight_cursor_line=False,
                         placeholder=placeholder, tab_behavior="focus")
        self.past_prompts: list[str] = list(history or [])[-HISTORY_LIMIT:]
        #: position while walking the history (len(history) = the draft)
        self._position = len(self.past_prompts)
        self._draft = ""
        self.completer: Completer | None = None

    # ---- keys -------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        # handled here, before TextArea inserts a newline for Enter or moves the cursor
        if self.completer is not None and self.completer.handle_key(event.key):
            event.stop()
            event.prevent_default()
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_send()
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.action_newline()
            return
        if self._history_key(event.key):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def _history_key(self, key: str) -> bool:
        """Up on the first visual line, down on the last: walk the history (True when it moved)."""
        if key == "up" and self.navigator.is_first_wrapped_line(self.cursor_location):
            return self._walk(-1)
        if key == "down" and self.navigator.is_last_wrapped_line(self.cursor_location):
            return self._walk(1)
        return False

    def action_send(self) -> None:
        text = self.text
        if text.strip():
            self.post_message(self.Submitted(self, text))

    def action_newline(self) -> None:
        self.insert("\n")

    # ---- history ----------------------------------------------------------------------------

    def _walk(self, step: int) -> bool:
        target = self._position + step
        if target < 0 or target > len(self.past_prompts):
            return False
        if self._position == len(self.past_prompts):
            self._draft = self.text
        self._position = target
        self.load_text(self._draft if target == len(self.past_prompts) else self.past_prompts[target])
        self.move_cursor(self.document.end)
        return True

    def remember(self, text: str) -> None:
        if text.strip() and (not self.past_prompts or self.past_prompts[-1] != text):
            self.past_prompts.append(text)
            del self.past_prompts[:-HISTORY_LIMIT]
        self._position = len(self.past_prompts)
        self._draft = ""

    def accept(self, text: str) -> None:
        """The owner took `text`: remember it and empty the box."""
        self.remember(text)
        self.load_text("")

    def insert_typed(self, text: str) -> None:
        """Characters typed elsewhere (a dialog that was not yet taking keys) belong here."""
        self.insert(text)
