"""Which line sits on which screen row of the artifact viewer, and how one line becomes cells.

The viewer scrolls over *virtual lines*. Where the index has been, virtual line y is line y. While
the scan is still running, the rest of the file is laid out by estimate: the lines after the
indexed part are counted from the average line length so far, the very last lines are found
backwards from EOF (so the end of an 800 MB log is on screen at once), and a position in between
maps to a byte offset by proportion. Once the tail found backwards reaches the indexed part, or
the scan ends, every number is exact again. A page is built from one located line and then walks
the file line by line, so the rows of one screen are always consecutive lines.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from tui_app.runtime.results.sanitize import neutralize
from widgets.viewer.line_index import DecodedLine, IndexProgress, LineIndex
from widgets.viewer.line_search import Query

TAB_SIZE = 4
TAIL_LINES = 256

#: how many screen rows the line starting at an offset takes (1 without wrap)
PieceCounter = Callable[[int], int]


@dataclass(frozen=True)
class Row:
    """One screen row: virtual line `y`, the line's byte offset, its number when known (0-based)
    and which wrapped piece of the line it shows."""

    y: int
    start: int
    number: int | None
    piece: int = 0


class VirtualLines:
    """Maps virtual line numbers to byte offsets for one consistent snapshot of the index."""

    def __init__(self, index: LineIndex, tail_lines: int = TAIL_LINES) -> None:
        self.index = index
        self.tail_lines = tail_lines
        self._tail: list[int] = []
        self._tail_key: tuple[int, int] | None = None
        self.update(index.progress())

    def update(self, progress: IndexProgress, viewport_height: int = 0) -> None:
        self.progress = progress
        p = progress
        self.exact = p.complete
        self.zone: list[int] = []  # starts of the lines laid out from the end
        if p.size == 0:
            self.total = 0
            return
        if p.complete:
            count = self.index.line_count
            self.total = count if count is not None else p.newlines + 1
            return
        wanted = max(self.tail_lines, 3 * viewport_height)
        if self._tail_key != (p.size, wanted):
            self._tail = self.index.tail_starts(wanted)
            self._tail_key = (p.size, wanted)
        last_known = self.index.line_start(p.newlines)
        last_known = 0 if last_known is None else last_known
        if self._tail and self._tail[0] <= last_known:
            # the lines found from the end reach back into the indexed part: all numbers known
            self.zone = [s for s in self._tail if s > last_known]
            self.exact = True
            self.total = p.newlines + 1 + len(self.zone)
            return
        self.zone = self._tail
        average = self.index.average_line_bytes
        estimate = math.ceil((p.size - p.scanned) / max(average, 1.0))
        self.total = p.newlines + 1 + max(estimate, len(self.zone))

    def locate(self, y: int) -> tuple[int | None, int | None]:
        """Byte offset and line number (None when not known yet) of virtual line y."""
        p = self.progress
        if self.total == 0 or y < 0:
            return None, None
        y = min(y, self.total - 1)
        if y <= p.newlines:
            return self.index.line_start(y), y
        zone_top = self.total - len(self.zone)
        if y >= zone_top:
            return self.zone[y - zone_top], (y if self.exact else None)
        # in between: a proportional byte offset, then the next line start after it
        head_end = p.scanned
        tail_start = self.zone[0] if self.zone else p.size
        span = max(1, zone_top - (p.newlines + 1))
        offset = head_end + (tail_start - head_end) * (y - p.newlines - 1) // span
        return self.index.start_at_or_after(offset), None

    def page(self, top: int, height: int, pieces_of: PieceCounter, at_end: bool = False) -> list[Row]:
        """The rows of a screen whose first virtual line is `top`. At the end of the file the page
        is built upwards from the last line, so the last line is always on the last row."""
        if height <= 0 or self.total == 0:
            return []
        rows = [] if at_end else self._page_down(top, height, pieces_of)
        if len(rows) < height:
            up = self._page_up(height, pieces_of)
            if len(up) > len(rows):
                return up
        return rows

    def _page_down(self, top: int, height: int, pieces_of: PieceCounter) -> list[Row]:
        rows: list[Row] = []
        start, number = self.locate(top)
        y = top
        while start is not None and len(rows) < height:
            for piece in range(pieces_of(start)):
                rows.append(Row(y, start, number, piece))
                if len(rows) == height:
                    break
            y += 1
            number = None if number is None else number + 1
            start = self.index.next_start(start)
        return rows

    def _page_up(self, height: int, pieces_of: PieceCounter) -> list[Row]:
        last = self.total - 1
        start, number = self.locate(last)
        rows: list[Row] = []
        y = last
        while start is not None and len(rows) < height:
            line_rows = [Row(y, start, number, piece) for piece in range(pieces_of(start))]
            rows[:0] = line_rows[-(height - len(rows)):]
            if start == 0:
                break
            start = self.index.start_of_line_at(start - 1)
            y -= 1
            number = None if number is None else number - 1
        return rows


def line_text(line: DecodedLine, query: Query | None, match_style: Style | str) -> Text:
    """A line of untrusted output as styled text: control sequences neutralised (colours kept as
    styles), tabs expanded, search matches highlighted."""
    clean = neutralize(line.text, keep_sgr=True)
    text = Text.from_ansi(clean, end="") if "\x1b" in clean else Text(clean, end="")
    if "\t" in text.plain:
        text.expand_tabs(TAB_SIZE)
    if query is not None:
        for match in query.display.finditer(text.plain):
            if match.end() > match.start():
                text.stylize(match_style, match.start(), match.end())
    return text


def notice(hidden_bytes: int, style: Style | str) -> Text:
    return Text(f" … ({hidden_bytes:,} more bytes)", style=style, end="")


def text_strip(text: Text, console: Console) -> Strip:
    return Strip(list(text.render(console)), text.cell_len)


def line_strips(line: DecodedLine, text: Text, console: Console, wrap_width: int, max_rows: int,
                notice_style: Style | str) -> list[Strip]:
    """The rows of one line: one strip without wrap (the notice of a cut line at its end), or the
    line hard-wrapped at `wrap_width` cells, at most `max_rows` rows, the notice on a row of its own."""
    strip = text_strip(text, console)
    if wrap_width <= 0:
        if line.more_bytes:
            strip = Strip.join([strip, text_strip(notice(line.more_bytes, notice_style), console)])
        return [strip]
    max_rows = max(1, max_rows)
    if strip.cell_length <= wrap_width * max_rows and not line.more_bytes:
        return [strip] if strip.cell_length <= wrap_width else list(strip.divide(_cuts(strip, wrap_width)))
    keep = max(1, max_rows - 1)
    shown_cells = min(strip.cell_length, wrap_width * keep)
    pieces = list(strip.divide(_cuts(strip, wrap_width)))[:keep]
    shown_bytes = len(text.plain[:shown_cells].encode("utf-8", errors="replace"))
    hidden = max(0, line.end - line.start - shown_bytes)
    return [*pieces, text_strip(notice(hidden, notice_style), console)] if hidden else pieces


def _cuts(strip: Strip, width: int) -> list[int]:
    return [*range(width, strip.cell_length, width), strip.cell_length]
