"""Read-only replay: a recorded session on the main screen, stepped through with a timeline.

The demo is played live (real tools, real processes, approvals answered with keys), then replayed
from its log: the replay's last position shows what the live screen showed, stepping shows each
moment, and the replay starts no process and writes no file."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.tui.app_harness import AppUnderTest, started, wait_until
from tests.tui.helpers import click_actions, control_characters, screen_text
from tests.tui.replay_data import SESSION, position_after, two_turns, write_log
from tests.tui.replay_harness import (
    assert_same_screen,
    caught_up,
    files_under,
    no_process_may_start,
    panes,
    settled,
)
from tests.tui.session_data import NASTY_TEXT
from tui_app.app.replay_app import ReplayApp
from tui_app.app.screens.approval import ApprovalScreen
from tui_app.app.screens.replay import ReplayScreen
from tui_app.assemble import SessionOptions, build_session
from tui_app.demo import DEMO_PROMPT, copy_sample_project
from widgets.diff.view import DiffView

SIZE = (160, 40)
#: the replay has the timeline (2 lines) where the live screen has none: the panes line up
REPLAY_SIZE = (160, 42)
#: the header cuts a long cwd at its end; the marker lengths differ
LABEL = "~/sample_project"


async def play_the_demo_live(tmp_path: Path, monkeypatch) -> tuple[str, Path, dict[str, list[str]]]:
    """The demo in the live app, every approval answered "y"; its screen once the session ended."""
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    project = copy_sample_project(str(tmp_path))
    session = build_session(SessionOptions(cwd=str(project), provider="scripted", interactive=True))
    app = AppUnderTest(session, auto_prompt=DEMO_PROMPT, auto_prompt_delay=0.05, tag="demo", cwd_label=LABEL)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        answered = 0

        def progress() -> bool:
            return bool(app.dialog or app.events_of("TurnEnded"))

        while not app.events_of("TurnEnded"):
            await wait_until(pilot, progress, "a dialog or the end of the turn", timeout=60)
            dialog = app.dialog
            if dialog is not None:
                await pilot.press("y")
                answered += 1
                await wait_until(pilot, lambda d=dialog: app.dialog is not d, "the dialog to close")
        assert answered == 3 and app.events_of("TurnEnded")[0].reason == "completed"
        await asyncio.to_thread(app.close_runtime)  # the session ends: its log is complete
        await wait_until(pilot, lambda: " · ended · " in screen_text(app), "the header to say ended")
        await settled(pilot)
        return session.id, project, panes(app, app.main)


async def test_the_replay_of_the_demo_shows_the_live_screen_steps_through_it_and_runs_nothing(
        tmp_path, monkeypatch):
    session_id, project, live = await play_the_demo_live(tmp_path, monkeypatch)
    assert "✓ Edit" in "\n".join(live["chat"]) and "python3 -m unittest" in "\n".join(live["table"])
    home = tmp_path / "home"
    before = files_under(home, project)

    with no_process_may_start(monkeypatch) as spawned:
        app = ReplayApp(ReplayScreen.load(session_id, cwd_label=LABEL))
        async with app.run_test(size=REPLAY_SIZE) as pilot:
            screen = await caught_up(pilot)
            assert screen.position == screen.timeline.end
            assert_same_screen(live, panes(app, screen))
            assert "[READ-ONLY replay]" in screen_text(app) and not screen.prompt.display
            assert screen.controls is None and not hasattr(app, "runner")

            # the moment the Edit asked: its row waits, the header says so, its diff is shown, no dialog
            events = screen.timeline.events
            asked = position_after(events, "PermissionRequested", "toolu_demo_06")
            screen.go(asked)
            await caught_up(pilot)
            assert screen.rewinds == 1
            rows = {row.call_id: row.state for row in screen.table.rows.rows}
            assert rows["toolu_demo_06"] == "awaiting approval" and "toolu_demo_07" not in rows
            text = screen_text(app)
            assert "◆ waiting for you (1)" in text and f"event {asked} of {len(events)}" in text
            assert screen.detail.call_id == "toolu_demo_06"
            diff = screen.detail.query_one("#detail-diff", DiffView)
            assert "    return (ordered[middle - 1] + ordered[middle]) / 2" in [
                line.text for line in diff.model.lines if line.kind == "added"]
            assert not any(isinstance(s, ApprovalScreen) for s in app.screen_stack)
            await pilot.press("right")  # the user's answer
            await caught_up(pilot)
            assert screen.table.rows.get("toolu_demo_06").state != "awaiting approval"
            assert "waiting for you" not in screen_text(app)

            # the turn's start: the prompt alone; then the end again, by key
            await pilot.press("left_square_bracket")
            await caught_up(pilot)
            assert screen.position == screen.timeline.turn_starts[0] and len(screen.table.rows) == 0
            assert "The tests of this project fail." in screen_text(app)
            await pilot.press("end")
            await caught_up(pilot)
            assert_same_screen(live, panes(app, screen))
            await pilot.press("home")
            await caught_up(pilot)
            assert screen.position == 0 and "event 0 of" in screen_text(app)
            await pilot.press("end")
            await caught_up(pilot)
            assert_same_screen(live, panes(app, screen))
    assert spawned == []
    assert files_under(home, project) == before


async def test_stepping_back_shows_what_a_screen_fed_that_far_shows(tmp_path, monkeypatch):
    """A rewind folds the log again instead of building the screen anew; at every position it
    must show what a fresh screen fed that many events shows."""
    events = two_turns()
    positions = [0, 1, 2, 5, 20, 27, position_after(events, "PermissionRequested"), 39, 41, 44, 50, 51, 55, 58]
    fresh = {}
    for position in positions:
        app = ReplayApp(ReplayScreen(SESSION, events, position=position))
        async with app.run_test(size=SIZE) as pilot:
            screen = await caught_up(pilot)
            fresh[position] = panes(app, screen)
    app = ReplayApp(ReplayScreen(SESSION, events))
    async with app.run_test(size=SIZE) as pilot:
        screen = await caught_up(pilot)
        for position in reversed(positions):
            screen.go(position)
            await caught_up(pilot)
            assert panes(app, screen) == fresh[position], f"position {position}"
        assert screen.rewinds == len(positions)
        # and forward again, in steps
        for position in positions[1:]:
            screen.go(position)
            await caught_up(pilot)
            assert panes(app, screen) == fresh[position], f"position {position} (forward)"


async def test_keys_step_through_events_and_turns():
    events = two_turns()
    first, second = position_after(events, "TurnStarted"), 51
    app = ReplayApp(ReplayScreen(SESSION, events))
    async with app.run_test(size=SIZE) as pilot:
        screen = await caught_up(pilot)
        end = screen.timeline.end
        moves = [("left", end - 1), ("h", end - 2), ("right", end - 1), ("l", end), ("l", end),
                 ("left_square_bracket", second), ("left_square_bracket", first), ("left_square_bracket", 0),
                 ("right_square_bracket", first), ("ctrl+right", second), ("ctrl+right", end),
                 ("ctrl+left", second), ("home", 0), ("left", 0), ("end", end)]
        for key, expected in moves:
            await pilot.press(key)
            await caught_up(pilot)
            assert screen.position == expected, key
            assert f"event {expected} of {end} ·" in screen_text(app), key
        assert "turn 2 of 2" in screen_text(app)
        # keys pressed faster than the screen catches up: it lands where they lead
        await pilot.press(*["left"] * 30)
        await caught_up(pilot)
        assert screen.position == end - 30 and screen.shown == end - 30


async def test_the_user_picks_a_call_and_it_stays_picked_while_stepping():
    events = two_turns()
    app = ReplayApp(ReplayScreen(SESSION, events))
    async with app.run_test(size=SIZE) as pilot:
        screen = await caught_up(pilot)
        screen.table.focus()
        await pilot.press("home")
        await caught_up(pilot)
        screen.go(position_after(events, "ToolCallResult", "toolu_04"))
        await caught_up(pilot)
        screen.table.select("toolu_02")
        await pilot.press("enter")
        await pilot.pause()
        assert screen.detail.call_id == "toolu_02" and not screen.follow
        for key in ("right", "right", "left", "left", "left"):
            await pilot.press(key)
            await caught_up(pilot)
            assert screen.detail.call_id == "toolu_02", key
        screen.go(3)  # before the call existed: the pane follows again
        await caught_up(pilot)
        assert screen.detail.call_id is None and screen.follow


async def test_a_log_cut_mid_line_opens_up_to_its_last_event_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    events = two_turns()[:30]
    path = write_log(events)
    with path.open("ab") as handle:
        handle.write(b'{"type":"ToolCallProgress","seq":31,"session_id":"' + SESSION.encode() + b'","te')
    app = ReplayApp(ReplayScreen.load(SESSION))
    async with app.run_test(size=SIZE) as pilot:
        screen = await caught_up(pilot)
        text = screen_text(app)
        assert screen.timeline.end == 30 and "event 30 of 30" in text
        assert "the log ends mid-line (cut short while it was written); showing up to event 30" in text
        await wait_until(pilot, lambda: any("the log ends mid-line" in n.message for n in app._notifications),
                         "the notification that the log was cut")


async def test_hostile_text_in_a_log_is_shown_literally(tmp_path, monkeypatch):
    events = two_turns()
    events[1] = events[1].model_copy(update={"prompt": NASTY_TEXT})
    events[2] = events[2].model_copy(update={"text": NASTY_TEXT})
    app = ReplayApp(ReplayScreen(SESSION, events, position=3))
    async with app.run_test(size=SIZE) as pilot:
        await caught_up(pilot)
        text = screen_text(app)
        assert "[@click=app.quit]x[/]" in text and "TurnStarted" not in text  # bar: the AssistantText
        assert control_characters(app) == [] and not [a for a in click_actions(app) if "quit" in a]
        await pilot.press("left")
        await caught_up(pilot)
        assert "TurnStarted [/ [bold]x [@click=app.quit]x[/]" in screen_text(app)
        assert control_characters(app) == [] and not [a for a in click_actions(app) if "quit" in a]


async def test_sessions_from_the_palette_open_a_replay_over_the_live_session(tmp_path, monkeypatch):
    from tests.tui.app_harness import make_session

    session = make_session(tmp_path, monkeypatch, [{"text": "Hi."}])
    write_log(two_turns())
    app = AppUnderTest(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("ctrl+p", *"sessions")
        await wait_until(pilot, lambda: "past sessions: pick one to replay it read-only" in screen_text(app),
                         "the Sessions command")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Now run the linter." not in screen_text(app) and
                         "Why does test_even fail? Fix it." in screen_text(app), "the session browser")
        assert screen_text(app).count("● this session") == 1  # the running one is told apart
        await pilot.press(*"test_even", "enter", "enter")
        replay = await caught_up(pilot)
        assert isinstance(app.screen, ReplayScreen) and replay is app.screen
        assert replay.session_id == SESSION and "Now run the linter." in screen_text(app)
        assert app.main.session_id == session.id  # the live session is still there, underneath
        await pilot.press("q")
        await wait_until(pilot, lambda: app.screen is app.main, "the live screen again")
        assert app.main.prompt.display


async def test_sessions_from_a_replay_replace_it(tmp_path, monkeypatch):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    write_log(two_turns())
    other = [e.model_copy(update={"session_id": "20250202-090000-def456"}) for e in two_turns()[:3]]
    other[1] = other[1].model_copy(update={"prompt": "Rename the module."})
    write_log(other, "20250202-090000-def456")
    app = ReplayApp(ReplayScreen.load(SESSION))
    async with app.run_test(size=SIZE) as pilot:
        await caught_up(pilot)
        await pilot.press("ctrl+p", *"sessions")
        await wait_until(pilot, lambda: "past sessions" in screen_text(app), "the Sessions command")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "2 of 2" in screen_text(app), "the session browser")
        await pilot.press(*"rename", "enter", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.session_id != SESSION,
                         "the other session")
        await caught_up(pilot)
        assert "Rename the module." in screen_text(app) and len(app.screen_stack) == 2
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


def test_an_unknown_session_is_one_line_and_exit_code_2(tmp_path, monkeypatch, capsys):
    from tui_app.app.replay_app import run_replay_tui

    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    assert run_replay_tui("no-such-session") == 2
    err = capsys.readouterr().err
    assert err.startswith("vigil: no recorded session 'no-such-session' in ") and err.count("\n") == 1


async def test_stepping_back_takes_the_plan_and_the_changed_files_back_too():
    from tui_app.runtime.events import FileChangedExternally, TodoUpdated
    from widgets.panels.side import SidePanels

    events = [*two_turns(), TodoUpdated(todos=[{"content": "fix median", "status": "in_progress"}]),
              FileChangedExternally(path="notes.txt")]
    app = ReplayApp(ReplayScreen(SESSION, events))
    async with app.run_test(size=SIZE) as pilot:
        screen = await caught_up(pilot)
        panels = screen.query_one(SidePanels)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: "fix median" in screen_text(app), "the plan at the end")
        assert panels.tree.changed == {"calc/stats.py": "update", "notes.txt": "outside"}
        await pilot.press("left")  # before the file changed outside Vigil
        await caught_up(pilot)
        assert panels.tree.changed == {"calc/stats.py": "update"} and panels.plan.entries
        await pilot.press("left")  # before the plan was written
        await caught_up(pilot)
        await wait_until(pilot, lambda: "fix median" not in screen_text(app), "the plan gone")
        assert panels.plan.entries == []
