"""Read-only text that is never clipped: every line is folded at the width, so a 5,000-character
command is shown whole. Optionally highlighted (in a worker when big) and line-numbered.
Line API with a fold cache, so a large tool result scrolls as smoothly as a small one.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from rich.segment import Segment
from textual import work
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from widgets.diff.highlighting import highlight_lines
from widgets.text.line_render import content_segments, load_css
from widgets.text.untrusted import clean

#: texts bigger than this are highlighted off the UI thread
SYNC_HIGHLIGHT_CHARS = 100_000


def _highlighted(text: str, language: str | None) -> list[Content]:
    return highlight_lines(text.split("\n"), language)


class TextView(ScrollView, can_focus=True):
    DEFAULT_CSS = load_css("text_view")
    COMPONENT_CLASSES: ClassVar[set[str]] = {"text-view--gutter"}

    def __init__(self, text: str = "", *, language: str | None = None, line_numbers: bool = False,
                 name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.line_numbers = line_numbers
        self._lines: list[Content] = []
        self._rows: list[tuple[int, int]] = []
        self._rows_width = -1
        self._folds: LRUCache[tuple[int, int], list[Content]] = LRUCache(4096)
        self._generation = 0
        if text:
            self.set_text(text, language=language)

    # ---- content ----------------------------------------------------------------------------

    @property
    def plain(self) -> str:
        return "\n".join(line.plain for line in self._lines)

    def set_text(self, text: str, *, language: str | None = None) -> None:
        """Untrusted text: neutralised, never parsed as markup; highlighted by `language`."""
        text = clean(text)
        self._generation += 1
        if language and len(text) > SYNC_HIGHLIGHT_CHARS:
            self._set_lines([Content(line) for line in text.split("\n")])
            self._highlight_in_thread(text, language, self._generation)
        else:
            self._set_lines(_highlighted(text, language))

    def set_lines(self, lines: list[Content]) -> None:
        """Lines already built as Content (our own styled text; untrusted parts as plain Content)."""
        self._generation += 1
        self._set_lines(lines)

    @work(thread=True, exclusive=True, group="text-highlight")
    def _highlight_in_thread(self, text: str, language: str, generation: int) -> None:
        lines = _highlighted(text, language)
        self.app.call_from_thread(self._set_highlighted, lines, generation)

    def _set_highlighted(self, lines: list[Content], generation: int) -> None:
        if generation == self._generation:
            self._set_lines(lines)

    def _set_lines(self, lines: list[Content]) -> None:
        self._lines = lines
        self._rows_width = -1
        self._folds.clear()
        self._layout()
        self.refresh()

    # ---- layout -----------------------------------------------------------------------------

    def _gutter_width(self) -> int:
        return len(str(len(self._lines))) + 2 if self.line_numbers else 0

    def _text_width(self) -> int:
        return max(2, self.scrollable_content_region.width - self._gutter_width())

    def _fold(self, index: int, width: int) -> list[Content]:
        key = (index, width)
        folded = self._folds.get(key)
        if folded is None:
            folded = self._folds[key] = self._lines[index].fold(width) or [Content("")]
        return folded

    def _layout(self) -> None:
        width = self._text_width()
        if width == self._rows_width and self._rows:
            return
        rows: list[tuple[int, int]] = []
        for index, line in enumerate(self._lines):
            length = line.cell_length
            if length <= width:
                rows.append((index, 0))
                continue
            # ASCII folds exactly at the width; wide characters may need one more row
            count = math.ceil(length / width) if line.plain.isascii() else len(self._fold(index, width))
            rows.extend((index, chunk) for chunk in range(count))
        self._rows = rows
        self._rows_width = width
        self.virtual_size = Size(self.scrollable_content_region.width, len(rows))

    def on_resize(self) -> None:
        self._layout()

    @property
    def row_count(self) -> int:
        return len(self._rows)

    # ---- rendering --------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        self._layout()
        width = self.scrollable_content_region.width
        base = self.visual_style
        row = round(self.scroll_y) + y
        if row >= len(self._rows):
            return Strip.blank(width, base.rich_style)
        index, chunk = self._rows[row]
        text_width = self._text_width()
        folded = self._fold(index, text_width)
        content = folded[chunk] if chunk < len(folded) else Content("")
        segments: list[Any] = []
        gutter = self._gutter_width()
        if gutter:
            label = str(index + 1) if chunk == 0 else "↪"
            style = (base + self.get_visual_style("text-view--gutter", partial=True)).rich_style
            segments.append(Segment(f"{label:>{gutter - 1}} ", style))
        segments.extend(content_segments(content, base))
        return Strip(segments).crop_extend(0, width, base.rich_style)
