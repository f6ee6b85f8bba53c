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


async def test_the_main_screen_shows_a_recorded_log_read_only():
    """What a replay will use: no runtime, the events applied in one batch, no live controls."""
    from tests.tui.session_data import CWD, T0, chat_events
    from tui_app.app.vigil_app import VigilApp

    app = VigilApp(None, prefill=chat_events(), cwd=CWD, tag="replay", table_clock=lambda: T0 + 9, freeze_gc=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "[replay] 20250101-120000-abc123" in text and "◆ awaiting approval" in text
        assert "Why does test_even fail? Fix it." in text
        assert not app.main.prompt.display and app.main.table.has_focus
        assert [row.state for row in app.main.table.rows.rows].count("done") == 4
        await pilot.press("shift+tab", "escape")
        assert app.main.mode == "default" and "esc Interrupt" not in text
