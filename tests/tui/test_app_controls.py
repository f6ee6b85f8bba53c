"""The app's controls with a live session: keys typed while a dialog guards land in the prompt,
shift+tab changes the runtime's permission mode, AskUserQuestion is answered through the broker,
the command palette reaches the actions, ctrl+o opens a call's artifact."""

from __future__ import annotations

from tests.tui.app_harness import AppUnderTest, make_session, started, type_prompt, wait_until
from tests.tui.helpers import screen_text
from tests.tui.test_app_flows import EDIT, READ
from tests.tui.test_approval import FakeClock
from tui_app.app.screens.artifacts import ArtifactBrowserScreen
from tui_app.app.screens.question import QuestionScreen
from tui_app.runtime.log.eventlog import read_events
from widgets.viewer.artifact_viewer import ArtifactViewer


async def test_keys_typed_while_the_dialog_guards_go_to_the_half_typed_prompt(tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [
        {"delay_ms": 400, "tool_calls": [READ, EDIT]}, {"text": "Done."}])
    clock = FakeClock()
    app = AppUnderTest(session, key_guard_s=0.3, guard_clock=clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "fix add")
        await pilot.press(*"hello", "space", *"wor")  # the next prompt, typed while the agent works
        dialog = await wait_until(pilot, lambda: app.dialog, "the approval dialog")
        await pilot.press("l", "d", "y", "n")  # meant for the prompt: nothing is answered
        assert app.dialog is dialog and app.events_of("PermissionResolved") == []
        clock.advance(0.31)
        await pilot.press("y")
        await wait_until(pilot, lambda: app.dialog is None, "the dialog to close")
        assert app.main.prompt.text == "hello worldyn"
        assert app.main.prompt.has_focus
        await wait_until(pilot, lambda: app.states().get("e1") == "done", "the Edit to run")


async def test_shift_tab_cycles_the_permission_mode_on_the_runtime_and_in_the_header(tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [{"tool_calls": [READ, EDIT]}, {"text": "Done."}])
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        for expected in ("acceptEdits", "plan", "bypassPermissions", "default", "acceptEdits"):
            await pilot.press("shift+tab")
            await wait_until(pilot, lambda expected=expected: f"mode {expected} " in screen_text(app),
                             f"the header to say {expected}")
            assert session.policy.mode == expected
        assert app.main.prompt.has_focus  # shift+tab changed the mode, not the focus
        # acceptEdits: the Edit runs without asking
        await type_prompt(pilot, "fix add")
        await wait_until(pilot, lambda: app.states().get("e1") == "done", "the Edit to run")
        assert app.events_of("PermissionRequested") == []
    logged = [e for e in read_events(session.log_path).events if e.type == "PermissionModeChanged"]
    assert [(e.previous, e.mode) for e in logged][-1] == ("default", "acceptEdits") and len(logged) == 5


QUESTIONS = [
    {"question": "Which database should the cache use?", "header": "Database", "multiSelect": False,
     "options": [{"label": "SQLite", "description": "one file"}, {"label": "Postgres", "description": "a server"}]},
    {"question": "Which [bold]extras[/] do you want?", "header": "Extras", "multiSelect": True,
     "options": [{"label": "metrics", "description": "Prometheus"}, {"label": "tracing", "description": "OTel"},
                 {"label": "[@click=app.quit]x[/]", "description": "nothing"}]},
]


async def test_ask_user_question_is_answered_through_the_broker(tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [
        {"tool_calls": [{"id": "q1", "name": "AskUserQuestion", "input": {"questions": QUESTIONS}}]},
        {"text": "Postgres with metrics and tracing, then.", "expect": [
            '"Which database should the cache use?"="Postgres"',
            '"Which [bold]extras[/] do you want?"="metrics, tracing"']},
    ])
    app = AppUnderTest(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "set up the cache")
        await wait_until(pilot, lambda: isinstance(app.screen, QuestionScreen), "the question dialog")
        text = screen_text(app)
        assert "Which database should the cache use?" in text and "question 1 of 2" in text
        assert app.bells == 1
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: "Which [bold]extras[/] do you want?" in screen_text(app), "question 2")
        assert "[ ] [@click=app.quit]x[/]" in screen_text(app)
        await pilot.press("space", "down", "space", "enter")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end")
        assert app.events_of("TurnEnded")[0].reason == "completed"
        (answered,) = app.events_of("UserQuestionAnswered")
        assert answered.answers == {"Which database should the cache use?": "Postgres",
                                    "Which [bold]extras[/] do you want?": "metrics, tracing"}
        assert app.states() == {"q1": "done"}


async def test_declining_a_question_tells_the_model(tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [
        {"tool_calls": [{"id": "q1", "name": "AskUserQuestion", "input": {"questions": QUESTIONS[:1]}}]},
        {"text": "I will wait.", "expect": ["declined to answer"]},
    ])
    app = AppUnderTest(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "set up the cache")
        await wait_until(pilot, lambda: isinstance(app.screen, QuestionScreen), "the question dialog")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end")
        assert app.events_of("TurnEnded")[0].reason == "completed"
        assert app.states() == {"q1": "denied"}


async def test_the_command_palette_sets_the_mode_and_lists_every_action(tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [{"text": "Hi."}])
    app = AppUnderTest(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"mode", "space", *"plan")
        await wait_until(pilot, lambda: "Permission mode: plan" in screen_text(app), "the command")
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.policy.mode == "plan", "plan mode on the runtime")
        await wait_until(pilot, lambda: "mode plan " in screen_text(app), "the header")
        from tui_app.app.commands import commands

        names = [name for name, _, _ in commands(app.main)]
        for wanted in ("Interrupt the turn", "Permission mode: default", "Permission mode: acceptEdits",
                       "Permission mode: bypassPermissions", "Artifacts", "Sessions", "Settings files",
                       "Export transcript", "MCP servers", "Toggle diff: unified / side by side",
                       "Filter table: running", "Quit Vigil"):
            assert wanted in names


async def test_over_a_dialog_the_palette_offers_nothing_that_acts_behind_it(tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [{"tool_calls": [READ, EDIT]}, {"text": "Done."}])
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "fix add")
        dialog = await wait_until(pilot, lambda: app.dialog, "the approval dialog")
        await pilot.press("ctrl+p")
        await pilot.press(*"sessions")
        await pilot.pause(0.3)
        assert "past sessions: pick one" not in screen_text(app)
        await pilot.press("ctrl+a", "ctrl+k", *"quit")  # Textual's own commands are still there
        await wait_until(pilot, lambda: "Quit the application" in screen_text(app), "Textual's Quit command")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is dialog, "the dialog again")
        await pilot.press("n")
        await wait_until(pilot, lambda: app.dialog is None, "the dialog to close")


async def test_a_request_waits_while_the_palette_is_open_and_keys_typed_there_answer_nothing(tmp_path, monkeypatch):
    from textual.command import CommandPalette

    session = make_session(tmp_path, monkeypatch, [{"delay_ms": 300, "tool_calls": [READ, EDIT]}, {"text": "Done."}])
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await started(pilot)
        assert app.controls.submit("fix add")
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await wait_until(pilot, lambda: app.events_of("PermissionRequested"), "the Edit to ask")
        await wait_until(pilot, lambda: "Approval of Edit waits for you" in " ".join(app.notifications()),
                         "the notification that a request waits")
        assert isinstance(app.screen, CommandPalette) and app.dialog is None
        await pilot.press(*"any key n y a")  # meant for the palette
        assert isinstance(app.screen, CommandPalette) and app.dialog is None
        await pilot.press("escape")
        dialog = await wait_until(pilot, lambda: app.dialog, "the dialog, back on the main screen")
        # the keys typed in the palette, all handled before the escape, answered nothing
        assert dialog.request.tool == "Edit" and app.events_of("PermissionResolved") == []
        await pilot.pause(0.35)  # the key guard
        await pilot.press("y")
        await wait_until(pilot, lambda: app.states().get("e1") == "done", "the Edit to run")


async def test_ctrl_o_opens_the_selected_calls_artifact_in_the_browser(tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [
        {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "seq 1 20000"}}]},
        {"text": "That was long."},
    ], mode="bypassPermissions")
    app = AppUnderTest(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "count")
        await wait_until(pilot, lambda: app.states().get("b1") == "done", "the Bash to finish")
        record = app.main.detail.records.get("b1")
        (artifact,) = record.outcome.artifacts
        app.main.detail.action_tab("result")
        await pilot.pause()
        result = app.main.detail.query_one("#detail-result").plain
        assert f"path: {artifact.path}" in result and "ctrl+o opens it in the artifact browser" in result
        assert "ctrl+o opens it in the artifact browser" in screen_text(app)
        await pilot.press("ctrl+o")
        browser = await wait_until(pilot, lambda: isinstance(app.screen, ArtifactBrowserScreen) and app.screen,
                                   "the artifact browser")
        assert browser.query_one(ArtifactViewer) is not None
        await wait_until(pilot, lambda: f"{artifact.artifact_id}.txt  108.9 KB  20,000 lines" in screen_text(app),
                         "the artifact, indexed")
        await pilot.press("G")
        await wait_until(pilot, lambda: "20000" in screen_text(app), "the artifact's last line")
        await pilot.press("q")
        await wait_until(pilot, lambda: app.screen is app.main, "back on the main screen")


async def test_a_file_changed_outside_vigil_is_flagged(tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [{"tool_calls": [READ]}, {"text": "Read it."}])
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "read calc")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end")
        assert await session.services["file_state"].wait_until_watching()
        (tmp_path / "project" / "calc.py").write_text("def add(a, b):\n    return 0\n")
        await wait_until(pilot, lambda: "calc.py changed outside Vigil (modified)" in screen_text(app),
                         "the chat to say so")
        app.main.table.select("r1")
        await wait_until(pilot, lambda: "⚠ file changed outside Vigil (modified): calc.py" in screen_text(app),
                         "the detail pane's flag")
