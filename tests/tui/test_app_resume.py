"""`vigil --resume ID` without -p: the TUI opens on the recorded session (its log shown first),
the prompt history holds its prompts, and a new prompt continues the same conversation."""

from __future__ import annotations

import json

from tests.tui.app_harness import AppUnderTest, make_session, started, type_prompt, wait_until
from tests.tui.helpers import screen_text
from tests.tui.test_app_flows import READ
from tui_app.cli import build_parser, build_tui


async def test_resume_shows_the_recorded_session_and_continues_it(tmp_path, monkeypatch):
    first = make_session(tmp_path, monkeypatch, [{"text": "Reading it.", "tool_calls": [READ]},
                                                  {"text": "It subtracts."}])
    await first.start()
    await first.run_turn("what does add do?")
    await first.close()

    script = tmp_path / "next.json"  # the resumed model sees the old tool result: the conversation is back
    script.write_text(json.dumps({"steps": [{"text": "Still subtracting, as I read before.",
                                             "expect": ["return a - b"]}]}))
    args = build_parser().parse_args(["--resume", first.id, "--script", str(script),
                                      "--cwd", str(tmp_path / "project")])
    app = build_tui(args, demo=False, app_class=AppUnderTest)
    assert isinstance(app, AppUnderTest)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        text = screen_text(app)
        assert "[resumed]" in text and first.id in text
        assert "what does add do?" in text and "It subtracts." in text and "✓ Read calc.py" in text
        assert app.states() == {"r1": "done"}
        await pilot.press("up")
        assert app.main.prompt.text == "what does add do?"
        await pilot.press("down")
        assert app.main.prompt.text == ""
        await type_prompt(pilot, "and now?")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the new turn to end")
        assert app.events_of("TurnEnded")[0].reason == "completed"
        assert "Still subtracting, as I read before." in screen_text(app)
        (session_started,) = app.events_of("SessionStarted")
        assert session_started.resumed_from == first.id
