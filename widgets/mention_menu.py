"""The `@` file picker: while the prompt box holds `@` and part of a path, the project's files and
directories that match, right above the box, the matched letters in bold. The box keeps the
focus: ↑ ↓ move here, Tab or Enter inserts the path, Esc closes.

Paths come from the disk: shown as plain text, never markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from widgets.text.line_render import load_css
from widgets.text.untrusted import one_line, plain

MAX_SHOWN = 12


class MentionMenu(OptionList, can_focus=False):
    DEFAULT_CSS = load_css("mention_menu")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.paths: list[str] = []

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    def show_paths(self, matches: Sequence[Any], total: int | None = None) -> None:
        """Matches with `path` and `positions`; none: a line that says so."""
        matches = list(matches)[:MAX_SHOWN]
        self.paths = [m.path for m in matches]
        if not matches:
            self.show_message("No file matches" + (f" (of {total:,})" if total else ""))
            return
        self.set_options([Option(_highlighted(m.path, m.positions), id=str(i)) for i, m in enumerate(matches)])
        self.highlighted = 0
        self.border_title = f"@ files · {total:,}" if total else "@ files"
        self.add_class("-shown")

    def show_message(self, text: str) -> None:
        self.paths = []
        self.set_options([Option(Content.styled(text, "$foreground 60%"), disabled=True)])
        self.add_class("-shown")

    def hide(self) -> None:
        self.remove_class("-shown")

    def move(self, step: int) -> None:
        if self.paths:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.paths)

    @property
    def chosen(self) -> str | None:
        index = self.highlighted
        return self.paths[index] if index is not None and 0 <= index < len(self.paths) else None


def _highlighted(path: str, positions: Sequence[int]) -> Content:
    shown = one_line(path, 200)
    content = plain(shown)
    if len(shown) != len(path):
        return content
    for at in sorted(set(positions)):
        content = content.stylize("bold $accent", at, at + 1)
    return content
