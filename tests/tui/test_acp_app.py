"""The TUI supervising ACP agents: the fixture agent (tests/acp_fixture_agent.py) for a multi-file
edit reviewed in one dialog, the agent's modes on shift+tab, its commands in the prompt box and Esc
in a dialog; the real Claude ACP adapter for an Edit approved in Vigil's dialog and applied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import cc_kit
from tests.acp_kit import fixture_session, logged
from tests.cc_kit import cc_reply, tool
from tests.real_agents import claude_acp_adapter
from tests.tui.app_harness import AppUnderTest, started, type_prompt, wait_until
from tests.tui.helpers import screen_text
from tui_app.app.commands import commands
from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime.display import FileDiffDisplay, FileDiffsDisplay
from widgets.diff.view import DiffView

DEADLINE_S = cc_kit.DEADLINE_S
claude, cc_home, server = cc_kit.claude, cc_kit.cc_home, cc_kit.server
MODES = {"current": "auto", "available": [{"id": "auto", "name": "Auto"}, {"id": "default", "name": "Ask first"},
                                          {"id": "acceptEdits", "name": "Accept edits"}]}


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vigil-home"))
    (tmp_path / "home").mkdir()
    path = tmp_path / "project"
    path.mkdir()
    (path / "notes.txt").write_text("hello world\n")
    (path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return path


def two_file_edit(project: Path) -> list[dict]:
    notes, calc = project / "notes.txt", project / "calc.py"
    return [
        {"say": "Fixing both files."},
        {"ask": {"id": "c1", "title": "Edit notes.txt and calc.py", "kind": "edit",
                 "diffs": [{"path": str(notes), "old": "hello world\n", "new": "goodbye world\n"},
                           {"path": str(calc), "old": "    return a - b", "new": "    return a + b"}]}, "as": "a",
         "if_allowed": [{"write": {"path": str(notes), "content": "goodbye world\n"}},
                        {"write": {"path": str(calc), "content": "def add(a, b):\n    return a + b\n"}},
                        {"update": {"id": "c1", "status": "completed"}}]},
        {"report": "answer={a}"}]


async def test_a_two_file_edit_is_reviewed_in_one_dialog_and_hunks_walk_across_the_files(tmp_path, project):
    script = {"modes": MODES, "turns": [two_file_edit(project)]}
    session, _ = fixture_session(tmp_path, project, script, interactive=True)
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: "agent Ask first" in screen_text(app), "the agent's mode in the header")
        assert "fixture" in screen_text(app)
        await type_prompt(pilot, "fix both")
        dialog = await wait_until(pilot, lambda: app.dialog, "the approval dialog", DEADLINE_S)
        assert isinstance(dialog.request.preview_display, FileDiffsDisplay)
        view = dialog.query_one(DiffView)
        shown = await wait_until(pilot, lambda: "file 1/2" in screen_text(app) and screen_text(app), "file 1 of 2")
        assert "Change 2 files: notes.txt, calc.py" in shown
        assert "goodbye world" in shown and "return a + b" in shown
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: "file 2/2" in screen_text(app), "the next hunk, in the second file")
        assert view.current_hunk == 1
        assert (project / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"  # nothing ran yet
        await pilot.press("y")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end", DEADLINE_S)
        assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
        assert (project / "notes.txt").read_text() == "goodbye world\n"
        assert app.states() == {"c1": "done", "write-1": "done", "write-2": "done"}
        assert [e.tool for e in app.events_of("PermissionRequested")] == ["Edit"]
        await wait_until(pilot, lambda: "answer=allow-once" in screen_text(app), "the agent's report")


async def test_shift_tab_walks_the_agents_modes_and_its_commands_complete_in_the_prompt_box(tmp_path, project):
    script = {"modes": MODES, "commands": [{"name": "review", "description": "Review the diff", "hint": "target"}],
              "turns": [[{"say": "reviewed"}]]}
    session, log = fixture_session(tmp_path, project, script, interactive=True)
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: "agent Ask first" in screen_text(app), "the agent's mode in the header")
        # the other agents come with the session's facts, which may land a frame after the header
        await wait_until(pilot, lambda: "Agent: vigil" in [name for name, _, _ in commands(app.main)],
                         "the other agents in the palette")
        offered = [name for name, _, _ in commands(app.main)]
        assert {"fixture mode: Auto", "fixture mode: Accept edits", "Agent: vigil", "Agent: claude-code"} <= set(
            offered) and "Agent: fixture" not in offered  # the palette: the agent's modes, the other agents
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: "agent Accept edits" in screen_text(app), "the next mode in the header")
        assert "mode acceptEdits" in screen_text(app)  # a mode named like Vigil's moves Vigil's along
        assert logged(log, "set_mode")[-1] == {"set_mode": "acceptEdits"}
        await pilot.press("slash", "r", "e")
        await wait_until(pilot, lambda: "Review the diff" in screen_text(app), "the agent's command in the menu")
        await pilot.press("tab", "x")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end", DEADLINE_S)
        assert logged(log, "prompt") == [{"prompt": ["/review x"]}]


async def test_esc_in_the_dialog_answers_cancelled_and_ends_the_turn(tmp_path, project):
    script = {"turns": [[*two_file_edit(project)[:2], {"wait_cancel": True}]]}
    session, log = fixture_session(tmp_path, project, script, interactive=True)
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "fix both")
        await wait_until(pilot, lambda: app.dialog, "the approval dialog", DEADLINE_S)
        await pilot.press("escape")
        ended = await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end", DEADLINE_S)
        assert ended[0].reason == "interrupted"
        assert logged(log, "asked") == [{"asked": "c1", "answer": "cancelled"}]
        assert (project / "notes.txt").read_text() == "hello world\n"


async def test_the_claude_adapters_edit_is_approved_in_vigils_dialog_and_applied(tmp_path, claude, cc_home, server):
    adapter = claude_acp_adapter()
    server.aside = lambda r: cc_reply(text='{"title": "t"}') if b"naming a coding session" in r.body else None
    project = tmp_path / "project"
    project.mkdir()
    notes = project / "notes.txt"
    notes.write_text("hello world\n")
    cc_kit.trust(cc_home, project)
    server.queue(
        cc_reply(text="Changing it.", tool_calls=[tool("toolu_edit", "Edit", file_path=str(notes),
                                                       old_string="hello", new_string="goodbye")]),
        cc_reply(text="The note says goodbye now."))
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"agents": {"claude": {
        "command": "node", "args": [str(adapter)], "env": {"CLAUDE_CODE_EXECUTABLE": str(claude)}}}}))
    session = build_session(SessionOptions(cwd=str(project), agent="claude", settings_file=str(settings),
                                           interactive=True))
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: "agent Manual" in screen_text(app), "the adapter put in a mode that asks",
                         DEADLINE_S)
        await type_prompt(pilot, "say goodbye")
        dialog = await wait_until(pilot, lambda: app.dialog, "the approval dialog", DEADLINE_S)
        diff = dialog.request.preview_display
        assert isinstance(diff, FileDiffDisplay) and (diff.old_text, diff.new_text) == ("hello world\n",
                                                                                         "goodbye world\n")
        await wait_until(pilot, lambda: "goodbye world" in screen_text(app), "the diff on screen")
        assert notes.read_text() == "hello world\n"
        await pilot.press("y")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end", DEADLINE_S)
        assert notes.read_text() == "goodbye world\n"
        assert app.states() == {"toolu_edit": "done"}
        await wait_until(pilot, lambda: "The note says goodbye now." in screen_text(app), "the answer on screen")


async def test_an_agents_words_in_the_header_and_the_palette_are_text_never_markup(tmp_path, project):
    hostile = "[@click=app.quit]Ask[/][b]"
    script = {"modes": {"current": "x", "available": [{"id": "x", "name": hostile,
                                                       "description": "[/] broken [red]"}]},
              "turns": []}
    session, _ = fixture_session(tmp_path, project, script, interactive=True)
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: hostile in screen_text(app), "the mode's name, as written, in the header")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"fixture")
        await wait_until(pilot, lambda: f"fixture mode: {hostile}" in screen_text(app) and "[/] broken [red]" in
                         screen_text(app), "the mode, as written, in the palette")
        assert app.is_running
