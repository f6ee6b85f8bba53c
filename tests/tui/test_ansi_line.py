"""The fast SGR line renderer draws exactly what Rich's ANSI decoder draws."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.style import Style
from rich.text import Text

from widgets.text.ansi_line import sgr_segments

SGR = st.sampled_from(["\x1b[0m", "\x1b[m", "\x1b[1m", "\x1b[31m", "\x1b[1;32m", "\x1b[38;5;208m",
                       "\x1b[48;2;10;20;30m", "\x1b[4;7m", "\x1b[22m", "\x1b[39;49m", "\x1b[38:5:1m", "\x1b[;1m"])
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=8)
BASE = Style(color="grey70", bgcolor="grey11")


def rich_render(line: str) -> list[tuple[str, Style]]:
    """Rich's own decoding, drawn on BASE."""
    text = Text.from_ansi(line, no_wrap=True, end="")
    return [(s.text, BASE + s.style if s.style else BASE) for s in text.render(Console(width=500), end="") if s.text]


@settings(max_examples=300)
@given(st.lists(st.one_of(SGR, TEXT), max_size=12))
def test_same_segments_and_width_as_rich(parts):
    line = "".join(parts)
    segments, width = sgr_segments(line, BASE)
    ours = [(s.text, s.style) for s in segments]
    assert "".join(t for t, _ in ours) == "".join(t for t, _ in rich_render(line))
    # the same style at every character
    def per_char(pairs):
        return [style for text, style in pairs for _ in text]
    assert per_char(ours) == per_char(rich_render(line))
    assert width == Text.from_ansi(line).cell_len
