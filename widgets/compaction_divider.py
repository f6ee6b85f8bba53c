"""Where the conversation was compacted: a divider in the chat that says when, why and by how much;
Enter (or a click) shows the summary the model continued from, and hides it again. After /clear
it says the model starts afresh. Everything above the divider stays in the chat, the table and
the log: only the model's view of the conversation changed."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.strip import Strip

from widgets.chat_entry import ChatEntry, EntryHost, blank, wrapped, wrapped_height
from widgets.text.untrusted import clean

TRIGGERS = {"auto": ("auto", "the context window was filling up"), "manual": ("/compact", "asked for by the user")}


class CompactionDivider(ChatEntry):
    """The divider in the chat (an entry of the virtual chat: widgets/chat_entry.py)."""

    interactive = True

    def __init__(self, event: Any, position: int = 0) -> None:
        super().__init__(position)
        self.event = event
        self.expanded = False

    @property
    def cleared(self) -> bool:
        return self.event.trigger == "clear"

    def content(self) -> Content:
        event = self.event
        if self.cleared:
            return Content.styled("──── conversation cleared: the model starts afresh from here ────", "bold")
        short, why = TRIGGERS.get(event.trigger, (event.trigger, ""))
        sizes = f"· {short} · {event.tokens_before:,} → ~{event.tokens_after:,} tokens"
        head = Content.assemble(("──── conversation compacted ", "bold"), (sizes, "$foreground 70%"), (" ────", "bold"))
        if not self.expanded:
            hint = Content.styled(f"     {why} · enter shows the summary the model goes on from", "$foreground 55%")
            return Content("\n").join([head, hint])
        summary = Content(clean(event.summary).strip())
        footer = Content.styled("     enter hides the summary", "$foreground 55%")
        return Content("\n").join([head, summary, footer])

    def render(self, chat: EntryHost, width: int, cursor: bool) -> list[Strip]:
        body = wrapped(Content.assemble(" ", self.content(), " "), width, chat.entry_style("divider", cursor))
        return [blank(chat, width), *body, blank(chat, width)]

    def estimate(self, width: int) -> int:
        return wrapped_height(self.content().plain, width) + 2

    def activate(self, chat: EntryHost) -> None:
        if not self.cleared:
            self.expanded = not self.expanded
            self.changed()
            chat.entry_changed(self)
