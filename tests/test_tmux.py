"""`vigil` in a real terminal (tmux): the demo answered with keys the way a user answers it, read
back from the screen; and a Vigil that is killed (SIGTERM) or loses its terminal (SIGHUP) still
takes its child processes with it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.procs import kill_marked, live_pids, marker, wait_gone, with_marker
from tests.waiting import DEADLINE_S

ROOT = Path(__file__).parent.parent
pytestmark = pytest.mark.usefixtures("tmux_available")
GUARD_S = 0.45  # the dialogs ignore keys for their first 300 ms


class Terminal:
    """One tmux server of our own (a private socket), one session, one pane running vigil."""

    def __init__(self, tmp_path: Path, args: list[str], width: int = 160, height: int = 48) -> None:
        self.socket = str(tmp_path / "tmux.sock")
        env = {"VIGIL_HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT),
               "TERM": "xterm-256color", "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
        exports = " ".join(f"{k}={json.dumps(v)}" for k, v in env.items())
        # a COLUMNS/LINES that leaked into tmux's environment would pin the app to another size
        arguments = " ".join(json.dumps(a) for a in args)
        command = (f"cd {json.dumps(str(tmp_path))} && exec env -u COLUMNS -u LINES {exports} "
                   f"{sys.executable} -m tui_app {arguments}")
        self.tmux("new-session", "-d", "-s", "vigil", "-x", str(width), "-y", str(height), command)
        self.tmux("set-option", "-t", "vigil", "remain-on-exit", "on")

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, check=True,
                              timeout=20).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "vigil")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "vigil", *keys)

    def pane(self, field: str) -> str:
        return self.tmux("display-message", "-p", "-t", "vigil", f"#{{{field}}}").strip()

    def wait_for(self, check: Callable[[str], bool], what: str, timeout: float = 60.0) -> str:
        """The screen once it passes `check` and has stopped changing (a capture can fall between
        two halves of a repaint)."""
        deadline = time.monotonic() + timeout
        previous = None
        while True:
            screen = self.screen()
            if check(screen) and screen == previous:
                return screen
            previous = screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the screen shows:\n{screen}")
            time.sleep(0.2)

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=20)


def wait_exited(pid: int, timeout: float = DEADLINE_S) -> None:
    """Vigil's process has ended (a zombie tmux has not reaped yet counts: it runs nothing)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pid not in live_pids():
            return
        time.sleep(0.1)
    raise AssertionError(f"vigil (pid {pid}) is still running")


def test_the_demo_in_a_terminal_answered_with_keys(tmp_path):
    term = Terminal(tmp_path, [])
    try:
        screen = term.wait_for(lambda s: "Approve Bash?" in s, "the first Bash approval", timeout=90)
        assert "Run `python3 -m unittest -v` in" in screen and "y allow once" in screen
        assert "[demo]" in screen
        time.sleep(GUARD_S)
        term.keys("y")
        screen = term.wait_for(lambda s: "Approve Edit?" in s, "the Edit approval")
        assert "Edit calc/stats.py: 1 line replaced" in screen
        assert "+     return (ordered[middle - 1] + ordered[middle]) / 2" in screen
        assert "-     return ordered[middle]" in screen
        time.sleep(GUARD_S)
        term.keys("y")
        screen = term.wait_for(lambda s: "Run `python3 -m unittest` in" in s, "the re-run's approval")
        time.sleep(GUARD_S)
        term.keys("y")
        screen = term.wait_for(lambda s: " · idle · " in s and "Ran 405 tests" in s, "the end of the demo")
        # what a user sees: every row settled, the failing first run, the edit and the passing re-run
        rows = [line for line in screen.splitlines() if "▏" in line]
        table = "\n".join(line.split("▏", 1)[1] for line in rows)
        for number, tool, state in ((1, "Glob", "✓ done"), (2, "Read", "✓ done"), (3, "Read", "✓ done"),
                                    (4, "Bash", "✗ exit 1"), (5, "Grep", "✓ done"), (6, "Edit", "✓ done"),
                                    (7, "Bash", "✓ done")):
            assert any(line.split()[:2] == [str(number), tool] and state in line for line in table.splitlines()), (
                f"row {number} {tool} {state} not on screen:\n{table}")
        assert "exit 0" in screen and "OK" in screen and "▶" not in table and "◆" not in table
        assert "This demo is scripted." in screen
        (stats,) = tmp_path.glob("vigil-demo-*/sample_project/calc/stats.py")
        assert "return (ordered[middle - 1] + ordered[middle]) / 2" in stats.read_text()
        pid = int(term.pane("pane_pid"))
        term.keys("C-q")
        wait_exited(pid)
        assert term.pane("pane_dead_status") in ("0", "")  # tmux does not always learn the status
    finally:
        term.close()


@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP"])
def test_a_killed_vigil_takes_its_child_processes_with_it(tmp_path, how):
    mark = marker()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"tool_calls": [
        {"id": "b1", "name": "Bash", "input": {"command": f"sleep {mark} & sleep {mark}"}}]}]}))
    term = Terminal(tmp_path, ["--script", str(script), "--permission-mode", "bypassPermissions"], 120, 40)
    try:
        term.wait_for(lambda s: "Ask the agent" in s and " · idle · " in s, "the prompt")
        term.keys("g", "o", "Enter")
        deadline = time.monotonic() + DEADLINE_S
        while len(with_marker(mark)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(with_marker(mark)) >= 2, "the command did not start"
        pid = int(term.pane("pane_pid"))
        if how == "SIGTERM":
            os.kill(pid, signal.SIGTERM)
            wait_exited(pid)
        else:
            term.tmux("kill-session", "-t", "vigil")  # the terminal goes away: SIGHUP
            wait_exited(pid)
        assert wait_gone(mark) == {}
        # the session's log was closed properly: the call settled and the session ended
        (log,) = (tmp_path / "home" / "sessions").glob("*/events.jsonl")
        kinds = [json.loads(line)["type"] for line in log.read_text().splitlines()]
        assert kinds[-1] == "SessionEnded" and "ToolCallError" in kinds
    finally:
        term.close()
        kill_marked(mark)
