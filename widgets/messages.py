"""Messages shared by several widgets, so the app handles "the user picked a call" in one place."""

from __future__ import annotations

from textual.message import Message


class CallSelected(Message):
    """The user chose a tool call (Enter or click in the table, or a summary line in the chat)."""

    def __init__(self, call_id: str) -> None:
        super().__init__()
        self.call_id = call_id
