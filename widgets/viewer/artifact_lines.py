"""The scrolling part of the artifact viewer: a line-API ScrollView over a `LineIndex`.

Nothing of the file is held but the lines on screen: each frame builds one page (the rows of the
screen) from `VirtualLines`, each line is decoded, sanitised and turned into a Strip once (an LRU
keyed by its byte offset), and the virtual height follows the index as it grows. A cursor line and
an optional selection (anchor to cursor) are kept in virtual line numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui_app.runtime.results.sanitize import neutralize
from widgets.viewer.layout import Row, VirtualLines, line_strips, line_text
from widgets.viewer.line_index import IndexProgress, LineIndex
from widgets.viewer.line_search import Match, Query

COPY_LIMIT = 8 << 20


class ArtifactLines(ScrollView, can_focus=True, inherit_bindings=False):
    """Rows of one file. The container (`ArtifactViewer`) owns keys, search and the status line."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "artifact-lines--gutter",
        "artifact-lines--gutter-unknown",
        "artifact-lines--cursor",
        "artifact-lines--selection",
        "artifact-lines--match",
        "artifact-lines--notice",
    }

    @dataclass
    class IndexAdvanced(Message):
        index: LineIndex
        progress: IndexProgress

    class Changed(Message):
        """Cursor, selection, size or modes changed: the status line should be redrawn."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.index: LineIndex | None = None
        self.virtual: VirtualLines | None = None
        self.cursor = 0
        self.anchor: int | None = None
        self.wrap = False
        self.follow = False
        self.query: Query | None = None
        self.match: Match | None = None
        self._strips: LRUCache[tuple, list[Strip]] = LRUCache(1024)
        self._page_key: tuple | None = None
        self._page: list[Row] = []
        self._widest = 0
        self._dragging = False

    # ----------------------------------------------------------------- opening

    def attach(self, index: LineIndex) -> None:
        """Show `index`'s file; the index is started here and closed by `detach`."""
        self.detach()
        self.index = index
        self.virtual = VirtualLines(index)
        self.cursor, self.anchor, self.match, self._widest = 0, None, None, 0
        self._strips.clear()
        index.on_progress = lambda progress: self.post_message(self.IndexAdvanced(index, progress))
        index.start()
        self.scroll_to(0, 0, animate=False)
        self._relayout(index.progress())

    def detach(self) -> None:
        if self.index is not None:
            self.index.on_progress = None
            self.index.close()
        self.index, self.virtual = None, None
        self._page_key, self._page = None, []
        self.virtual_size = Size(0, 0)
        self.refresh()

    def on_unmount(self) -> None:
        self.detach()

    @property
    def total(self) -> int:
        return 0 if self.virtual is None else self.virtual.total

    @property
    def text_width(self) -> int:
        return max(1, self.scrollable_content_region.width - self.gutter_width)

    @property
    def gutter_width(self) -> int:
        return max(4, len(f"{self.total:,}") + 1)

    @property
    def at_end(self) -> bool:
        return self.total > 0 and round(self.scroll_y) >= self.max_scroll_y

    # ----------------------------------------------------------------- index updates

    def on_artifact_lines_index_advanced(self, message: IndexAdvanced) -> None:
        if self.index is None or self.virtual is None or message.index is not self.index:
            return  # a late report from a file no longer shown
        old_total, old_top, old_exact = self.virtual.total, round(self.scroll_y), self.virtual.exact
        was_at_end = self.at_end
        in_tail_zone = not old_exact and old_top >= old_total - len(self.virtual.zone)
        self._relayout(message.progress)
        if self.follow or (was_at_end and not old_exact):
            self.scroll_to(y=self.max_scroll_y, animate=False)
            if self.follow:
                self.cursor = self.total - 1
        elif in_tail_zone and old_total > 0:
            # the user reads lines counted from the end: keep them where they are
            shift = self.total - old_total
            self.scroll_to(y=old_top + shift, animate=False)
            self.cursor = max(0, self.cursor + shift)
        self.post_message(self.Changed())

    def _relayout(self, progress: IndexProgress) -> None:
        assert self.virtual is not None
        self.virtual.update(progress, self.scrollable_content_region.height)
        width = self.text_width if self.wrap else self._widest
        self.virtual_size = Size(self.gutter_width + width, self._virtual_height())
        self.cursor = min(self.cursor, max(0, self.total - 1))
        self._page_key = None
        self.refresh()

    # ----------------------------------------------------------------- pages and strips

    def current_page(self) -> list[Row]:
        if self.virtual is None:
            return []
        height = self.scrollable_content_region.height
        top = round(self.scroll_y)
        at_end = self.at_end and self.total > height
        key = (top, height, self.text_width, self.wrap, at_end, self.total, self.virtual.progress)
        if key != self._page_key:
            self._page = self.virtual.page(top, height, self._pieces_count, at_end=at_end)
            self._page_key = key
        return self._page

    def _pieces(self, start: int) -> list[Strip]:
        assert self.index is not None
        width = self.text_width if self.wrap else 0
        line = self.index.decode(start)
        # the end is in the key: the last line of a growing file changes under the same start
        key = (start, line.end, self.query.text if self.query else None, width, self.index.progress().generation)
        cached = self._strips.get(key)
        if cached is not None:
            return cached
        text = line_text(line, self.query, self.get_component_rich_style("artifact-lines--match", partial=True))
        height = self.scrollable_content_region.height
        pieces = line_strips(line, text, self.app.console, width, max(3, height // 2),
                             self.get_component_rich_style("artifact-lines--notice", partial=True))
        if not self.wrap and pieces[0].cell_length > self._widest:
            self._widest = pieces[0].cell_length
            self.call_later(self._grow_width)
        self._strips[key] = pieces
        return pieces

    def _grow_width(self) -> None:
        if not self.wrap:
            self.virtual_size = Size(self.gutter_width + self._widest, self._virtual_height())

    def _virtual_height(self) -> int:
        """One virtual row per line; with wrap, lines take several rows, so every line must be able
        to reach the top (pages that do not fill the screen are drawn from the bottom up)."""
        if self.wrap and self.total:
            return self.total + max(0, self.scrollable_content_region.height - 1)
        return self.total

    def _pieces_count(self, start: int) -> int:
        return len(self._pieces(start)) if self.wrap else 1

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        page = self.current_page()
        base = self.rich_style
        if y >= len(page) or self.index is None:
            return Strip.blank(width, base)
        row = page[y]
        pieces = self._pieces(row.start)
        piece = pieces[row.piece] if row.piece < len(pieces) else Strip([])
        text_width = self.text_width
        if not self.wrap:
            piece = piece.crop(round(self.scroll_x), round(self.scroll_x) + text_width)
        piece = piece.extend_cell_length(text_width).crop(0, text_width)
        strip = Strip.join([self._gutter(row), piece])
        low, high = self.selection_range()
        if low <= row.y <= high:
            name = "artifact-lines--cursor" if row.y == self.cursor else "artifact-lines--selection"
            strip = strip.apply_style(self.get_component_rich_style(name, partial=True))
        return strip.apply_style(base)

    def _gutter(self, row: Row) -> Strip:
        width = self.gutter_width
        if row.piece:
            label, name = "", "artifact-lines--gutter"
        elif row.number is None:
            label, name = "·", "artifact-lines--gutter-unknown"
        else:
            label, name = f"{row.number + 1}", "artifact-lines--gutter"
        return _gutter_strip(label, width, self.get_component_rich_style(name))

    # ----------------------------------------------------------------- cursor and selection

    def selection_range(self) -> tuple[int, int]:
        if self.anchor is None:
            return self.cursor, self.cursor
        return min(self.anchor, self.cursor), max(self.anchor, self.cursor)

    def move_cursor(self, y: int, extend: bool = False) -> None:
        if self.total == 0:
            return
        if extend and self.anchor is None:
            self.anchor = self.cursor
        elif not extend:
            self.anchor = None
        self.cursor = max(0, min(y, self.total - 1))
        self.show_line(self.cursor)
        self.refresh()
        self.post_message(self.Changed())

    def show_line(self, y: int, place: str = "edge") -> None:
        """Scroll so virtual line y is on screen: at the nearest edge, or a third of the way down."""
        height = max(1, self.scrollable_content_region.height)
        if y >= self.total - 1 and self.total > height:
            self.scroll_to(y=self.max_scroll_y, animate=False)
            return
        visible = [row.y for row in self.current_page() if row.piece == 0]
        full = visible[:-1] if self.wrap and len(visible) > 1 else visible
        if visible and full and full[0] <= y <= full[-1] and place == "edge":
            return
        if place == "third":
            top = y - height // 3
        elif visible and y < visible[0]:
            top = y
        else:
            top = y - self._lines_above(y, height) if self.wrap else y - height + 1
        self.scroll_to(y=max(0, top), animate=False)

    def _lines_above(self, y: int, height: int) -> int:
        """How many whole lines above line y fit on screen together with it (wrap mode)."""
        assert self.virtual is not None and self.index is not None
        start, _ = self.virtual.locate(y)
        used, count = 0, 0
        while start is not None:
            used += self._pieces_count(start)
            if used > height:
                break
            count += 1
            if start == 0:
                break
            start = self.index.start_of_line_at(start - 1)
        return max(0, count - 1)

    def row_at(self, screen_y: int) -> Row | None:
        page = self.current_page()
        return page[screen_y] if 0 <= screen_y < len(page) else None

    def start_of(self, y: int) -> int | None:
        """Byte offset of virtual line y: from the page on screen when it is there."""
        for row in self.current_page():
            if row.y == y:
                return row.start
        return None if self.virtual is None else self.virtual.locate(y)[0]

    def selected_text(self) -> tuple[str, int, bool]:
        """The selected lines (or the cursor line), how many, and whether COPY_LIMIT cut them."""
        low, high = self.selection_range()
        start = self.start_of(low)
        if start is None or self.index is None:
            return "", 0, False
        end, count, line = start, 0, start
        while line is not None and count <= high - low:
            end = self.index.line_end(line)
            count += 1
            if end - start >= COPY_LIMIT:
                break
            line = self.index.next_start(line)
        cut = end - start > COPY_LIMIT
        data = self.index.read(start, min(end, start + COPY_LIMIT))
        return neutralize(data.decode("utf-8", errors="replace")), count, cut

    # ----------------------------------------------------------------- mouse

    def on_mouse_down(self, event: events.MouseDown) -> None:
        offset = event.get_content_offset(self)
        row = None if offset is None else self.row_at(offset.y)
        if row is None:
            return
        self.focus()
        self.move_cursor(row.y, extend=event.shift)
        self._dragging = True
        self.capture_mouse()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if not self._dragging:
            return
        row = self.row_at(event.get_content_offset_capture(self).y)
        if row is not None and row.y != self.cursor:
            self.move_cursor(row.y, extend=True)

    def on_mouse_up(self, event: events.MouseUp) -> None:
        if self._dragging:
            self._dragging = False
            self.release_mouse()

    def on_resize(self) -> None:
        self._strips.clear()
        if self.virtual is not None and self.index is not None:
            self._relayout(self.index.progress())


def _gutter_strip(label: str, width: int, style: Style) -> Strip:
    return Strip([Segment((label + " ").rjust(width)[-width:], style)], width)
