"""What the command palette opens besides the main screen's own actions: past sessions (and their
read-only replay), the settings report, the transcript export, the MCP servers."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from textual.app import App
from textual.screen import Screen

from tui_app.app.screens.main import MainScreen
from tui_app.app.screens.replay import ReplayLoadError, ReplayScreen, read_log
from tui_app.runtime.commands import AddDirectory
from widgets.text.untrusted import one_line


def open_session_browser(app: App[Any], calling: Screen[Any] | None = None) -> None:
    """The session browser; the session chosen opens read-only (in place of a replay it was
    opened from, on top of anything else)."""
    from tui_app.app.screens.sessions import SessionBrowserScreen

    def chosen(session_id: str | None) -> None:
        if session_id:
            app.run_worker(open_replay(app, session_id, replace=isinstance(calling, ReplayScreen)),
                           group="open-replay")

    runner = getattr(app, "runner", None)
    live_id = getattr(getattr(runner, "session", None), "id", None)
    app.push_screen(SessionBrowserScreen(live_id=live_id), chosen)


async def open_replay(app: App[Any], session_id: str, *, replace: bool = False) -> ReplayScreen | None:
    try:
        events, note = await asyncio.to_thread(read_log, session_id)
    except ReplayLoadError as exc:
        app.notify(str(exc), severity="error", markup=False)
        return None
    screen = ReplayScreen(session_id, events, note=note)
    if replace and isinstance(app.screen, ReplayScreen):
        await app.switch_screen(screen)
    else:
        await app.push_screen(screen)
    return screen


def transcript_path(session_id: str) -> Path:
    from tui_app.runtime.log.paths import session_dir

    return session_dir(session_id) / "transcript.md"


def write_transcript(session_id: str) -> Path:
    """`<session dir>/transcript.md` from the session's whole log (blocking)."""
    from tui_app.headless.export import transcript_markdown
    from tui_app.runtime.log.eventlog import read_events
    from tui_app.runtime.log.paths import events_path

    events = read_events(events_path(session_id)).events
    path = transcript_path(session_id)
    temporary = path.with_suffix(".md.tmp")
    temporary.write_text(transcript_markdown(events), encoding="utf-8")
    temporary.replace(path)
    return path


async def export_transcript(screen: MainScreen) -> Path | None:
    session_id = screen.session_id
    if not session_id:
        screen.notify("Nothing to export yet: the session has not started.", severity="warning", markup=False)
        return None
    try:
        path = await asyncio.to_thread(write_transcript, session_id)
    except OSError as exc:
        screen.notify(f"The transcript could not be written: {one_line(str(exc), 300)}", severity="error",
                      markup=False)
        return None
    screen.notify(f"Transcript written to {one_line(str(path), 300)}", markup=False, timeout=8)
    return path


def open_add_directory(screen: MainScreen) -> None:
    """Ask for a directory, then make it a working directory of the live session."""
    from tui_app.app.screens.add_directory import AddDirectoryScreen

    controls = screen.controls
    if controls is None:
        return
    current = list(controls.known.working_directories) if controls.known is not None else []

    async def add(path: str) -> None:
        reply = await controls.ask(AddDirectory(path=path))  # as /add-dir does
        what = reply.data.get("path", path) if reply.ok else reply.message
        screen.notify(f"Working directory added: {what}" if reply.ok else f"Not added: {what}",
                      severity="information" if reply.ok else "warning", markup=False, timeout=3)

    def chosen(path: str | None) -> None:
        if path:
            screen.run_worker(add(path), group="add-dir")

    screen.app.push_screen(AddDirectoryScreen(screen.cwd or os.getcwd(), current), chosen)


def open_settings_files(screen: MainScreen) -> None:
    from tui_app.app.screens.settings_files import SettingsFilesScreen

    screen.app.push_screen(SettingsFilesScreen(screen.view.reports.settings))


def open_mcp_servers(screen: MainScreen) -> None:
    """The live session's servers when this is its screen and it has any; else the recorded ones."""
    from tui_app.app.screens.mcp_servers import LiveServers, McpServersScreen, RecordedServers

    app = screen.app
    controls = screen.controls
    known = controls.known if controls is not None else None
    if controls is not None and known is not None and known.mcp_servers:
        source: Any = LiveServers(controls)
    elif screen.view.reports.mcp:
        source = RecordedServers(screen.view.reports.mcp)
    else:
        screen.notify("No MCP servers in this session (configure them in .mcp.json or with --mcp-config).",
                      markup=False)
        return
    app.push_screen(McpServersScreen(source))
