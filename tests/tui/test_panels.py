"""The side panels: the project's files (changed ones marked, Enter opens a file or its diff
against the session's start) and the agent's plan, each toggled by a key and from the palette;
at 100 columns and below an open panel takes the place of the table and the detail."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from tests.tui.app_harness import AppUnderTest, started, type_prompt, wait_until
from tests.tui.helpers import screen_text
from tests.tui.session_data import T0
from tests.tui.test_agent_flows import CALC, agent_session, turn_over
from tests.tui.test_snapshots import IdleControls
from tui_app.app.screens.file_view import FileViewScreen
from tui_app.app.screens.main import MainScreen
from tui_app.runtime.contract import ToolFlags
from tui_app.runtime.events import SessionStarted, TodoUpdated, ToolCallResult, ToolCallStarted
from tui_app.runtime.files.diffing import file_diff_display
from widgets.diff.view import DiffView
from widgets.panels.file_tree import FileTree
from widgets.panels.side import SidePanels
from widgets.text.text_view import TextView

TODOS = [{"content": "Read calc.py", "status": "completed", "activeForm": "Reading calc.py"},
         {"content": "Fix add", "status": "in_progress", "activeForm": "Fixing add"},
         {"content": "Write the notes", "status": "pending", "activeForm": "Writing the notes"}]
STEPS = [
    {"tool_calls": [{"id": "t1", "name": "TodoWrite", "input": {"todos": TODOS}},
                    {"id": "r1", "name": "Read", "input": {"file_path": "calc.py"}}]},
    {"tool_calls": [{"id": "e1", "name": "Edit", "input": {"file_path": "calc.py", "old_string": "a + b",
                                                           "new_string": "a + b + 0"}},
                    {"id": "w1", "name": "Write", "input": {"file_path": "docs/notes.md", "content": "# notes\n"}}]},
    {"text": "Done."},
]
FILES = {"calc.py": CALC, "docs/guide.md": "guide\n", "vendor/lib.py": "x\n", ".gitignore": "vendor/\n"}


def tree_lines(app: App) -> list[str]:
    tree = app.screen.query_one(FileTree)
    lines = []

    def walk(node, depth):
        for child in node.children:
            lines.append("  " * depth + str(child.label))
            walk(child, depth + 1)

    walk(tree.root, 0)
    return lines


async def test_the_file_tree_marks_changes_and_opens_the_diff_against_the_start(tmp_path, monkeypatch):
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, STEPS, files=FILES, mode="acceptEdits"))
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "fix it")
        await turn_over(pilot, app)
        panels = app.main.query_one(SidePanels)
        assert not panels.display
        await pilot.press("ctrl+b")
        tree = app.main.query_one(FileTree)
        await wait_until(pilot, lambda: tree.listed, "the project's files")
        assert panels.display and app.focused is tree
        assert tree_lines(app) == ["docs/ ●", "calc.py ●"]  # vendor/ is ignored; .gitignore is hidden
        await pilot.press("enter")  # docs/ opens
        await wait_until(pilot, lambda: tree_lines(app) == ["docs/ ●", "  guide.md", "  notes.md +", "calc.py ●"],
                         "docs/ opened")
        await pilot.press("down", "down", "down", "enter")
        screen = await wait_until(pilot, lambda: isinstance(app.screen, FileViewScreen) and app.screen.text,
                                  "the file view")
        screen = app.screen
        diff = screen.query_one(DiffView)
        await wait_until(pilot, lambda: diff.display and diff.is_ready, "the diff")
        text = screen_text(app)
        assert "calc.py" in text and "the diff against the session's start" in text
        assert "return a + b + 0" in text and "return a + b" in text
        await pilot.press("d")
        assert screen.query_one(TextView).display and "def double(x):" in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.main, "back on the main screen")
        await pilot.press("ctrl+b")
        assert not panels.display and app.focused is app.main.prompt


async def test_the_plan_panel_shows_the_todo_list(tmp_path, monkeypatch):
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, STEPS, files=FILES, mode="acceptEdits"))
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+l")
        assert "No plan yet" in screen_text(app)
        await type_prompt(pilot, "fix it")
        await turn_over(pilot, app)
        text = screen_text(app)
        assert "plan · 1/3 done" in text
        assert "● Read calc.py" in text and "◐ Fixing add" in text and "○ Write the notes" in text


async def test_at_100_columns_an_open_panel_takes_the_place_of_the_table(tmp_path, monkeypatch):
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, [{"text": "ok"}], files=FILES))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        right = app.main.query_one("#right")
        assert app.main.has_class("-narrow") and right.display
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert app.main.has_class("-panels") and right.region.width == 0
        assert app.main.query_one(SidePanels).region.width == 45
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert right.region.width > 0
    wide = AppUnderTest(agent_session(tmp_path / "wide", monkeypatch, [{"text": "ok"}], files=FILES))
    async with wide.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert wide.main.has_class("-wide") and wide.main.query_one("#right").region.width > 40


async def test_the_palette_toggles_the_panels(tmp_path, monkeypatch):
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, [{"text": "ok"}], files=FILES))
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+p", *"plan panel")
        await wait_until(pilot, lambda: "Plan panel: show / hide" in screen_text(app), "the palette entry")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.main.query_one(SidePanels).has_class("-plan"), "the plan panel")


# ---- snapshot ------------------------------------------------------------------------------------

class PanelsApp(App[None]):
    """The main screen on a real directory, with an edit, a new file and a plan: both panels open."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = str(root)
        self.main = MainScreen(IdleControls(), cwd=self.root, cwd_label="~/proj", table_clock=lambda: T0 + 9.0)

    async def on_mount(self) -> None:
        await self.push_screen(self.main)
        flags = ToolFlags()
        stats = f"{self.root}/calc/stats.py"
        await self.main.apply([
            SessionStarted(session_id="20250101-120000-abc123", ts=T0, cwd=self.root, provider="anthropic",
                           model="claude-sonnet-4-5", permission_mode="default"),
            TodoUpdated(call_id="t1", todos=[{**t, "content": t["content"].replace("calc.py", "stats.py")}
                                             for t in TODOS]),
            ToolCallStarted(call_id="e1", ts=T0 + 1, tool="Edit", input={"file_path": stats}, flags=flags),
            ToolCallResult(call_id="e1", ts=T0 + 2, tool="Edit", model_content="ok",
                           display=file_diff_display(stats, "a\nb\n", "a\nc\n")),
            ToolCallStarted(call_id="w1", ts=T0 + 3, tool="Write", input={"file_path": f"{self.root}/NOTES.md"},
                            flags=flags),
            ToolCallResult(call_id="w1", ts=T0 + 4, tool="Write", model_content="ok",
                           display=file_diff_display(f"{self.root}/NOTES.md", "", "# notes\n", "create")),
        ])
        self.main.action_toggle_panel("plan")
        self.main.action_toggle_panel("files")


def test_panels_snapshot(snap_compare, tmp_path):
    for name in ("calc/stats.py", "calc/__init__.py", "tests/test_stats.py", "README.md", "NOTES.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")

    async def opened(pilot):
        await wait_until(pilot, lambda: pilot.app.main.query_one(FileTree).listed, "the files")
        await pilot.press("enter")
        await pilot.pause(0.3)

    assert snap_compare(PanelsApp(tmp_path), terminal_size=(140, 34), run_before=opened)
