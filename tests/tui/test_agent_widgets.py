"""The built-in agent's features on screen, widget by widget: subagent rows nested under their Agent
call (and folded), one chat card per subagent, the compaction divider."""

from __future__ import annotations

from types import SimpleNamespace as Ev

from textual.app import App, ComposeResult

from tests.tui.agent_data import SUMMARY, compaction_events, subagent_events
from tests.tui.helpers import screen_lines, screen_text
from tests.tui.session_data import CWD, T0
from widgets.chat import ChatView
from widgets.compaction_divider import CompactionDivider
from widgets.subagent_card import SubagentCard, SubagentProgress, fold_subagents
from widgets.tool_table import ToolTable


class TableApp(App[None]):
    def __init__(self, events) -> None:
        super().__init__()
        self.events = events

    def compose(self) -> ComposeResult:
        yield ToolTable(cwd=CWD, clock=lambda: T0 + 9.0)

    def on_mount(self) -> None:
        table = self.query_one(ToolTable)
        for event in self.events:
            table.apply(event)
        table.focus()


class ChatApp(App[None]):
    def __init__(self, events) -> None:
        super().__init__()
        self.events = events

    def compose(self) -> ComposeResult:
        yield ChatView(cwd=CWD)

    async def on_mount(self) -> None:
        chat = self.query_one(ChatView)
        async with chat.mounting_together():
            for event in self.events:
                await chat.apply(event)


def tools_column(app: App) -> list[str]:
    return [" ".join(line.split()[1:3]) for line in screen_lines(app)[1:] if line.strip()]


async def test_a_subagents_calls_are_nested_under_its_agent_call_and_fold_away():
    app = TableApp(subagent_events())
    async with app.run_test(size=(110, 14)) as pilot:
        await pilot.pause()
        assert tools_column(app) == ["▾ Agent", "└ Grep", "└ Read", "└ Bash", "▾ Agent", "└ Read"]
        first = screen_lines(app)[1]
        assert "Agent 3" in first and "find callers of add()" in first and "✓ done" in first
        table = app.query_one(ToolTable)
        table.select("agent-1_t2")  # a call of the first subagent: space folds its Agent call
        await pilot.press("space")
        assert tools_column(app) == ["▸ Agent", "▾ Agent", "└ Read"]
        assert table.cursor_id == "toolu_a"  # the cursor moved up, not off the table
        await pilot.press("down", "space")
        assert tools_column(app) == ["▸ Agent", "▸ Agent"]
        await pilot.press("space")
        assert tools_column(app) == ["▸ Agent", "▾ Agent", "└ Read"]
        table.select("agent-1_t1")  # a call picked by name comes out of its fold
        await pilot.pause()
        assert tools_column(app)[:2] == ["▾ Agent", "└ Grep"] and table.cursor_id == "agent-1_t1"
        table.fold("toolu_a")
        table.set_filter({"done"})  # a filter shows every match, folded or not
        await pilot.pause()
        assert "└ Grep" in tools_column(app)


async def test_rows_of_a_subagent_that_is_still_running_arrive_under_it():
    events = subagent_events(finished=False)
    app = TableApp(events[:20])
    async with app.run_test(size=(110, 14)) as pilot:
        await pilot.pause()
        table = app.query_one(ToolTable)
        for event in events[20:]:
            table.apply(event)
        await pilot.pause()
        assert tools_column(app) == ["▾ Agent", "└ Grep", "└ Read", "└ Bash", "▾ Agent", "└ Read"]
        assert "▶ running" in screen_lines(app)[1]


async def test_each_subagent_has_one_card_with_its_progress_and_then_its_answer():
    events = subagent_events(finished=False)
    app = ChatApp(events)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        cards = app.query_one(ChatView).entries_of(SubagentCard)
        assert [c.agent_id for c in cards] == ["agent-1", "agent-2"]
        text = screen_text(app)
        assert "Explore subagent · find callers of add()" in text
        assert "2 steps · 3 calls · running: Bash git log --oneline -3 -- calc/ops.py" in text
        assert "Grep" not in text  # the subagent's calls are not chat lines of their own
        chat = app.query_one(ChatView)
        for event in subagent_events()[len(events):]:
            await chat.apply(event)
        await pilot.pause()
        text = screen_text(app)
        assert "completed · 2 steps · 3 calls · 2.3s" in text
        assert "add() is called once: by double() in calc/ops.py:9." in text and "No other module" in text
        assert len(app.query_one(ChatView).entries_of(SubagentCard)) == 2


async def test_stepping_back_shows_a_card_as_it_was_then():
    events = subagent_events()
    app = ChatApp(events)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        chat = app.query_one(ChatView)
        cut = next(i for i, e in enumerate(events) if e.type == "ToolCallRequested" and e.call_id == "agent-1_t2")
        await chat.rewind(events[:cut])
        await pilot.pause()
        first = app.query_one(ChatView).entries_of(SubagentCard)[0]
        assert first.progress == fold_subagents(events[:cut])["agent-1"]
        assert first.progress.running and first.progress.calls == 1


async def test_the_compaction_divider_opens_its_summary_on_enter():
    app = ChatApp(compaction_events())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "conversation compacted · auto · 163,402 → ~96 tokens" in text
        assert "the context window was filling up" in text
        assert "changed `return a - b`" not in text
        divider = app.query_one(ChatView).entries_of(CompactionDivider)[0]
        app.query_one(ChatView).focus()
        app.query_one(ChatView).select_entry(divider)
        await pilot.press("enter")
        text = screen_text(app)
        flat = " ".join(text.split())
        assert " ".join(SUMMARY.split()) in flat
        # what came before the compaction is still in the chat
        assert "Fix add() and run the tests" in text and "Now make double() handle strings" in text
        await pilot.press("enter")
        assert "changed `return a - b`" not in screen_text(app)


def test_a_card_says_thinking_once_its_calls_are_done_and_the_next_step_began():
    progress = SubagentProgress("agent-1", "toolu_a", "Explore", "find callers")
    progress.apply(Ev(type="ModelStepStarted"))
    progress.apply(Ev(type="ToolCallRequested", call_id="c1", name="Grep", input={"pattern": "add\\("}))
    assert progress.current == "Grep add\\("  # "running: Grep add\("
    progress.apply(Ev(type="ModelStepStarted"))  # the Grep's result is in: the subagent thinks again
    assert progress.current == "" and not progress.waiting
