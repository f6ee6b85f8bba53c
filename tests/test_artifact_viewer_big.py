"""The viewer on a 500 MB file: on screen at once, the end before the index gets there, a needle
near the end found, line N shown, memory flat."""

from __future__ import annotations

import gc

import pytest
from textual.widgets import Input

from tests.viewer_harness import ViewerApp, generated_line, screen_rows, status_text, wait_for, write_big_file
from widgets.viewer.line_index import LineIndex

SIZE = 500 << 20


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "test-output.log"
    total = write_big_file(path, SIZE, needle_line=6_719_900)
    yield path, total
    path.unlink()


def split_row(row: str) -> tuple[str, str]:
    gutter, _, text = row.strip().partition(" ")
    return gutter, text


def expected(number: int) -> str:
    return generated_line(number).decode().rstrip("\n")


def rss_anon_bytes() -> int:
    """Anonymous resident memory: what the process allocated, not the file pages it maps."""
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no RssAnon in /proc/self/status")


async def test_first_screen_and_the_end_show_before_the_index_has_scanned_anything(big_file):
    path, total = big_file
    app = ViewerApp()
    async with app.run_test(size=(120, 40)) as pilot:
        index = LineIndex(path)
        index.pause()  # hold the scanner: everything below must work with nothing indexed
        app.viewer.open_index(index)
        await pilot.pause()
        rows = screen_rows(app.lines)
        assert [split_row(r) for r in rows[:3]] == [(str(n), expected(n)) for n in (1, 2, 3)]
        assert "indexing" in status_text(app)

        await pilot.press("G")
        await pilot.pause()
        rows = screen_rows(app.lines)
        height = len(rows)
        # the last screen, found backwards from EOF: consecutive lines ending with the last one,
        # numbers not claimed yet
        assert [split_row(r) for r in rows] == [("·", expected(n)) for n in range(total - height + 1, total + 1)]
        assert index.progress().scanned == 0

        index.resume()
        await wait_for(pilot, lambda: index.progress().complete, what="index complete")
        await pilot.pause()
        assert split_row(screen_rows(app.lines)[-1]) == (str(total), expected(total))
        assert f"{total:,} lines" in status_text(app)


async def test_partly_indexed_file_scrolls_anywhere_and_every_screen_is_consecutive_lines(big_file):
    path, total = big_file
    app = ViewerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        index = LineIndex(path)
        app.viewer.open_index(index)
        await wait_for(pilot, lambda: index.progress().scanned > SIZE // 10, what="10% indexed")
        index.pause()
        await pilot.pause()
        lines = app.lines
        for top in (0, lines.total // 3, lines.total // 2, lines.max_scroll_y - 3, lines.max_scroll_y):
            lines.scroll_to(y=top, animate=False)
            await pilot.pause()
            numbers = [int(split_row(r)[1][:9]) for r in screen_rows(lines)]
            assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
        assert int(split_row(screen_rows(lines)[-1])[1][:9]) == total - 1
        index.resume()


async def test_search_finds_a_needle_near_the_end_goto_shows_line_n_and_memory_stays_flat(big_file):
    path, total = big_file
    app = ViewerApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        gc.collect()
        before = rss_anon_bytes()
        app.viewer.open(path)
        await pilot.pause()
        assert split_row(screen_rows(app.lines)[0]) == ("1", expected(1))

        await pilot.press("slash")
        app.query_one(Input).value = "NEEDLE-7f3a"
        await pilot.press("enter")
        viewer = app.viewer
        await wait_for(pilot, lambda: viewer.search is not None and viewer.search.found and viewer.pending is None,
                       what="the needle")
        await pilot.pause()
        cursor_rows = [r for r, row in zip(screen_rows(app.lines), app.lines.current_page(), strict=False)
                       if row.y == app.lines.cursor]
        assert len(cursor_rows) == 1
        gutter, text = split_row(cursor_rows[0])
        assert gutter == "6719900" and "NEEDLE-7f3a found here" in text
        await wait_for(pilot, lambda: viewer.search.done, what="the match count")
        assert "1 match" in status_text(app)

        await pilot.press("colon")
        app.query_one(Input).value = "4321987"
        await pilot.press("enter")
        await wait_for(pilot, lambda: viewer.pending is None and app.lines.cursor == 4_321_986, what="goto")
        await pilot.pause()
        shown = {split_row(r)[0]: split_row(r)[1] for r in screen_rows(app.lines)}
        assert shown["4321987"] == expected(4_321_987)

        await pilot.press("G")
        await pilot.pause()
        assert split_row(screen_rows(app.lines)[-1]) == (str(total), expected(total))
        grown = rss_anon_bytes() - before
        assert grown < 40 << 20, f"anonymous memory grew by {grown >> 20} MB for a {SIZE >> 20} MB file"
