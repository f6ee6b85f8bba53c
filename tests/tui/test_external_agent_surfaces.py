"""Every surface of the screen in a live session with an external agent: Settings (F2), every
entry of the command palette, shift+tab and /model, with the real Claude Code CLI and the real
Claude ACP adapter (tests/agents) against the loopback model server, and an ACP agent that offers
nothing (the fixture agent: no modes, no commands). Nothing crashes, and each says what that agent
supports: Claude Code and the adapter answer /model themselves, the adapter's own modes are on
shift+tab and in the palette, and of an agent that offers neither the screen says so.
"""

from __future__ import annotations

import json
from typing import Any

from tests import cc_kit
from tests.acp_kit import fixture_session
from tests.cc_kit import cc_reply, cc_session
from tests.real_agents import claude_acp_adapter
from tests.tui.app_harness import AppUnderTest, started, type_prompt, wait_until
from tests.tui.helpers import screen_text
from tui_app.app.commands import commands
from tui_app.app.screens.settings_editor import SettingsScreen
from tui_app.assemble import SessionOptions, build_session

claude, cc_home, project, server = cc_kit.claude, cc_kit.cc_home, cc_kit.project, cc_kit.server
DEADLINE_S = cc_kit.DEADLINE_S
#: entries that end the session: run last, one of them
ENDING = ("Quit Vigil", "Agent: ")


def answer_everything(server: Any) -> None:
    """Any model request (a prompt, a compaction, a title) gets a short answer."""
    server.aside = lambda _request: cc_reply(text="Done.")


async def back_to_main(app: AppUnderTest, pilot: Any) -> None:
    """Close whatever an entry opened (a screen, a dialog) and wait for the turn it started."""
    for _ in range(6):
        if app.screen is app.main:
            break
        await pilot.press("escape")
        await pilot.pause()
    await wait_until(pilot, lambda: app.screen is app.main, "the main screen again")
    await wait_until(pilot, lambda: not app.controls.busy, "the turn to end", DEADLINE_S)


async def settings_say(app: AppUnderTest, pilot: Any, *expected: str) -> str:
    await pilot.press("f2")
    screen = await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen) and app.screen, "Settings")
    text = await wait_until(
        pilot, lambda: all(e in screen_text(app) for e in expected) and screen_text(app), f"Settings to say {expected}"
    )
    assert app.screen is screen
    await back_to_main(app, pilot)
    return text


async def every_palette_entry(app: AppUnderTest, pilot: Any) -> list[str]:
    """Run each entry of the palette as the palette runs it; return what was run."""
    ran = []
    for name, callback, _ in commands(app.main):
        if name.startswith(ENDING):
            continue
        callback()
        await pilot.pause(0.05)
        await back_to_main(app, pilot)
        assert app.is_running and app.return_code is None, f"the app ended after {name!r}"
        ran.append(name)
    return ran


async def end_with_another_agent(app: AppUnderTest, pilot: Any) -> None:
    entry = next(callback for name, callback, _ in commands(app.main) if name == "Agent: vigil")
    entry()
    await wait_until(pilot, lambda: app.agent_request == "vigil" and not app.is_running, "the app to close")


async def test_a_claude_code_session_survives_every_surface_and_says_what_claude_code_does(claude, project, server):
    answer_everything(server)
    app = AppUnderTest(cc_session(claude, project, interactive=True))
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        # Settings: the model is Claude Code's own choice, and so said
        await settings_say(app, pilot, "claude-code · its default model", "Claude Code (its own settings and flags)")
        # shift+tab: Vigil's mode, which Claude Code is told
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: "mode acceptEdits " in screen_text(app), "the header to say acceptEdits")
        # /model: Claude Code answers it itself (it switches models; Vigil does not pretend to)
        await type_prompt(pilot, "/model")
        await wait_until(pilot, lambda: "Current model:" in screen_text(app), "Claude Code's own /model", DEADLINE_S)
        await back_to_main(app, pilot)
        ran = await every_palette_entry(app, pilot)
        assert {"Settings", "MCP servers", "/compact: Compact the conversation", "Permission mode: plan"} <= set(ran)
        assert not any(name.endswith(" mode: ") for name in ran)
        await end_with_another_agent(app, pilot)


async def test_an_acp_session_survives_every_surface_and_says_what_the_adapter_does(tmp_path, claude, cc_home, server):
    answer_everything(server)
    project = tmp_path / "project"
    project.mkdir()
    cc_kit.trust(cc_home, project)
    settings = tmp_path / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "agents": {
                    "claude": {
                        "command": "node",
                        "args": [str(claude_acp_adapter())],
                        "env": {"CLAUDE_CODE_EXECUTABLE": str(claude)},
                    }
                }
            }
        )
    )
    session = build_session(
        SessionOptions(cwd=str(project), agent="claude", settings_file=str(settings), interactive=True)
    )
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: "agent Manual" in screen_text(app), "the adapter's own mode", DEADLINE_S)
        await settings_say(app, pilot, "Model", "Permission mode")
        # shift+tab walks the adapter's own modes
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: "agent Manual" not in screen_text(app), "the adapter's next mode", DEADLINE_S)
        # /model: one of the adapter's own commands, answered by it
        assert "model" in {c.name for c in app.controls.known.slash_commands}
        await type_prompt(pilot, "/model")
        await wait_until(pilot, lambda: "Current model:" in screen_text(app), "the adapter's own /model", DEADLINE_S)
        await back_to_main(app, pilot)
        ran = await every_palette_entry(app, pilot)
        assert {"Settings", "MCP servers", "Permission mode: plan"} <= set(ran)
        assert any(name.startswith("claude mode: ") for name in ran)  # its own modes, offered by name
        await end_with_another_agent(app, pilot)


async def test_an_acp_agent_without_modes_or_commands_is_said_to_have_none(tmp_path, cc_home):
    project = tmp_path / "project"
    project.mkdir()
    session, _ = fixture_session(tmp_path, project, {"turns": [[{"say": "done"}] for _ in range(8)]}, interactive=True)
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await settings_say(app, pilot, "fixture · its default model")
        # shift+tab: Vigil's own permission mode (what Vigil asks before the agent's calls run)
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: "mode acceptEdits " in screen_text(app), "the header to say acceptEdits")
        assert " · agent " not in screen_text(app).splitlines()[0]
        # /model: the agent picks its own model and has no /model: said, and nothing is sent
        await type_prompt(pilot, "/model")
        said = await wait_until(
            pilot,
            lambda: [n for n in app.notifications() if "does not switch models" in n],
            "the screen to say the model is the agent's",
        )
        assert said[-1].startswith("fixture does not switch models from Vigil")
        assert app.main.prompt.text == "/model" and app.events_of("TurnStarted") == []
        ran = await every_palette_entry(app, pilot)
        assert not any(" mode: " in name and not name.startswith("Permission") for name in ran)
        await end_with_another_agent(app, pilot)
