"""One line of command output to Segments, fast: the line carries SGR colour sequences and nothing
else (the rest was neutralised). Each distinct sequence is decoded once, by Rich's own decoder, and
cached with the style it leads to, so a flood of coloured lines costs a split and a few lookups per
line instead of a full ANSI parse."""

from __future__ import annotations

import re

from rich.ansi import AnsiDecoder
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style

_SGR = re.compile(r"\x1b\[([0-9;:]*)m")
_CACHE_LIMIT = 4096
_after_sgr: dict[tuple[Style, str], Style] = {}
_on_base: dict[tuple[Style, Style], Style] = {}


def _after(style: Style, params: str) -> Style:
    """The style in force after `ESC [ params m`, from `style` (Rich's decoder decides)."""
    key = (style, params)
    found = _after_sgr.get(key)
    if found is None:
        if len(_after_sgr) > _CACHE_LIMIT:
            _after_sgr.clear()
        decoder = AnsiDecoder()
        decoder.style = style
        decoder.decode_line(f"\x1b[{params}m")
        found = _after_sgr[key] = decoder.style
    return found


def _combined(base: Style, style: Style) -> Style:
    key = (base, style)
    found = _on_base.get(key)
    if found is None:
        if len(_on_base) > _CACHE_LIMIT:
            _on_base.clear()
        found = _on_base[key] = base + style if style else base
    return found


def sgr_segments(line: str, base: Style) -> tuple[list[Segment], int]:
    """(segments, cell width) of `line` drawn on `base`; what `Text.from_ansi(line, style=base)`
    renders, for lines without carriage returns."""
    parts = _SGR.split(line)
    style = Style.null()
    segments: list[Segment] = []
    width = 0
    for i, part in enumerate(parts):
        if i % 2:
            style = _after(style, part)
        elif part:
            segments.append(Segment(part, _combined(base, style)))
            width += len(part) if part.isascii() else cell_len(part)
    return segments, width
