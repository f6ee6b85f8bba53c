"""One line of command output to Segments, fast: the line carries SGR colour sequences and nothing
else (the rest was neutralised). Each distinct sequence is decoded once, by Rich's own decoder, and
cached with the style it leads to, so a flood of coloured lines costs a split and a few lookups per
line instead of a full ANSI parse."""

from __future__ import annotations

import re
from functools import lru_cache

from rich.ansi import AnsiDecoder
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style

_SGR = re.compile(r"\x1b\[([0-9;:]*)m")
_CACHE_LIMIT = 4096


@lru_cache(maxsize=_CACHE_LIMIT)
def _after(style: Style, params: str) -> Style:
    """The style in force after `ESC [ params m`, from `style` (Rich's decoder decides)."""
    decoder = AnsiDecoder()
    decoder.style = style
    decoder.decode_line(f"\x1b[{params}m")
    return decoder.style


@lru_cache(maxsize=_CACHE_LIMIT)
def _combined(base: Style, style: Style) -> Style:
    return base + style if style else base


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
