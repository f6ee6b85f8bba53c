"""`vigil replay ID` and `vigil sessions --tui` in a real terminal (tmux): the recorded session opens
read-only in the TUI, keys step through it, q quits; `--output-format text` still prints."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.test_tmux import ROOT, Terminal, wait_exited
from tests.tui.replay_data import SESSION, two_turns, write_log

pytestmark = pytest.mark.usefixtures("tmux_available")


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    return write_log(two_turns())


def test_vigil_replay_opens_the_session_read_only_and_keys_step_through_it(tmp_path, recorded):
    term = Terminal(tmp_path, ["replay", SESSION])
    try:
        screen = term.wait_for(lambda s: "event 59 of 59" in s, "the replay at its end", timeout=60)
        assert f"[READ-ONLY replay] {SESSION}" in screen and "Now run the linter." in screen
        assert "Ask the agent" not in screen  # no prompt box
        term.keys("Left")
        screen = term.wait_for(lambda s: "event 58 of 59" in s, "one step back")
        assert "TurnEnded completed" in screen
        term.keys("[")
        screen = term.wait_for(lambda s: "event 51 of 59" in s, "the second turn's start")
        assert "TurnStarted Now run the linter." in screen
        term.keys("Home")
        term.wait_for(lambda s: "event 0 of 59" in s, "the start")
        pid = int(term.pane("pane_pid"))
        term.keys("q")
        wait_exited(pid)
    finally:
        term.close()


def test_vigil_sessions_tui_lists_sessions_and_opens_one(tmp_path, recorded):
    term = Terminal(tmp_path, ["sessions", "--tui"])
    try:
        screen = term.wait_for(lambda s: "Sessions — 1 of 1" in s, "the session browser", timeout=60)
        assert "Why does test_even fail? Fix it." in screen
        time.sleep(0.3)
        term.keys("Enter")  # from the filter box to the list
        time.sleep(0.3)
        term.keys("Enter")
        term.wait_for(lambda s: "[READ-ONLY replay]" in s and "event 59 of 59" in s, "the replay")
        term.keys("q")
        term.wait_for(lambda s: "Sessions — 1 of 1" in s, "the browser again")
        pid = int(term.pane("pane_pid"))
        term.keys("Escape")
        wait_exited(pid)
    finally:
        term.close()


def test_replay_still_prints_with_an_output_format(tmp_path, recorded):
    env = {"VIGIL_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "tui_app", "replay", SESSION, "--output-format", "text"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and "> Now run the linter." in done.stdout
