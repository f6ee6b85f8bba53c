"""The session browser: recorded sessions listed from their logs, filtered, opened; untrusted text inert."""

from __future__ import annotations

import time

from textual.app import App
from textual.widgets import Input

from tests.tui.helpers import click_actions, control_characters, screen_text, wait_until
from tui_app.app.screens.sessions import SessionBrowserScreen
from tui_app.runtime import events as ev
from tui_app.runtime.log.catalog import list_sessions
from tui_app.runtime.log.eventlog import EventLogWriter

HOSTILE = "fix [/] it [@click=app.quit]now[/] \x1b]52;c;ZXZpbA==\x07 \x1b[2J"


def record(root, session_id, started, cwd, prompt, reason="completed"):
    writer = EventLogWriter(root / session_id / "events.jsonl")
    base = {"session_id": session_id, "ts": started}
    for seq, event in enumerate([
        ev.SessionStarted(cwd=cwd, provider="scripted", model="scripted-demo", permission_mode="default", **base),
        ev.TurnStarted(turn_id="turn-1", prompt=prompt, **base),
        ev.TurnEnded(turn_id="turn-1", reason=reason, **base),
    ], 1):
        writer.write(event.model_copy(update={"seq": seq}))
    writer.close()


def sessions(tmp_path):
    root = tmp_path / "sessions"
    day = time.mktime((2026, 11, 28, 9, 30, 0, 0, 0, -1))
    record(root, "20261128-093000-aaaaaa", day, "/home/ann/shop", "why does checkout fail?")
    record(root, "20261128-113000-bbbbbb", day + 7200, "/home/ann/blog", "add an RSS feed", "interrupted")
    record(root, "20261128-133000-cccccc", day + 14400, "/srv/api", HOSTILE, "error")
    return list_sessions(root)


class Host(App):
    def __init__(self, summaries):
        super().__init__()
        self.summaries = summaries
        self.chosen = "unset"

    def on_mount(self) -> None:
        self.push_screen(SessionBrowserScreen(self.summaries), self._chosen)

    def _chosen(self, value):
        self.chosen = value


async def test_sessions_are_listed_newest_first_and_filtered_as_you_type(tmp_path):
    app = Host(sessions(tmp_path))
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert text.index("/srv/api") < text.index("/home/ann/blog") < text.index("/home/ann/shop")
        assert "3 of 3" in text
        await pilot.press(*"checkout")
        await pilot.pause()
        text = screen_text(app)
        assert "1 of 3" in text and "why does checkout fail?" in text and "/srv/api" not in text


async def test_enter_opens_the_chosen_session(tmp_path):
    app = Host(sessions(tmp_path))
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        await pilot.press(*"rss", "enter", "enter")
        await pilot.pause()
    assert app.chosen == "20261128-113000-bbbbbb"


async def test_down_from_the_filter_walks_into_the_list(tmp_path):
    app = Host(sessions(tmp_path))
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        await pilot.press("down", "down", "enter")  # the first ↓ leaves the filter, the second moves a row
        await pilot.pause()
    assert app.chosen == "20261128-113000-bbbbbb"


async def test_escape_closes_without_a_choice(tmp_path):
    app = Host(sessions(tmp_path))
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
    assert app.chosen is None


async def test_a_hostile_prompt_is_shown_inert(tmp_path):
    app = Host(sessions(tmp_path))
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "fix [/] it [@click=app.quit]now[/]" in text
        assert click_actions(app) == [] and control_characters(app) == []


def test_the_session_browser_snapshot(tmp_path, snap_compare, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        summaries = [s for s in sessions(tmp_path) if "api" not in s.cwd]

        async def steady(pilot):
            field = await wait_until(pilot, lambda: next((f for f in pilot.app.screen.query(Input) if f.has_focus),
                                                         None), "the filter to have the focus")
            field.cursor_blink = False  # a blinking cursor made the picture depend on the machine's load
            await pilot.pause()

        assert snap_compare(Host(summaries), terminal_size=(140, 20), run_before=steady)
    finally:
        monkeypatch.undo()
        time.tzset()
