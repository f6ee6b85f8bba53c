"""The live tool table as a user drives it: rows appear and change, filters, selection."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult

from tests.tui.helpers import screen_lines, styled_segments
from tests.tui.session_data import CWD, SHELL, T0, session_events
from tui_app.runtime.events import ToolCallProgress, ToolCallRequested, ToolCallResult, ToolCallStarted
from widgets.messages import CallSelected
from widgets.tool_table import ToolTable


class TableApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.selected: list[str] = []
        self.highlighted: list[str] = []

    def compose(self) -> ComposeResult:
        yield ToolTable(cwd=CWD, clock=lambda: T0 + 9.0)

    def on_mount(self) -> None:
        table = self.query_one(ToolTable)
        for event in session_events():
            table.apply(event)
        table.focus()

    def on_call_selected(self, message: CallSelected) -> None:
        self.selected.append(message.call_id)

    def on_tool_table_call_highlighted(self, message: ToolTable.CallHighlighted) -> None:
        self.highlighted.append(message.call_id)


def row_line(app: App[Any], text: str) -> str:
    return next(line for line in screen_lines(app) if text in line)


async def test_rows_show_tool_target_state_group_time_and_size():
    app = TableApp()
    async with app.run_test(size=(110, 14)) as pilot:
        await pilot.pause()
        lines = screen_lines(app)
        assert lines[0].split() == ["#", "tool", "target", "state", "group", "time", "size"]
        assert row_line(app, "pytest").split() == ["4", "Bash", "python", "-m", "pytest", "-q", "✓", "done", "g2",
                                                     "1.8s", "47.1", "KB"]
        read = row_line(app, "calc/stats.py")  # relative to the project
        assert "g1 ∥3" in read and "✓ done" in read
        assert "◆ awaiting approval" in row_line(app, "Edit")
        assert "▶ running" in row_line(app, "npm run build") and "5.0s" in row_line(app, "npm run build")
        assert "⊘ denied" in row_line(app, "WebFetch")
        assert "– cancelled" in row_line(app, "rm -rf build/")


async def test_states_have_their_own_colours():
    app = TableApp()
    async with app.run_test(size=(110, 14)) as pilot:
        await pilot.pause()
        colours = {state: styled_segments(app, state)[0].style.color
                   for state in ("✓ done", "◆ awaiting approval", "▶ running", "⊘ denied", "– cancelled")}
        assert len(set(colours.values())) == 5


async def test_a_row_updates_live_without_touching_the_others():
    app = TableApp()
    async with app.run_test(size=(110, 14)) as pilot:
        table = app.query_one(ToolTable)
        await pilot.pause()
        before = screen_lines(app)
        table.apply(ToolCallProgress(call_id="toolu_06", kind="output", stream="stdout", text="x" * 5000))
        table.apply(ToolCallResult(call_id="toolu_06", tool="Bash", model_content="ok", original_bytes=9000))
        await pilot.pause()
        after = screen_lines(app)
        changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
        assert changed == [6]
        assert "✓ done" in after[6] and "8.8 KB" in after[6]


async def test_new_calls_appear_at_the_end_and_follow_when_at_the_bottom():
    app = TableApp()
    async with app.run_test(size=(110, 6)) as pilot:
        table = app.query_one(ToolTable)
        table.action_last()
        for i in range(20):
            table.apply(ToolCallRequested(call_id=f"n{i}", step=2, index=i, name="Read",
                                          input={"file_path": f"{CWD}/f{i}.py"}))
        await pilot.pause()
        assert "f19.py" in screen_lines(app)[-1]
        assert len(table.rows) == 28


async def test_filter_by_state_cycles_with_f_and_clears_with_escape():
    app = TableApp()
    async with app.run_test(size=(110, 14)) as pilot:
        table = app.query_one(ToolTable)
        await pilot.press("f")
        assert table.visible_call_ids == ["toolu_05"]
        assert "filter: awaiting approval · any tool · 1 of 8" in screen_lines(app)[1]
        await pilot.press("f")
        assert table.visible_call_ids == ["toolu_06"]
        await pilot.press("f")
        assert table.visible_call_ids == ["toolu_07"]
        await pilot.press("escape")
        assert len(table.visible_call_ids) == 8
        assert "filter" not in screen_lines(app)[1]


async def test_a_filtered_row_leaves_the_view_when_its_state_changes():
    app = TableApp()
    async with app.run_test(size=(110, 14)) as pilot:
        table = app.query_one(ToolTable)
        table.set_filter({"running"})
        await pilot.pause()
        assert table.visible_call_ids == ["toolu_06"]
        table.apply(ToolCallResult(call_id="toolu_06", tool="Bash", model_content="ok"))
        table.apply(ToolCallStarted(call_id="toolu_05", tool="Edit", input={}, flags=SHELL))
        await pilot.pause()
        assert table.visible_call_ids == ["toolu_05"]
        assert "Edit" in screen_lines(app)[2]


async def test_filter_by_the_tool_under_the_cursor():
    app = TableApp()
    async with app.run_test(size=(110, 14)) as pilot:
        table = app.query_one(ToolTable)
        table.select("toolu_04")
        await pilot.press("t")
        assert table.visible_call_ids == ["toolu_04", "toolu_06", "toolu_08"]
        await pilot.press("t")
        assert len(table.visible_call_ids) == 8


async def test_enter_and_click_post_the_selected_call_id():
    app = TableApp()
    async with app.run_test(size=(110, 14)) as pilot:
        await pilot.press("down", "down", "enter")
        assert app.highlighted == ["toolu_01", "toolu_02"]
        assert app.selected == ["toolu_02"]
        await pilot.click(ToolTable, offset=(20, 5))  # the fifth row
        assert app.selected[-1] == "toolu_05"
        await pilot.click(ToolTable, offset=(20, 0))  # the header selects nothing
        assert len(app.selected) == 2


async def test_the_cursor_stays_visible_when_moving_past_the_bottom():
    app = TableApp()
    async with app.run_test(size=(110, 5)) as pilot:
        table = app.query_one(ToolTable)
        await pilot.press(*["down"] * 8)
        assert table.cursor_id == "toolu_08"
        assert "rm -rf build/" in screen_lines(app)[-1]
        await pilot.press("home")
        assert "**/*.py" in screen_lines(app)[1]
