"""Snapshots of what a user sees (pytest-textual-snapshot). Update after a deliberate change with
`pytest tests/tui/test_snapshots.py --snapshot-update`, then look at the SVGs."""

from __future__ import annotations

from tests.tui.session_data import bash_display, bash_request, edit_request, stats_diff
from tests.tui.test_approval import LONG_COMMAND, DialogApp
from tests.tui.test_diff_view import DiffApp
from tests.tui.test_output_view import OutputApp
from tests.tui.test_tool_table import TableApp
from widgets.output_view import OutputView
from widgets.tool_table import ToolTable


def test_tool_table_mid_session(snap_compare):
    async def select(pilot):
        pilot.app.query_one(ToolTable).select("toolu_04")
        await pilot.pause()

    assert snap_compare(TableApp(), terminal_size=(110, 12), run_before=select)


def test_approval_dialog_with_a_diff(snap_compare):
    async def open_dialog(pilot):
        pilot.app.open_dialog()
        await pilot.pause()

    app = DialogApp(edit_request(), position=1, total=3, ring_bell=False)
    assert snap_compare(app, terminal_size=(110, 36), run_before=open_dialog)


def test_approval_dialog_with_a_long_command(snap_compare):
    async def open_dialog(pilot):
        pilot.app.open_dialog()
        await pilot.pause()

    app = DialogApp(bash_request(LONG_COMMAND), ring_bell=False)
    assert snap_compare(app, terminal_size=(100, 30), run_before=open_dialog)


def test_side_by_side_diff(snap_compare):
    assert snap_compare(DiffApp(stats_diff(), split=True), terminal_size=(130, 22))


def test_output_view_with_ansi_colours(snap_compare):
    async def load(pilot):
        pilot.app.query_one(OutputView).load_display(bash_display())
        await pilot.pause()

    assert snap_compare(OutputApp(), terminal_size=(100, 18), run_before=load)
