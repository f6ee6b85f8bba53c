"""Untrusted text through the whole app (docs/architecture.md §6): a scripted session whose model text, tool
names, commands, file names, file contents and command output carry markup, click actions and
terminal control sequences. Nothing crashes, nothing is styled or clickable, no control byte
reaches the terminal, in the dialogs, the chat, the table and every tab of the detail pane."""

from __future__ import annotations

import shlex

from tests.tui.app_harness import AppUnderTest, make_session, started, type_prompt, wait_until
from tests.tui.helpers import click_actions, control_characters, screen_text
from tests.tui.session_data import NASTY, NASTY_TEXT
from tests.tui.test_untrusted_text import assert_inert

NASTY_DIR = "[bold]x[@click=app.quit]y["
NASTY_FILE = f"{NASTY_DIR}/z].py"  # the path holds `[/` and a whole click action
TITLE_FILE = "\x1b]0;pwned title\x07t.py"
PRINT = "printf '%s\\n' " + shlex.quote(NASTY_TEXT)
COMMAND = f"{PRINT} | tee out.log; {PRINT} >&2  # {NASTY[2]}"  # tee writes a file: this one asks
MODEL_TEXT = "\n\n".join(NASTY) + "\n\nThat was **odd**."


def assert_revealed(app: AppUnderTest, literals: list[str]) -> None:
    """A dialog shows exactly what will run: control bytes as visible symbols, never as bytes."""
    text = screen_text(app)
    for literal in literals:
        assert literal in text, f"{literal!r} not shown literally"
    assert control_characters(app) == []
    assert "␛]52;c;" in text  # the escape is there to see, as a symbol
    assert not [a for a in click_actions(app) if "quit" in a]


async def test_a_session_full_of_hostile_text_shows_it_all_literally(tmp_path, monkeypatch):
    (tmp_path / "project" / NASTY_DIR).mkdir(parents=True)
    session = make_session(tmp_path, monkeypatch, [
        {"text": MODEL_TEXT, "tool_calls": [
            {"id": "c1", "name": "Bash", "input": {"command": COMMAND}},
            {"id": "c2", "name": "[@click=app.quit]x[/]", "input": {"x": NASTY_TEXT}},
            {"id": "c3", "name": "Glob", "input": {"pattern": "**/*"}},
            {"id": "c4", "name": "Read", "input": {"file_path": NASTY_FILE}},
        ]},
        {"text": MODEL_TEXT, "tool_calls": [{"id": "c5", "name": "Edit", "input": {
            "file_path": NASTY_FILE, "old_string": "a = 1", "new_string": f"a = 2  # {NASTY_TEXT}"}}]},
        {"text": MODEL_TEXT},
    ], files={NASTY_FILE: f"a = 1\n# {NASTY_TEXT}\n", TITLE_FILE: NASTY_TEXT + "\n"})
    app = AppUnderTest(session)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await started(pilot)
        await type_prompt(pilot, "look at [bold]x[/] [@click=app.quit]q[/]")
        await wait_until(pilot, lambda: app.dialog and app.dialog.request.tool == "Bash", "the Bash dialog")
        await pilot.pause(0.2)
        assert_revealed(app, ["[bold]x", "[/"])
        await pilot.click(offset=(30, 10))
        await pilot.press("y")
        await wait_until(pilot, lambda: app.dialog and app.dialog.request.tool == "Edit", "the Edit dialog")
        await pilot.pause(0.2)
        assert_revealed(app, ["[bold]x", "[/", "[@click=app.quit]y[/z].py"])
        await pilot.press("y")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end")
        assert app.events_of("TurnEnded")[0].reason == "completed"
        assert app.states() == {"c1": "done", "c2": "failed", "c3": "done", "c4": "done", "c5": "done"}
        await pilot.pause(0.2)
        assert_inert(app, ["[bold]x", "[@click=app.quit]x[/]", "[/"])
        app.main.chat.scroll_home(animate=False)
        await pilot.pause()
        assert_inert(app, ["look at [bold]x[/] [@click=app.quit]q[/]", "✗ [@click=app.quit]x[/]"])
        for call_id in ("c1", "c2", "c3", "c4", "c5"):
            app.main.table.select(call_id)
            await pilot.pause()
            for tab in ("diff", "output", "result", "events", "input"):
                app.main.detail.action_tab(tab)
                await pilot.pause()
                await app.workers.wait_for_complete()
                await pilot.pause()
                assert_inert(app, [], json_escaped=tab == "input" and call_id in ("c1", "c2", "c5"))
                assert app.main.detail.call_id == call_id
        text = screen_text(app)
        assert app.is_running and "pwned" not in text.replace("pwned title", "")  # the file name, shown inert
        await pilot.click(offset=(20, 8))
        await pilot.click(offset=(120, 3))
        assert app.is_running
