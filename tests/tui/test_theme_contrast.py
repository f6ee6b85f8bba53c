"""Every piece of text our widgets draw stays readable in a dark and a light theme.

Measured as the WCAG contrast ratio between each text segment's colour and its background on the
composited screen. The floor (2.5) is below the 3.0 of WCAG's large-text rule because Textual's own
light theme draws $text-warning at 3.0 on its surface; what it catches is text drawn in a colour
resolved for the wrong background (we had line numbers at 1.2 in the light theme)."""

from __future__ import annotations

import pytest

from tests.tui.helpers import screen_segments
from tests.tui.session_data import bash_display, edit_request, stats_diff
from tests.tui.test_approval import DialogApp
from tests.tui.test_diff_view import DiffApp
from tests.tui.test_output_view import OutputApp
from tests.tui.test_snapshots import MainScreenApp
from tests.tui.test_tool_table import TableApp
from widgets.output_view import OutputView

FLOOR = 2.5
DECORATION = set("▁▂▃▄▅▆▇█▔▊▎▏╸╺━─│╭╮╰╯▀")


def luminance(rgb: tuple[int, int, int]) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


async def load_output(pilot) -> None:
    pilot.app.query_one(OutputView).load_display(bash_display())


async def open_dialog(pilot) -> None:
    pilot.app.open_dialog()


CASES = {
    "tool table": (TableApp, (110, 12), None),
    "unified diff": (lambda: DiffApp(stats_diff()), (110, 22), None),
    "split diff": (lambda: DiffApp(stats_diff(), split=True), (130, 22), None),
    "output view": (OutputApp, (100, 18), load_output),
    "approval dialog": (lambda: DialogApp(edit_request(), ring_bell=False), (110, 36), open_dialog),
    "main screen": (MainScreenApp, (160, 48), None),
}


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
@pytest.mark.parametrize("case", list(CASES))
async def test_text_is_readable(case, theme):
    make, size, before = CASES[case]
    app = make()
    async with app.run_test(size=size) as pilot:
        app.theme = theme
        if before is not None:
            await before(pilot)
        await pilot.pause()
        worst = []
        for line in screen_segments(app):
            for segment in line:
                text = segment.text.strip()
                style = segment.style
                if not text or set(text) <= DECORATION or style is None or not style.color or not style.bgcolor:
                    continue
                ratio = contrast(style.color.get_truecolor(), style.bgcolor.get_truecolor())
                worst.append((ratio, text))
        assert worst, "nothing measured"
        ratio, text = min(worst)
        assert ratio >= FLOOR, f"{text!r} has contrast {ratio:.2f} in {theme}"
