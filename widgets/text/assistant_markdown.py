"""The model's Markdown as a widget (the plan dialog): control sequences neutralised before the
parser sees them, and links inert — a click shows where one points and opens nothing. (The chat
renders the model's Markdown to lines itself: widgets/chat.py.)"""

from __future__ import annotations

from textual.widgets import Markdown

from tui_app.runtime.results.sanitize import neutralize
from widgets.text.untrusted import one_line


class AssistantMarkdown(Markdown):
    def __init__(self, text: str = "") -> None:
        super().__init__(neutralize(text), open_links=False)

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        event.stop()
        self.notify(f"Links are not opened from here: {one_line(event.href, 300)}", markup=False)
