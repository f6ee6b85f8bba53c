"""The detail pane of the selected call: the right tab, live output, the exact result, the timeline."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tests.tui.helpers import screen_text
from tests.tui.session_data import CWD, T0, session_events
from tui_app.runtime.events import FileChangedExternally, ToolCallProgress
from widgets.detail import DetailPane
from widgets.output_view import OutputView


class DetailApp(App[None]):
    def compose(self) -> ComposeResult:
        yield DetailPane(cwd=CWD)

    def on_mount(self) -> None:
        pane = self.query_one(DetailPane)
        for event in session_events():
            pane.apply(event)


async def test_a_finished_command_opens_on_its_output():
    app = DetailApp()
    async with app.run_test(size=(100, 24)) as pilot:
        pane = app.query_one(DetailPane)
        pane.show("toolu_04")
        await pilot.pause()
        assert pane.active_tab == "output"
        text = screen_text(app)
        assert "Bash  python -m pytest -q  · done" in text
        assert "exit 1 · 1.8s" in text and "1 failed, 3 passed" in text


async def test_an_edit_awaiting_approval_opens_on_its_diff():
    app = DetailApp()
    async with app.run_test(size=(100, 24)) as pilot:
        pane = app.query_one(DetailPane)
        pane.show("toolu_05")
        await pilot.pause()
        assert pane.active_tab == "diff"
        text = screen_text(app)
        assert "Edit  calc/stats.py  · awaiting approval" in text
        assert "+     return (ordered[middle - 1] + ordered[middle]) / 2" in text


async def test_input_result_and_events_tabs():
    app = DetailApp()
    async with app.run_test(size=(110, 24)) as pilot:
        pane = app.query_one(DetailPane)
        pane.show("toolu_04")
        await pilot.press("3")
        assert '"command": "python -m pytest -q"' in screen_text(app)
        pane.action_tab("result")
        await pilot.pause()
        text = screen_text(app)
        assert "artifact: original 48,211 bytes, sent 30,000 bytes to the model" in text
        assert "vigil-artifact://s-demo/a1" in text
        pane.action_tab("events")
        await pilot.pause()
        text = screen_text(app)
        assert "requested" in text and "started" in text and "timeout 2m00s" in text
        assert "permission wait 0ms   exec 1.8s" in text


async def test_live_output_streams_into_the_shown_call_only():
    app = DetailApp()
    async with app.run_test(size=(100, 20)) as pilot:
        pane = app.query_one(DetailPane)
        pane.show("toolu_06")
        await pilot.pause()
        assert pane.active_tab == "output"
        output = pane.query_one(OutputView)
        assert output.plain_lines() == ["> build", "> vite build --watch"]
        pane.apply(ToolCallProgress(call_id="toolu_06", kind="output", stream="stderr", text="warn: slow\n"))
        pane.apply(ToolCallProgress(call_id="toolu_04", kind="output", stream="stdout", text="other call\n"))
        await pilot.pause()
        assert output.plain_lines() == ["> build", "> vite build --watch", "warn: slow"]
        assert "▌ warn: slow" in screen_text(app)


async def test_switching_calls_replays_the_kept_output():
    app = DetailApp()
    async with app.run_test(size=(100, 20)) as pilot:
        pane = app.query_one(DetailPane)
        pane.apply(ToolCallProgress(call_id="toolu_06", kind="output", stream="stdout", text="more\n"))
        pane.show("toolu_04")
        pane.show("toolu_06")
        await pilot.pause()
        assert pane.query_one(OutputView).plain_lines() == ["> build", "> vite build --watch", "more"]


async def test_a_file_changed_outside_vigil_is_flagged():
    app = DetailApp()
    async with app.run_test(size=(100, 20)) as pilot:
        pane = app.query_one(DetailPane)
        pane.show("toolu_05")
        await pilot.pause()
        assert "changed outside Vigil" not in screen_text(app)
        pane.apply(FileChangedExternally(path=f"{CWD}/calc/stats.py", change="modified", ts=T0 + 8))
        await pilot.pause()
        assert "⚠ file changed outside Vigil (modified): calc/stats.py" in screen_text(app)
        pane.show("toolu_01")
        await pilot.pause()
        assert "changed outside Vigil" not in screen_text(app)


async def test_a_call_without_a_diff_says_so():
    app = DetailApp()
    async with app.run_test(size=(100, 20)) as pilot:
        pane = app.query_one(DetailPane)
        pane.show("toolu_07")
        pane.action_tab("diff")
        await pilot.pause()
        assert "No diff for this call." in screen_text(app)


async def test_a_command_that_never_ran_opens_on_its_result_and_says_so_in_output():
    app = DetailApp()
    async with app.run_test(size=(110, 24)) as pilot:
        pane = app.query_one(DetailPane)
        pane.show("toolu_08")  # cancelled by the turn stop before it started
        await pilot.pause()
        assert pane.active_tab == "result"
        assert "Tool cancelled because a previous tool result requested a turn stop." in screen_text(app)
        pane.action_tab("output")
        await pilot.pause()
        text = screen_text(app)
        assert "$ rm -rf build/" in text and "not run (cancelled)" in text and "finished" not in text
