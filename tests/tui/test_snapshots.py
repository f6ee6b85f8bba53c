"""Snapshots of what a user sees (pytest-textual-snapshot). Update after a deliberate change with
`pytest tests/tui/test_snapshots.py --snapshot-update`, then look at the SVGs."""

from __future__ import annotations

from textual.app import App

from tests.tui.session_data import CWD, T0, bash_display, bash_request, chat_events, edit_request, stats_diff
from tests.tui.test_approval import LONG_COMMAND, DialogApp
from tests.tui.test_diff_view import DiffApp
from tests.tui.test_output_view import OutputApp
from tests.tui.test_tool_table import TableApp
from tui_app.app.screens.main import MainScreen
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


class IdleControls:
    """A session that is there but idle: the screen shows its live layout (prompt, bindings)."""

    mode = "default"
    busy = False
    known = None
    commands: tuple = ()

    def submit(self, prompt: str) -> bool:
        return False

    def send(self, command):
        return None

    async def refresh(self):
        return self.known

    def set_mode(self, mode: str) -> None:
        return None


class MainScreenApp(App[None]):
    """The main screen fed a recorded mid-session batch: fixed ids, times, paths and clock."""

    def __init__(self) -> None:
        super().__init__()
        self.main = MainScreen(IdleControls(), cwd=CWD, cwd_label="~/proj", table_clock=lambda: T0 + 9.0)

    async def on_mount(self) -> None:
        await self.push_screen(self.main)
        await self.main.apply(chat_events())
        self.main.table.focus()


async def _settle(pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.3)


def test_main_screen_mid_session(snap_compare):
    assert snap_compare(MainScreenApp(), terminal_size=(160, 48), run_before=_settle)


def test_main_screen_mid_session_small_terminal(snap_compare):
    assert snap_compare(MainScreenApp(), terminal_size=(100, 30), run_before=_settle)


def test_approval_dialog_of_an_acp_agents_edit_of_two_files(snap_compare):
    from tests.tui.session_data import CWD
    from tui_app.runtime.display import FileDiffsDisplay
    from tui_app.runtime.events import PermissionRequested
    from tui_app.runtime.files.diffing import file_diff_display

    files = FileDiffsDisplay(files=[
        file_diff_display(f"{CWD}/calc/core.py", "def add(a, b):\n    return a - b\n",
                          "def add(a, b):\n    return a + b\n"),
        file_diff_display(f"{CWD}/README.md", "# calc\n", "# calc\n\nAdds numbers correctly.\n")])
    request = PermissionRequested(
        call_id="c1", turn_id="t1", session_id="s-demo", ts=T0, request_id="perm-3", tool="Edit",
        input={"file_paths": [f"{CWD}/calc/core.py", f"{CWD}/README.md"], "description": "Fix add"},
        input_sha256="0d1c2b3a4f5e6d7c8b9a", summary="Edit 2 files (+3 -1)", reason="gemini asks",
        decided_by="agent", risk="medium", side_effect_scope="workspace", preview_kind="diff",
        preview_display=files, suggested_rules=["Edit(calc/core.py)", "Edit(README.md)"])

    async def open_dialog(pilot):
        pilot.app.open_dialog()
        await pilot.pause()
        await pilot.press("right_square_bracket")
        await pilot.pause()

    assert snap_compare(DialogApp(request, ring_bell=False), terminal_size=(110, 32), run_before=open_dialog)
