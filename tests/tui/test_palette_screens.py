"""What the command palette opens: the settings report, the transcript export, the MCP servers
(live: a real server, killed and reconnected; replayed: the recorded statuses), the theme picker."""

from __future__ import annotations

import json
import os
import signal
import tempfile

from tests.mcp.helpers import fixture
from tests.tui.app_harness import AppUnderTest, make_session, started, type_prompt, wait_until
from tests.tui.helpers import click_actions, control_characters, screen_text
from tests.tui.replay_data import SESSION, two_turns
from tests.tui.replay_harness import caught_up
from tests.tui.session_data import NASTY_TEXT
from tui_app.app.replay_app import ReplayApp
from tui_app.app.screens.mcp_servers import McpServersScreen
from tui_app.app.screens.replay import ReplayScreen
from tui_app.app.screens.settings_files import SettingsFilesScreen
from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime import events as ev
from tui_app.runtime.log.paths import session_dir

HOSTILE_MODE = "[bold]x[@click=app.quit]y[/]"


async def run_command(pilot, typed: str, shows: str) -> None:
    """ctrl+p, type, wait for the command's line, Enter."""
    await pilot.press("ctrl+p", *[("space" if c == " " else c) for c in typed])
    await wait_until(pilot, lambda: shows in screen_text(pilot.app), f"the palette to offer {shows!r}")
    await pilot.press("enter")


def inert(app) -> None:
    assert control_characters(app) == [] and not [a for a in click_actions(app) if "quit" in a]


async def test_settings_files_lists_the_files_in_load_order_and_each_problem(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user" / "config"))
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".vigil").mkdir()
    (project / ".claude" / "settings.json").write_text('{"permissions": {"allow": ["Read"]}}')
    (project / ".vigil" / "settings.json").write_text(
        '{\n  "permissions": {\n    "allow": ["Glob"],\n    "defaultMode": ' + json.dumps(HOSTILE_MODE) + "\n  }\n}\n")
    session = make_session(tmp_path, monkeypatch, [{"text": "Hi."}])
    app = AppUnderTest(session)
    async with app.run_test(size=(150, 40)) as pilot:
        await started(pilot)
        await run_command(pilot, "settings files", "which settings files were loaded")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsFilesScreen), "the settings report")
        await pilot.pause()
        text = screen_text(app)
        claude, vigil = str(project / ".claude" / "settings.json"), str(project / ".vigil" / "settings.json")
        assert "Loaded (2)" in text and f"  1  {claude}" in text and f"  2  {vigil}" in text
        assert "Problems (1)" in text and f"✗ {vigil}:4" in text
        assert f"`defaultMode` '{HOSTILE_MODE}' is not one of" in text, text
        inert(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.main, "the main screen again")


async def test_export_transcript_writes_the_session_as_markdown(tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [
        {"text": "Reading it.", "tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "calc.py"}}]},
        {"text": "It subtracts."},
    ])
    app = AppUnderTest(session)
    async with app.run_test(size=(150, 40)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "what does add do")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end")
        await run_command(pilot, "export transcript", "write the session as Markdown")
        path = session_dir(session.id) / "transcript.md"
        await wait_until(pilot, path.exists, "the transcript file")
        text = path.read_text(encoding="utf-8")
        assert text.startswith(f"# Vigil session {session.id}")
        assert "## You\n\nwhat does add do" in text and "### Read — done" in text and "It subtracts." in text
        await wait_until(pilot, lambda: any(str(path) in m for m in app.notifications()), "the notification")


async def test_mcp_servers_shows_status_and_stderr_and_reconnects_a_dead_server(tmp_path, monkeypatch):
    # a short home: the log's path is shown whole only while it fits the 150 columns (pytest's own
    # temporary paths grow with its run counter and the worker's name)
    home = tempfile.TemporaryDirectory(prefix="vh-", dir="/tmp")
    monkeypatch.setenv("VIGIL_HOME", home.name)
    state = tmp_path / "state"
    state.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"fx": fixture(state)}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"text": "Hi."}]}))
    session = build_session(SessionOptions(cwd=str(project), script=str(script), mcp_config=[str(config)],
                                           interactive=True))
    app = AppUnderTest(session)
    # wide enough for the whole log path in the title (a pytest temp path grows with its run number)
    async with app.run_test(size=(240, 40)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: (state / "server-pid").exists(), "the server to start", timeout=30)
        first_pid = int((state / "server-pid").read_text())
        await run_command(pilot, "mcp servers", "status, tools and stderr log of each server")
        screen = await wait_until(pilot, lambda: isinstance(app.screen, McpServersScreen) and app.screen,
                                  "the MCP servers screen")
        log_path = session.agent.mcp.log_path("fx")
        await wait_until(pilot, lambda: f"fixture server {first_pid} starting" in screen_text(app), "its stderr")
        text = screen_text(app)
        assert "fx" in text and "connected" in text and "stdio" in text and f"stderr of fx: {log_path}" in text
        assert [row.tools for row in screen.rows] == [6]

        os.kill(first_pid, signal.SIGKILL)
        await wait_until(pilot, lambda: session.agent.mcp.info("fx").status == "failed", "the server lost")
        await pilot.press("g")
        await wait_until(pilot, lambda: [r.status for r in screen.rows] == ["failed"], "the failed status")
        await pilot.press("r")
        await wait_until(pilot, lambda: [r.status for r in screen.rows] == ["connected"], "the reconnect", timeout=30)
        second_pid = int((state / "server-pid").read_text())
        assert second_pid != first_pid
        await wait_until(pilot, lambda: f"fixture server {second_pid} starting" in screen_text(app), "the new stderr")
        inert(app)
    home.cleanup()


async def test_a_replay_shows_the_recorded_settings_report_and_mcp_servers(tmp_path):
    log = tmp_path / "fx.log"
    log.write_text(f"fixture server 7 starting\n{NASTY_TEXT}\n", encoding="utf-8")
    events = two_turns()
    extra = [
        ev.SettingsLoaded(session_id=SESSION, ts=events[0].ts, files=["/p/.vigil/settings.json"], errors=[
            {"file": "/p/.vigil/settings.json", "line": 7, "reason": f"rule skipped: {NASTY_TEXT}"}]),
        ev.McpServerStatus(session_id=SESSION, ts=events[0].ts, server="fx", status="connecting", log_path=str(log)),
        ev.McpServerStatus(session_id=SESSION, ts=events[0].ts, server="fx", status="connected", tools=6,
                           message="vigil-fixture", log_path=str(log)),
    ]
    app = ReplayApp(ReplayScreen(SESSION, [events[0], *extra, *events[1:]]))
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await caught_up(pilot)
        from tui_app.app.commands import commands

        names = [name for name, _, _ in commands(screen)]
        assert "Replay: next turn" in names and "Sessions" in names
        assert not [n for n in names if n.startswith("Permission mode") or n == "Interrupt the turn"]
        await run_command(pilot, "settings files", "which settings files were loaded")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsFilesScreen), "the settings report")
        await pilot.pause()
        text = screen_text(app)
        assert "  1  /p/.vigil/settings.json" in text and "✗ /p/.vigil/settings.json:7" in text
        inert(app)
        await pilot.press("escape")
        await run_command(pilot, "mcp servers", "status, tools and stderr log of each server")
        await wait_until(pilot, lambda: "fixture server 7 starting" in screen_text(app), "the recorded stderr")
        text = screen_text(app)
        assert "recorded statuses (read-only replay)" in text and "connected" in text and "Reconnect" not in text
        assert "[@click=app.quit]x[/]" in text
        inert(app)
        # back before the servers connected: the recorded report says what was known then
        await pilot.press("escape")
        screen.go(1)
        await caught_up(pilot)
        assert screen.view.reports.mcp == {} and screen.view.reports.settings == []


async def test_the_theme_command_opens_the_theme_picker(tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [{"text": "Hi."}])
    app = AppUnderTest(session)
    async with app.run_test(size=(150, 40)) as pilot:
        await started(pilot)
        app.theme = "textual-dark"
        await run_command(pilot, "theme", "Change the current theme")
        await pilot.press(*"textual-light")
        await wait_until(pilot, lambda: "textual-light" in screen_text(app), "the theme list")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.theme == "textual-light", "the light theme")
