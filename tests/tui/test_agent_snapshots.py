"""Snapshots of the built-in agent's features (pytest-textual-snapshot): subagent rows nested under
their Agent calls, the plan dialog, the compaction divider, slash-command completion. Update after
a deliberate change with `--snapshot-update`, then look at the SVGs."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tests.tui.agent_data import compaction_events, plan_request, subagent_events
from tests.tui.session_data import CWD, T0
from tests.tui.test_agent_widgets import ChatApp, TableApp
from tests.tui.test_snapshots import IdleControls
from tui_app.agents.prompt_router import command_facts
from tui_app.agents.slash_commands import load_commands
from tui_app.app.screens.main import MainScreen
from tui_app.app.screens.plan import PlanScreen
from widgets.chat import ChatView
from widgets.compaction_divider import CompactionDivider
from widgets.tool_table import ToolTable


def test_subagent_rows_nested_under_their_agent_calls(snap_compare):
    async def select(pilot):
        pilot.app.query_one(ToolTable).select("agent-1_t2")
        await pilot.pause()

    assert snap_compare(TableApp(subagent_events(finished=False)), terminal_size=(110, 10), run_before=select)


def test_subagent_cards_in_the_chat(snap_compare):
    assert snap_compare(ChatApp(subagent_events()), terminal_size=(90, 24))


class PlanApp(App[None]):
    def compose(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        self.push_screen(PlanScreen(plan_request(), key_guard_s=0.0, ring_bell=False))


def test_the_plan_dialog(snap_compare):
    assert snap_compare(PlanApp(), terminal_size=(110, 32))


def test_the_compaction_divider_with_its_summary_open(snap_compare):
    async def open_summary(pilot):
        chat = pilot.app.query_one(ChatView)
        chat.focus()
        chat.select_entry(chat.entries_of(CompactionDivider)[0])
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(ChatApp(compaction_events()), terminal_size=(90, 24), run_before=open_summary)


class CommandControls(IdleControls):
    def __init__(self, commands) -> None:
        self.commands = commands


class SlashApp(App[None]):
    def __init__(self, commands) -> None:
        super().__init__()
        self.main = MainScreen(CommandControls(commands), cwd=CWD, cwd_label="~/proj", table_clock=lambda: T0)

    async def on_mount(self) -> None:
        await self.push_screen(self.main)


def test_slash_command_completion(snap_compare, tmp_path):
    (tmp_path / "project" / ".claude" / "commands").mkdir(parents=True)
    (tmp_path / "project" / ".claude" / "commands" / "review.md").write_text(
        "---\ndescription: Review a file for bugs\nargument-hint: <file>\n---\nReview $1")
    commands = load_commands(tmp_path / "project", tmp_path / "home")

    async def type_slash(pilot):
        pilot.app.main.prompt.cursor_blink = False  # a blinking cursor made the picture depend on the machine's load
        await pilot.press("slash", "r", "e")
        await pilot.pause()

    assert snap_compare(SlashApp(command_facts(commands)), terminal_size=(120, 20), run_before=type_slash)
