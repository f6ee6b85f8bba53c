"""The artifact viewer as a user drives it: follow a growing file, search and step through
matches, go to a line, select and copy, wrap, and untrusted bytes shown inert."""

from __future__ import annotations

import threading
import time

from rich.color import Color
from textual.widgets import Input

from tests.viewer_harness import ViewerApp, screen_rows, status_text, wait_for
from widgets.text.external_open import external_command
from widgets.viewer.artifact_lines import ArtifactLines


def numbered(count: int, marks: dict[int, str] | None = None) -> bytes:
    marks = marks or {}
    return b"".join((marks.get(i, f"line {i}")).encode() + b"\n" for i in range(1, count + 1))


async def open_viewer(pilot, app: ViewerApp, path, follow: bool = False) -> None:
    app.viewer.open(path, follow=follow)
    await wait_for(pilot, lambda: app.lines.index is not None and app.lines.index.progress().complete)
    await pilot.pause()


async def submit(pilot, app: ViewerApp, key: str, value: str) -> None:
    await pilot.press(key)
    app.query_one(Input).value = value
    await pilot.press("enter")
    await pilot.pause()


def cursor_text(app: ViewerApp) -> str:
    lines = app.lines
    return next(text for text, row in zip(screen_rows(lines), lines.current_page(), strict=False)
                if row.y == lines.cursor)


async def test_follow_mode_shows_lines_appended_while_the_file_is_open(tmp_path):
    path = tmp_path / "running.log"
    path.write_bytes(numbered(100))
    app = ViewerApp()
    async with app.run_test(size=(80, 20)) as pilot:
        await open_viewer(pilot, app, path)
        await pilot.press("f")
        await pilot.pause()
        assert screen_rows(app.lines)[-1].endswith("line 100")
        assert "[follow]" in status_text(app)

        def append() -> None:
            with open(path, "ab") as handle:
                for i in range(101, 301):
                    handle.write(b"line %d\n" % i)
                    handle.flush()
                    time.sleep(0.002)

        writer = threading.Thread(target=append)
        writer.start()
        await wait_for(pilot, lambda: screen_rows(app.lines)[-1].endswith("line 300"), what="appended lines")
        writer.join()
        await wait_for(pilot, lambda: "300 lines" in status_text(app), what="the index to catch up")
        assert screen_rows(app.lines)[-1].split() == ["300", "line", "300"]
        assert app.lines.cursor == 299


async def test_without_follow_a_growing_file_keeps_the_view_where_it_is(tmp_path):
    path = tmp_path / "running.log"
    path.write_bytes(numbered(50))
    app = ViewerApp()
    async with app.run_test(size=(80, 20)) as pilot:
        await open_viewer(pilot, app, path)
        with open(path, "ab") as handle:
            handle.write(numbered(80)[len(numbered(50)):])
        await wait_for(pilot, lambda: app.lines.total == 80, what="growth")
        await pilot.pause()
        assert screen_rows(app.lines)[0].split() == ["1", "line", "1"]


async def test_search_steps_through_matches_forwards_and_backwards_and_wraps(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(numbered(300, {10: "ERROR one", 150: "ERROR two", 290: "ERROR three"}))
    app = ViewerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_viewer(pilot, app, path)
        viewer = app.viewer
        await submit(pilot, app, "slash", "ERROR")
        await wait_for(pilot, lambda: viewer.search.done and viewer.pending is None)
        await pilot.pause()
        assert cursor_text(app).split() == ["10", "ERROR", "one"]
        assert "3 matches" in status_text(app)
        # the match is highlighted: its cells carry the match style, the rest of the line does not
        assert any(seg.text == "ERROR" and seg.style.bgcolor is not None
                   for seg in app.lines.render_line(app.lines.cursor - round(app.lines.scroll_y)))

        visited = []
        for key in ("n", "n", "n", "N"):
            await pilot.press(key)
            await wait_for(pilot, lambda: viewer.search.found is not None and viewer.pending is None)
            await pilot.pause()
            visited.append(cursor_text(app).split()[0])
        assert visited == ["150", "290", "10", "290"]
        assert "wrapped" in status_text(app)

        await submit(pilot, app, "question_mark", "ERROR t")
        await wait_for(pilot, lambda: viewer.search.found is not None and viewer.pending is None)
        await pilot.pause()
        assert cursor_text(app).split()[:2] == ["150", "ERROR"]  # backwards from line 290


async def test_search_says_when_nothing_matches_or_the_pattern_is_bad(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(numbered(20))
    app = ViewerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_viewer(pilot, app, path)
        await submit(pilot, app, "slash", "absent")
        await wait_for(pilot, lambda: app.viewer.search.done)
        assert "no match" in status_text(app) and app.lines.cursor == 0
        await submit(pilot, app, "slash", "(unclosed")
        assert "bad pattern" in status_text(app)


async def test_goto_line_and_past_the_end(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(numbered(500))
    app = ViewerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_viewer(pilot, app, path)
        await submit(pilot, app, "colon", "321")
        assert cursor_text(app).split() == ["321", "line", "321"]
        await submit(pilot, app, "colon", "9999")
        assert cursor_text(app).split() == ["500", "line", "500"]
        assert "the file has 500 lines" in status_text(app)
        await pilot.press("g")
        assert screen_rows(app.lines)[0].split() == ["1", "line", "1"] and app.lines.cursor == 0


async def test_selected_lines_are_copied_to_the_clipboard(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(numbered(40, {5: "five \x1b]52;c;ZXZpbA==\x07with an OSC"}))
    app = ViewerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_viewer(pilot, app, path)
        app.lines.focus()
        await pilot.press("down", "down", "shift+down", "shift+down")
        await pilot.pause()
        assert "3 selected" in status_text(app)
        await pilot.press("c")
        assert app.clipboard == "line 3\nline 4\nfive with an OSC"
        assert "copied 3 lines" in status_text(app)

        # with the mouse: click a row, shift+click another
        await pilot.click(ArtifactLines, offset=(10, 7))
        await pilot.click(ArtifactLines, offset=(10, 9), shift=True)
        await pilot.press("c")
        assert app.clipboard == "line 8\nline 9\nline 10"


async def test_untrusted_bytes_are_shown_inert_and_a_huge_line_is_cut_with_a_notice(tmp_path):
    path = tmp_path / "hostile.txt"
    path.write_bytes(b"[bold]not markup[/] [@click=app.quit]x[/]\n"
                     b"\x1b]0;title\x07\x1b[2Jcleared? \x1b[31mred\x1b[0m\tafter tab\n"
                     b"\xff\xfe invalid \xc3\x28 utf8\n"
                     + b"y" * (10 << 20) + b"\nlast\n")
    app = ViewerApp()
    async with app.run_test(size=(100, 20)) as pilot:
        await open_viewer(pilot, app, path)
        rows = screen_rows(app.lines)
        assert rows[0].split(None, 1)[1] == "[bold]not markup[/] [@click=app.quit]x[/]"
        assert rows[1].split(None, 1)[1] == "cleared? red    after tab"
        assert rows[2].split(None, 1)[1] == "\ufffd\ufffd invalid \ufffd( utf8"
        assert rows[3].split(None, 1)[1] == "y" * app.lines.text_width
        assert rows[4].split() == ["5", "last"]
        assert not any("\x1b" in row or "\x07" in row for row in rows)
        red = [seg for seg in app.lines.render_line(1) if seg.text == "red"]
        assert red and red[0].style.color.number == Color.parse("red").number == 1

        await pilot.press("w")
        await pilot.pause()
        rows = screen_rows(app.lines)
        notice = [row for row in rows if "more bytes)" in row]
        assert len(notice) == 1 and notice[0].strip().startswith("… (10,")
        assert rows.index(notice[0]) < [row.split() for row in rows].index(["5", "last"])
        assert "[wrap]" in status_text(app)


async def test_opening_a_missing_file_says_so(tmp_path):
    app = ViewerApp()
    async with app.run_test(size=(80, 10)) as pilot:
        assert app.viewer.open(tmp_path / "gone.txt") is False
        await pilot.pause()
        assert "cannot open" in status_text(app)
        await pilot.press("G", "slash")  # keys on an empty viewer do nothing harmful


async def test_open_in_pager_reports_when_the_terminal_cannot_be_handed_over(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(numbered(5))
    app = ViewerApp()
    async with app.run_test(size=(80, 10)) as pilot:
        await open_viewer(pilot, app, path)
        await pilot.press("o")
        await pilot.pause()
        assert "cannot hand the screen" in status_text(app)


def test_external_command_uses_the_environment_and_the_line():
    assert external_command("pager", "/a b.txt", 12, {"PAGER": "less -R"}) == ["less", "-R", "+12", "/a b.txt"]
    assert external_command("pager", "/f", None, {}) == ["less", "/f"]
    assert external_command("editor", "/f", 3, {"EDITOR": "code --wait"}) == ["code", "--wait", "/f"]
    assert external_command("editor", "/f", 3, {"VISUAL": "nvim", "EDITOR": "nano"}) == ["nvim", "+3", "/f"]
    assert external_command("editor", "/f", 3, {"EDITOR": "  "}) == ["vi", "+3", "/f"]


async def test_with_wrap_every_line_of_a_short_file_of_long_lines_can_be_reached(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_bytes(b"".join(b"%d " % i + b"w" * 300 + b"\n" for i in range(1, 11)))
    app = ViewerApp()
    async with app.run_test(size=(80, 20)) as pilot:
        await open_viewer(pilot, app, path)
        app.lines.focus()
        await pilot.press("w")
        await pilot.pause()
        rows = screen_rows(app.lines)
        assert rows[0].split()[:2] == ["1", "1"] and rows[1].strip().startswith("w")  # wrapped
        await pilot.press("G")
        await pilot.pause()
        rows = [row for row in screen_rows(app.lines) if row.strip()]
        assert rows[-1].strip().endswith("w") and any(r.split()[:2] == ["10", "10"] for r in rows)
        assert app.lines.cursor == 9
        for _ in range(9):
            await pilot.press("up")
        await pilot.pause()
        assert screen_rows(app.lines)[0].split()[:2] == ["1", "1"]


async def test_after_scrolling_the_view_the_cursor_starts_from_the_screen(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(numbered(1000))
    app = ViewerApp()
    async with app.run_test(size=(80, 20)) as pilot:
        await open_viewer(pilot, app, path)
        app.lines.focus()
        app.lines.scroll_to(y=40, animate=False)  # what the wheel or a scrollbar drag does
        await pilot.pause()
        top = round(app.lines.scroll_y)
        assert top > 20 and app.lines.cursor == 0
        await pilot.press("down")
        assert app.lines.cursor == top and round(app.lines.scroll_y) == top
