"""Helpers for Line API widgets: Content → Strip with theme-aware styles, cell-exact fitting,
and the stylesheet of a widget loaded from `styles/`."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from textual.content import Content
from textual.geometry import Size
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget

STYLES_DIR = Path(__file__).resolve().parents[2] / "styles"


@cache
def load_css(name: str) -> str:
    """The text of `styles/<name>.tcss`, used as a widget's DEFAULT_CSS so a widget carries its
    look wherever it is mounted."""
    return (STYLES_DIR / f"{name}.tcss").read_text(encoding="utf-8")


def content_segments(content: Content, base: Style) -> list[Segment]:
    """Segments of one line of Content on top of `base` (which must carry the real background:
    translucent colours such as `on $error 20%` blend against it)."""
    return [Segment(text, style.rich_style) for text, style in content.render(base, end="")]


def content_strip(content: Content, base: Style, width: int | None = None) -> Strip:
    strip = Strip(content_segments(content, base), content.cell_length)
    if width is not None:
        strip = strip.crop_extend(0, width, base.rich_style)
    return strip


def fit(text: str, width: int, align: str = "left", keep_end: bool = False) -> str:
    """`text` padded or cut to exactly `width` cells; a cut ends in `…` (or starts with it when
    `keep_end`: the file name at the end of a path matters most)."""
    if width <= 0:
        return ""
    length = cell_len(text)
    if length > width:
        if keep_end:
            tail = text[::-1]
            return "…" + set_cell_size(tail, width - 1)[::-1]
        return set_cell_size(text, width - 1) + "…"
    pad = " " * (width - length)
    return pad + text if align == "right" else text + pad


def set_virtual_size(widget: Widget, size: Size) -> None:
    """Grow or shrink a Line API widget's scrollable area without a relayout of the screen.

    Assigning `virtual_size` asks for a layout of the whole screen, which a flood of output would
    ask for on every chunk (every widget on screen repainted, ~100 times a second). A widget's own
    size never depends on its virtual size; only its scrollbars do, so those are updated here and
    a layout is asked for only when a scrollbar appears or disappears.
    """
    if size == widget.virtual_size:
        return
    scrollbars = (widget.show_horizontal_scrollbar, widget.show_vertical_scrollbar)
    widget.set_reactive(Widget.virtual_size, size)
    widget._scroll_update(size)
    if (widget.show_horizontal_scrollbar, widget.show_vertical_scrollbar) != scrollbars:
        widget.refresh(layout=True)
    else:
        widget.refresh()
