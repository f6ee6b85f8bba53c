"""Live shell output: colours kept, controls gone, stderr marked, follow mode, bounded memory."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tests.tui.helpers import control_characters, screen_lines, styled_segments
from tests.tui.session_data import bash_display
from widgets.output_view import OutputView


class OutputApp(App[None]):
    def __init__(self, max_lines: int = 50_000) -> None:
        super().__init__()
        self.max_lines = max_lines

    def compose(self) -> ComposeResult:
        yield OutputView(max_lines=self.max_lines)

    def on_mount(self) -> None:
        self.query_one(OutputView).focus()


async def test_a_finished_command_shows_exit_code_time_and_every_line():
    app = OutputApp()
    async with app.run_test(size=(100, 20)) as pilot:
        view = app.query_one(OutputView)
        view.load_display(bash_display())
        await pilot.pause()
        lines = screen_lines(app)
        assert lines[0].startswith(" $ python -m pytest -q  exit 1 · 1.8s  12 lines")
        assert "E       AssertionError: 3 != 2.5" in "\n".join(lines)
        assert any(line.startswith("▌ warning: PYTHONHASHSEED") for line in lines)
        assert not any(line.startswith("▌") and "AssertionError" in line for line in lines)


async def test_ansi_colours_become_styles_and_span_lines():
    app = OutputApp()
    async with app.run_test(size=(60, 8)) as pilot:
        view = app.query_one(OutputView)
        view.write("plain \x1b[31mred starts")
        view.write(" here\nstill red\x1b[0m back\n")
        await pilot.pause()
        assert view.plain_lines() == ["plain red starts here", "still red back"]
        plain = styled_segments(app, "plain ")[0].style.color
        red = styled_segments(app, "red starts")[0].style.color
        assert red != plain
        assert styled_segments(app, "still red")[0].style.color == red
        assert styled_segments(app, " back")[0].style.color == plain


async def test_an_escape_sequence_split_across_chunks_is_not_shown_as_text():
    app = OutputApp()
    async with app.run_test(size=(60, 8)) as pilot:
        view = app.query_one(OutputView)
        view.write("a\x1b[3")
        view.write("2mgreen\x1b[0m\n")
        view.write("title\x1b]0;pwn")
        view.write("ed\x07 ok\n")
        await pilot.pause()
        assert view.plain_lines() == ["agreen", "title ok"]
        assert control_characters(app) == []


async def test_cursor_moves_clipboard_writes_and_c1_controls_are_removed():
    app = OutputApp()
    async with app.run_test(size=(80, 8)) as pilot:
        view = app.query_one(OutputView)
        view.write("x\x1b[2J\x1b[10;1H\x1b]52;c;SGk=\x07y\x9b1m\x85z\r\n\ttab\n")
        await pilot.pause()
        assert view.plain_lines() == ["xyz", "        tab"]
        assert control_characters(app) == []


async def test_follow_mode_keeps_the_end_in_view_until_the_user_scrolls_up():
    app = OutputApp()
    async with app.run_test(size=(60, 10)) as pilot:
        view = app.query_one(OutputView)
        view.write("".join(f"line {i}\n" for i in range(100)))
        await pilot.pause()
        assert screen_lines(app)[-1].strip() == "line 99"
        await pilot.press("pageup")
        await pilot.pause(0.3)
        assert not view.follow
        shown = screen_lines(app)[1:]
        view.write("".join(f"more {i}\n" for i in range(50)))
        await pilot.pause()
        # the same lines stay in view (only the scrollbar, in the last column, moves)
        assert [line[:-1] for line in screen_lines(app)[1:]] == [line[:-1] for line in shown]
        assert "paused (End follows)" in screen_lines(app)[0]
        await pilot.press("end")
        await pilot.pause()
        assert view.follow
        assert screen_lines(app)[-1].strip() == "more 49"
        view.write("last\n")
        await pilot.pause()
        assert screen_lines(app)[-1].strip() == "last"


async def test_memory_is_bounded_and_the_header_says_what_was_dropped():
    app = OutputApp(max_lines=1000)
    async with app.run_test(size=(80, 10)) as pilot:
        view = app.query_one(OutputView)
        for chunk in range(50):
            view.write("".join(f"l{chunk * 100 + i}\n" for i in range(100)))
        await pilot.pause()
        assert view.line_count <= 1100
        assert view.dropped_lines + view.line_count == 5000
        assert view.plain_lines()[-1] == "l4999"
        assert f"{view.dropped_lines:,} earlier lines not kept" in screen_lines(app)[0]
        assert screen_lines(app)[-1].strip() == "l4999"


async def test_a_huge_single_line_is_cut_with_a_note():
    app = OutputApp()
    async with app.run_test(size=(80, 6)) as pilot:
        view = app.query_one(OutputView)
        view.write("x" * 50_000 + "\n")
        await pilot.pause()
        assert view.plain_lines()[0].endswith("… (40,000 more characters)")


async def test_stdout_and_stderr_partial_lines_do_not_merge():
    app = OutputApp()
    async with app.run_test(size=(80, 8)) as pilot:
        view = app.query_one(OutputView)
        view.write("out: ", "stdout")
        view.write("err!\n", "stderr")
        view.write("done\n", "stdout")
        await pilot.pause()
        assert view.plain_lines() == ["out: done", "err!"]
        lines = screen_lines(app)
        assert lines[2].startswith("▌ err!") and lines[1].startswith("  out: done")


async def test_running_header_then_finished_states():
    app = OutputApp()
    async with app.run_test(size=(120, 6)) as pilot:
        view = app.query_one(OutputView)
        view.start("sleep 100")
        await pilot.pause()
        assert "▶ running" in screen_lines(app)[0]
        view.finish(None, 120_000, timed_out=True, artifact="vigil-artifact://s/a9")
        await pilot.pause()
        assert "timed out · 2m00s" in screen_lines(app)[0]
        assert "full output: vigil-artifact://s/a9" in screen_lines(app)[0]
