"""Two TUIs attached to one session of the host, side by side in a real terminal (tmux): one
answers, both screens change; one quits, the session goes on."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from tests.host.test_host_cli import waiting
from tests.host_kit import HostKit, write_steps

pytestmark = pytest.mark.usefixtures("tmux_available")
GUARD_S = 0.45  # the dialogs ignore keys for their first 300 ms


class Panes:
    def __init__(self, host: HostKit, session: str, args: str = "", names: tuple[str, ...] = ("one", "two")) -> None:
        self.socket = str(host.root / "tmux.sock")
        keep = ("VIGIL_HOME", "HOME", "XDG_CONFIG_HOME", "PYTHONPATH")
        exports = " ".join(f"{k}={json.dumps(host.env[k])}" for k in keep)
        command = (
            f"cd {json.dumps(str(host.project))} && exec env -u COLUMNS -u LINES TERM=xterm-256color "
            f"{exports} {sys.executable} -m tui_app {args or f'attach {session}'}"
        )
        for name in names:  # not "left" / "right": tmux reads those as a pane's position
            self.tmux("new-session", "-d", "-s", name, "-x", "140", "-y", "44", command)
            self.tmux("set-option", "-t", name, "remain-on-exit", "on")

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, check=True, timeout=20
        ).stdout

    def screen(self, name: str) -> str:
        return self.tmux("capture-pane", "-p", "-S", "-100", "-t", name)

    def wait_for(self, name: str, check: Callable[[str], bool], what: str, timeout: float = 90.0) -> str:
        deadline = time.monotonic() + timeout
        previous = None
        while True:
            screen = self.screen(name)
            if check(screen) and screen == previous:
                return screen
            previous = screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what} in {name}; the screen shows:\n{screen}")
            time.sleep(0.2)

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=20)


def test_two_tuis_on_one_session_one_answers_both_see_it_one_quits_the_session_goes_on(host: HostKit) -> None:
    session = host.new(write_steps(after="All written."), "write the file")
    waiting(host, 1)
    panes = Panes(host, session)
    try:
        for name in ("one", "two"):
            panes.wait_for(name, lambda s: "Approve Write?" in s, "the approval dialog")
        time.sleep(GUARD_S)
        panes.tmux("send-keys", "-t", "one", "y")
        for name in ("one", "two"):
            panes.wait_for(name, lambda s: "Approve Write?" not in s and "All written." in s, "the answer's effect")
        assert (host.project / "out.txt").read_text() == "written\n"
        panes.tmux("send-keys", "-t", "two", "C-q")
        right = panes.wait_for("two", lambda s: "detached;" in s, "the detach message")
        assert f"vigil attach {session}" in right
        row = host.row(session)
        assert row["state"] == "idle" and row["clients"] == 1  # the left one is still attached
        assert "All written." in panes.screen("one")
    finally:
        panes.close()


def test_vigil_host_opens_the_tui_on_a_new_session_of_the_host_and_quitting_detaches(host: HostKit) -> None:
    script = host.script([{"text": "Hello from the host."}])
    panes = Panes(host, "", args=f"--host --script {script}", names=("one",))
    try:
        panes.wait_for("one", lambda s: "[host]" in s and "idle" in s, "the TUI attached to a new session")
        panes.tmux("send-keys", "-t", "one", "hi", "Enter")
        panes.wait_for("one", lambda s: "Hello from the host." in s, "the answer")
        panes.tmux("send-keys", "-t", "one", "C-q")
        screen = panes.wait_for("one", lambda s: "detached;" in s, "the detach message")
        (row,) = host.ls()
        assert f"vigil attach {row['id']}" in screen and row["state"] == "idle"
        assert [e["prompt"] for e in host.events(row["id"]) if e["type"] == "TurnStarted"] == ["hi"]
    finally:
        panes.close()
