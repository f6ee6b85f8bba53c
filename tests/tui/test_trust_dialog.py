"""Trust before code in the TUI: a cloned project whose `.mcp.json` server and SessionStart hook
write markers. The app asks before the session starts, listing both commands; "Don't trust" (the
focused answer, and Escape) starts the session without them; "Trust" runs them and is remembered,
so the next start does not ask — until a file changes. Real app under pilot, real processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tui.app_harness import AppUnderTest, started
from tests.tui.helpers import screen_text, wait_until
from tui_app.app.screens.trust import TrustScreen
from tui_app.assemble import SessionOptions, build_session
from tui_app.project_trust import TRUST_ENV


@pytest.fixture
def place(tmp_path, monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vigil-home"))
    project = tmp_path / "cloned"
    (project / ".claude").mkdir(parents=True)
    (tmp_path / "markers").mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "helper": {"command": "sh", "args": ["-c", f"touch {tmp_path}/markers/mcp-ran"]}}}))
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": f"touch {tmp_path}/markers/hook-ran"}]}]}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"text": "ok"}]}))
    return tmp_path


def app_in(place: Path) -> AppUnderTest:
    return AppUnderTest(build_session(SessionOptions(cwd=str(place / "cloned"), script=str(place / "script.json"),
                                                     interactive=True, ask_trust=True)))


def markers(place: Path) -> set[str]:
    return {p.name for p in (place / "markers").iterdir()}


@pytest.mark.parametrize("key", ["n", "escape", "enter"])
async def test_not_trusting_starts_the_session_without_the_projects_code(place, key):
    app = app_in(place)
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: "Trust this project?" in screen_text(app), "the trust dialog")
        assert isinstance(app.screen, TrustScreen)
        text = screen_text(app)
        assert "Trust this project?" in text
        assert "SessionStart hook" in text and "markers/hook-ran" in text
        assert "MCP server helper" in text and "markers/mcp-ran" in text
        assert markers(place) == set()  # nothing started while it asks
        await pilot.press(key)  # Enter presses the focused button: "Don't trust"
        await started(pilot)
        await wait_until(pilot, lambda: app.events_of("McpServerStatus"), "the servers' status")
        assert [e.status for e in app.events_of("McpServerStatus")] == ["needs-trust"]
        assert [e.code for e in app.events_of("Warning") if e.code == "project_untrusted"]
        assert "This project is not trusted" in screen_text(app)
    assert markers(place) == set()
    assert not (place / "vigil-home" / "trust.json").exists()


async def test_trusting_runs_it_and_is_remembered_until_a_file_changes(place):
    app = app_in(place)
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), "the trust dialog")
        await pilot.press("t")
        await started(pilot)
        await wait_until(pilot, lambda: markers(place) == {"mcp-ran", "hook-ran"}, "the server and the hook to run")
    for marker in (place / "markers").iterdir():
        marker.unlink()

    again = app_in(place)
    async with again.run_test(size=(140, 44)) as pilot:
        await started(pilot)  # no dialog this time
        assert not isinstance(again.screen, TrustScreen)
        await wait_until(pilot, lambda: markers(place) == {"mcp-ran", "hook-ran"}, "the remembered trust")
    for marker in (place / "markers").iterdir():
        marker.unlink()

    mcp = place / "cloned" / ".mcp.json"
    mcp.write_text(mcp.read_text().replace("mcp-ran", "mcp-ran-changed"))
    changed = app_in(place)
    async with changed.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: isinstance(changed.screen, TrustScreen), "the dialog, asked again")
        assert any("mcp-ran-changed" in item["command"] for item in changed.screen.trust_items)
        assert markers(place) == set()
        await pilot.press("n")
        await started(pilot)
    assert markers(place) == set()
