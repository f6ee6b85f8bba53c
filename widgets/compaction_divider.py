"""Where the conversation was compacted: a divider in the chat that says when, why and by how much;
Enter (or a click) shows the summary the model continued from, and hides it again. After /clear
it says the model starts afresh. Everything above the divider stays in the chat, the table and
the log: only the model's view of the conversation changed."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Static

from widgets.text.untrusted import clean

TRIGGERS = {"auto": ("auto", "the context window was filling up"), "manual": ("/compact", "asked for by the user")}


class CompactionDivider(Static, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "toggle", "Show the summary", show=False)]

    def __init__(self, event: Any) -> None:
        super().__init__(Content(""))
        self.event = event
        self.expanded = False
        self.show()

    @property
    def cleared(self) -> bool:
        return self.event.trigger == "clear"

    def show(self) -> None:
        event = self.event
        if self.cleared:
            self.update(Content.styled("──── conversation cleared: the model starts afresh from here ────", "bold"))
            return
        short, why = TRIGGERS.get(event.trigger, (event.trigger, ""))
        sizes = f"· {short} · {event.tokens_before:,} → ~{event.tokens_after:,} tokens"
        head = Content.assemble(("──── conversation compacted ", "bold"), (sizes, "$foreground 70%"), (" ────", "bold"))
        if not self.expanded:
            hint = Content.styled(f"     {why} · enter shows the summary the model goes on from", "$foreground 55%")
            self.update(Content("\n").join([head, hint]))
            return
        summary = Content(clean(event.summary).strip())
        footer = Content.styled("     enter hides the summary", "$foreground 55%")
        self.update(Content("\n").join([head, summary, footer]))

    def action_toggle(self) -> None:
        if not self.cleared:
            self.expanded = not self.expanded
            self.show()

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_toggle()
