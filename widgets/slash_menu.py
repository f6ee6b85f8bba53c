"""Slash-command completion: while the prompt box holds `/` and part of a name, the commands that
match, each with its argument hint and a one-line description, right above the box. The box keeps
the focus: ↑ ↓ move here, Tab (or Enter on an incomplete name) completes, Esc closes.

Descriptions of custom commands come from files in the project: shown as plain text, never markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from widgets.text.line_render import load_css
from widgets.text.untrusted import one_line, plain

MAX_SHOWN = 10


class SlashMenu(OptionList, can_focus=False):
    DEFAULT_CSS = load_css("slash_menu")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.names: list[str] = []

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    def show_commands(self, commands: Sequence[Any]) -> None:
        """Commands with `name`, `label` ("/name hint") and `description`; none hides the menu."""
        commands = list(commands)[:MAX_SHOWN]
        self.names = [c.name for c in commands]
        if not commands:
            self.hide()
            return
        width = min(32, max(len(one_line(c.label)) for c in commands))
        self.set_options([Option(Content.assemble(plain(one_line(c.label).ljust(width), "bold"), "  ",
                                                  plain(one_line(c.description, 120), "$foreground 70%")), id=c.name)
                          for c in commands])
        self.highlighted = 0
        self.add_class("-shown")

    def hide(self) -> None:
        self.remove_class("-shown")

    def move(self, step: int) -> None:
        if self.names:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.names)

    @property
    def chosen(self) -> str | None:
        index = self.highlighted
        return self.names[index] if index is not None and 0 <= index < len(self.names) else None
