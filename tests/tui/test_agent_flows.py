"""The built-in agent's features through the whole app: a real session on its own thread, the
scripted model (subagents from its "agents" map), real tools and files; keys through pilot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.tui.app_harness import AppUnderTest, started, type_prompt, wait_until
from tests.tui.helpers import screen_text
from tui_app.app.screens.approval import ApprovalScreen
from tui_app.app.screens.info import ChoiceScreen, InfoScreen
from tui_app.app.screens.plan import PlanScreen
from tui_app.app.screens.replay import ReplayScreen
from tui_app.assemble import SessionOptions, build_session
from widgets.compaction_divider import CompactionDivider
from widgets.slash_menu import SlashMenu
from widgets.subagent_card import SubagentCard

CALC = "def add(a, b):\n    return a + b\n\n\ndef double(x):\n    return add(x, x)\n"


def agent_session(tmp_path: Path, monkeypatch: Any, steps: list[dict[str, Any]], *,
                  agents: dict[str, Any] | None = None, mode: str | None = None, allowed: list[str] | None = None,
                  files: dict[str, str] | None = None):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vigil-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    for name, text in ({"calc.py": CALC} if files is None else files).items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    project.mkdir(exist_ok=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": steps, "agents": agents or {}}), encoding="utf-8")
    return build_session(SessionOptions(cwd=str(project), script=str(script), interactive=True,
                                        permission_mode=mode, allowed_tools=allowed or []))  # type: ignore[arg-type]


def agent(call_id: str, description: str, kind: str = "Explore") -> dict[str, Any]:
    return {"id": call_id, "name": "Agent", "input": {"description": description, "prompt": description,
                                                      "subagent_type": kind}}


async def turn_over(pilot: Any, app: AppUnderTest, count: int = 1) -> None:
    await wait_until(pilot, lambda: len(app.events_of("TurnEnded")) >= count and not app.session.busy,
                     "the turn to end")


async def test_two_subagents_show_as_cards_and_their_calls_nest_in_the_table_and_in_replay(tmp_path, monkeypatch):
    steps = [{"text": "Two at once.", "tool_calls": [agent("toolu_a", "find callers"), agent("toolu_b", "count defs")]},
             {"text": "Both answered."}]
    agents = {"find callers": [{"tool_calls": [{"name": "Grep", "input": {"pattern": "add\\(",
                                                                          "output_mode": "content"}}]},
                               {"text": "double() calls add()."}],
              "count defs": [{"tool_calls": [{"name": "Grep", "input": {"pattern": "^def ", "output_mode": "count"}},
                                             {"name": "Read", "input": {"file_path": "calc.py"}}]},
                             {"text": "Two functions."}]}
    session = agent_session(tmp_path, monkeypatch, steps, agents=agents)
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "look around")
        await turn_over(pilot, app)
        cards = app.main.chat.entries_of(SubagentCard)
        assert [(c.progress.description, c.progress.reason, c.progress.calls) for c in cards] == [
            ("find callers", "completed", 1), ("count defs", "completed", 2)]
        text = screen_text(app)
        assert "double() calls add()." in text and "Two functions." in text
        table = app.main.table
        view = [(row.tool, row.parent) for row in table._view]
        assert view == [("Agent", None), ("Grep", "toolu_a"), ("Agent", None), ("Grep", "toolu_b"),
                        ("Read", "toolu_b")]
        # Enter on a card opens its Agent call in the detail pane
        app.main.chat.focus()
        app.main.chat.select_entry(cards[1])
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.main.detail.call_id == "toolu_b", "the Agent call in the detail pane")
    # the recorded session replays with the same cards and nesting
    replay = ReplayScreen.load(session.id)

    class ReplayApp(AppUnderTest):
        async def on_mount(self) -> None:
            await self.push_screen(replay)

    viewer = ReplayApp(None)
    async with viewer.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: replay.shown == replay.position and replay.chat.entries_of(SubagentCard),
                         "the replay to show the session")
        assert [c.progress.reason for c in replay.chat.entries_of(SubagentCard)] == ["completed", "completed"]
        assert [row.parent for row in replay.table._view] == [None, "toolu_a", None, "toolu_b", "toolu_b"]


async def test_a_subagents_approval_names_the_subagent(tmp_path, monkeypatch):
    steps = [{"tool_calls": [agent("toolu_w", "write notes", "general-purpose")]}, {"text": "ok"}]
    agents = {"write notes": [{"tool_calls": [{"name": "Write", "input": {"file_path": "notes.md",
                                                                          "content": "# Notes\n"}}]},
                              {"text": "Written."}]}
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, steps, agents=agents))
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "take notes")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval dialog")
        assert "asked by the general-purpose subagent “write notes”" in screen_text(app)
        await pilot.press("y")
        await turn_over(pilot, app)
        assert (tmp_path / "project" / "notes.md").read_text() == "# Notes\n"


async def test_slash_completion_then_compact_shows_the_divider_and_the_model_sees_the_summary(tmp_path, monkeypatch):
    steps = [{"text": "Hello there."}, {"text": "SUMMARY: the user said hi; the agent greeted back."},
             {"text": "Still here."}]
    session = agent_session(tmp_path, monkeypatch, steps)
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "hi")
        await turn_over(pilot, app)
        await pilot.press("slash", "c", "o", "m")
        menu = app.main.query_one(SlashMenu)
        await wait_until(pilot, lambda: menu.shown and menu.names == ["compact"], "the completion")
        await pilot.press("tab")
        assert app.main.prompt.text == "/compact " and not menu.shown
        await pilot.press(*"keep", "space", *"names", "enter")
        await wait_until(pilot, lambda: app.main.chat.entries_of(CompactionDivider), "the compaction divider")
        divider = app.main.chat.entries_of(CompactionDivider)[0]
        assert divider.event.trigger == "manual" and divider.event.instructions == "keep names"
        assert app.main.prompt.text == "" and app.main.prompt.past_prompts[-1] == "/compact keep names"
        await wait_until(pilot, lambda: not app.runner.busy, "the compaction to finish")
        await type_prompt(pilot, "still there?")
        await turn_over(pilot, app, 2)
        first = session.agent.client.requests[-1].messages[0].content[0].text
        assert "SUMMARY: the user said hi" in first


async def test_clear_and_a_custom_command_and_an_unknown_one(tmp_path, monkeypatch):
    files = {"calc.py": CALC, ".claude/commands/greet.md": "---\ndescription: Greet someone\n---\nSay hello to $1."}
    session = agent_session(tmp_path, monkeypatch, [{"text": "One."}, {"text": "Hello, Ada."}], files=files)
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "first")
        await turn_over(pilot, app)
        await type_prompt(pilot, "/clear")
        await wait_until(pilot, lambda: app.events_of("ConversationCompacted"), "the clear")
        assert "conversation cleared" in screen_text(app)
        await type_prompt(pilot, "/nosuch thing")
        await wait_until(pilot, lambda: any("no command /nosuch" in n for n in app.notifications()),
                         "the unknown-command notice")
        assert app.main.prompt.text == "/nosuch thing"  # kept, not sent
        app.main.prompt.load_text("")
        await type_prompt(pilot, "/greet Ada")
        await turn_over(pilot, app, 2)
        assert app.events_of("TurnStarted")[-1].prompt == "Say hello to Ada."
        assert [m.role for m in session.agent.client.requests[-1].messages] == ["user"]  # cleared before


async def test_the_plan_dialog_approves_and_switches_the_mode(tmp_path, monkeypatch):
    plan = "# Plan\n1. Fix `add()`\n2. Run the tests"
    steps = [{"tool_calls": [{"id": "p", "name": "ExitPlanMode", "input": {"plan": plan}}]}, {"text": "Working."}]
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, steps, mode="plan"))
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "plan it")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanScreen), "the plan dialog")
        assert "Fix add()" in screen_text(app) and "Approve, and let edits run" in screen_text(app)
        await pilot.press("1")
        await turn_over(pilot, app)
        assert app.main.mode == "acceptEdits"
        assert app.states()["p"] == "done"


async def test_keep_planning_sends_feedback(tmp_path, monkeypatch):
    steps = [{"tool_calls": [{"id": "p", "name": "ExitPlanMode", "input": {"plan": "# Plan\n1. x"}}]},
             {"expect": ["add tests first"], "text": "Revising."}]
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, steps, mode="plan"))
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "plan it")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanScreen), "the plan dialog")
        await pilot.press("3", *"add", "space", *"tests", "space", *"first", "enter")
        await turn_over(pilot, app)
        assert app.events_of("TurnEnded")[-1].reason == "completed"  # the model saw the feedback
        assert app.main.mode == "plan" and app.states()["p"] == "denied"


async def test_a_hash_note_goes_to_the_chosen_memory_file_and_into_the_prompt(tmp_path, monkeypatch):
    session = agent_session(tmp_path, monkeypatch, [{"text": "ok"}])
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "# run tests with uv")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "where to save the note")
        await pilot.press("down", "enter")
        local = tmp_path / "project" / "CLAUDE.local.md"
        await wait_until(pilot, lambda: local.exists() and len(app.events_of("MemoryLoaded")) == 2, "the note")
        assert local.read_text() == "- run tests with uv\n"
        assert "run tests with uv" in session.agent.system_prompt
        await type_prompt(pilot, "/memory")
        await wait_until(pilot, lambda: isinstance(app.screen, InfoScreen), "the memory report")
        assert "CLAUDE.local.md" in screen_text(app)


async def test_resume_with_an_id_closes_this_session_and_names_the_one_to_open(tmp_path, monkeypatch):
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, [{"text": "ok"}]))
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "/resume 20260101-000000-abcdef")
        await wait_until(pilot, lambda: app.closed, "the session to close")
    assert app.resume_request == "20260101-000000-abcdef"


def test_the_cli_opens_the_session_a_resume_asked_for(monkeypatch):
    from tui_app import cli

    opened: list = []

    class FakeApp:
        def __init__(self, resume_to):
            self.resume_request = resume_to

        def run(self):
            return 0

        def close_runtime(self):
            pass

    def build(args, demo):
        opened.append((args.resume, demo))
        return FakeApp("S2" if len(opened) == 1 else None)

    monkeypatch.setattr(cli, "build_tui", build)
    args = cli.build_parser().parse_args([])
    assert cli.run_tui(args, True) == 0
    assert opened == [(None, True), ("S2", False)]
