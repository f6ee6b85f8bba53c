"""The settings screen: the rules, hooks, sandbox, model and mode in force with the file each
comes from; a rule added to the file the user picks (and removed again) with every other byte of
that file unchanged; the mode switched and saved as the default."""

from __future__ import annotations

import json

from tests.tui.app_harness import AppUnderTest, started, wait_until
from tests.tui.helpers import screen_text
from tests.tui.test_agent_flows import CALC, agent_session
from tui_app.app.screens.info import ChoiceScreen
from tui_app.app.screens.settings_editor import SettingsScreen, TextPromptScreen

LOCAL = """{
    "env": {"DEBUG": "1"},

    "permissions": {
        "allow": [
            "Bash(git status)"
        ],
        "deny": ["Read(./secrets/**)"]
    },
    "spinnerTipsEnabled": false
}"""
SHARED = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]}}
VIGIL = {"sandbox": {"enabled": True, "network": {"allowedDomains": ["pypi.org"]}}}


def files() -> dict[str, str]:
    return {"calc.py": CALC, ".claude/settings.local.json": LOCAL, ".claude/settings.json": json.dumps(SHARED),
            ".vigil/settings.json": json.dumps(VIGIL, indent=2)}


async def choose(pilot, app, text: str) -> None:
    """Pick the choice whose label holds `text` in the open ChoiceScreen."""
    screen = await wait_until(pilot, lambda: app.screen if isinstance(app.screen, ChoiceScreen) else None,
                              "the choice")
    labels = [str(label) for label, _ in screen.choices]
    index = next(i for i, label in enumerate(labels) if text in label)
    await pilot.press(*["down"] * index, "enter")


async def test_settings_show_where_each_comes_from_and_a_rule_is_added_and_removed_in_place(tmp_path, monkeypatch):
    session = agent_session(tmp_path, monkeypatch, [{"text": "ok"}], files=files())
    local = tmp_path / "project" / ".claude" / "settings.local.json"
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), "the settings screen")
        text = screen_text(app)
        assert "allow  Bash(git status)" in text and "deny   Read(./secrets/**)" in text
        assert ".claude/settings.local.json" in text
        assert "PreToolUse [Bash] → ./check.sh" in text and ".claude/settings.json" in text
        assert '"allowedDomains": ["pypi.org"]' in text and ".vigil/settings.json" in text
        assert "scripted" in text and "default" in text

        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPromptScreen), "the rule prompt")
        await pilot.press(*"Bash(npm test:*)", "enter")
        await choose(pilot, app, "allow")
        await choose(pilot, app, "project, local (Claude Code)")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), "back on the settings")
        expected = LOCAL.replace('"Bash(git status)"\n', '"Bash(git status)",\n            "Bash(npm test:*)"\n')
        assert local.read_text() == expected  # the rule, and not one other byte changed
        assert "Bash(npm test:*)" in [r.text for r in session.policy.rules("allow")]  # in force at once
        await pilot.pause()
        assert "allow  Bash(npm test:*)" in screen_text(app)

        screen = app.screen
        row = next(key for key, entry in screen.row_entries.items() if entry.rule == ("allow", "Bash(npm test:*)"))
        table = screen.query_one("#settings-table")
        table.move_cursor(row=table.get_row_index(row))
        await pilot.press("x")
        assert local.read_bytes() == LOCAL.encode()
        assert "Bash(npm test:*)" not in [r.text for r in session.policy.rules("allow")]


async def test_the_mode_is_switched_and_saved_as_the_default(tmp_path, monkeypatch):
    session = agent_session(tmp_path, monkeypatch, [{"text": "ok"}], files=files())
    shared = tmp_path / "project" / ".vigil" / "settings.json"
    before = shared.read_text()
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+p", *"settings")
        await wait_until(pilot, lambda: "rules, hooks, MCP servers" in screen_text(app), "the palette entry")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), "the settings screen")
        await pilot.press("m")
        await choose(pilot, app, "acceptEdits")
        await choose(pilot, app, "project, shared (Vigil)")
        await wait_until(pilot, lambda: session.policy.mode == "acceptEdits", "the mode in force")
        assert json.loads(shared.read_text()) == {**VIGIL, "permissions": {"defaultMode": "acceptEdits"}}
        assert shared.read_text().startswith(before.rstrip("}").rstrip())  # appended, the rest as it was
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPromptScreen), "the model prompt")
        await pilot.press("ctrl+a", "ctrl+k", *"my-model", "enter")
        await choose(pilot, app, "No: this session only")
        assert session.agent.client.model == "my-model"
        assert "model" not in json.loads(shared.read_text())
