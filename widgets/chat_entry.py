"""One entry of the chat (widgets/chat.py): a plain object that renders its own lines.

The chat is virtual: it keeps entries, not widgets, and asks an entry for its lines only when
they are on screen. A kind of entry subclasses `ChatEntry`: `render` gives its lines at a width
(styles come from the chat's component classes), `estimate` its height before it was first
rendered, `activate` what Enter or a click does when it is `interactive`; it calls `changed()`
when its lines change (the chat caches them by `version`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Protocol

from rich.cells import cell_len
from textual.content import Content
from textual.strip import Strip
from textual.style import Style

from widgets.text.line_render import content_strip


class EntryHost(Protocol):
    """What an entry needs of the chat it is shown in (the chat owns its entries, so they take this
    Protocol instead of importing it: docs/architecture.md §1)."""

    def entry_style(self, name: str, cursor: bool = False) -> Style: ...

    def entry_changed(self, entry: ChatEntry) -> None: ...

    def post_message(self, message: Any) -> Any: ...


class ChatEntry:
    #: Enter and a click call `activate`; up/down stop on it
    interactive: ClassVar[bool] = False

    def __init__(self, position: int = 0) -> None:
        #: how many events the chat had applied when the entry appeared (`rewind` cuts on it)
        self.position = position
        self.version = 0

    def changed(self) -> None:
        self.version += 1

    def render(self, chat: EntryHost, width: int, cursor: bool) -> list[Strip]:
        raise NotImplementedError

    def estimate(self, width: int) -> int:
        """The height before the entry was first rendered; exact where that is cheap."""
        return 1

    def activate(self, chat: EntryHost) -> None:
        return None


def wrapped(content: Content, width: int, base: Style) -> list[Strip]:
    """Content wrapped to `width`, one strip a line, on `base` (its background filled)."""
    return [content_strip(line, base, width) for line in content.wrap(max(1, width))] or [Strip.blank(width)]


def wrapped_height(text: str, width: int) -> int:
    width = max(1, width)
    return sum(max(1, math.ceil(cell_len(line) / width)) for line in text.split("\n"))


def blank(chat: EntryHost, width: int) -> Strip:
    return Strip.blank(width, chat.entry_style("base").rich_style)
