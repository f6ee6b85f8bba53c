"""Running real `vigil` processes for the fault tests: a scripted headless session, its log, and
every process it started (found by a mark in their environment, which every descendant inherits,
whatever it did with its process group or its command line)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).parent.parent
MARK_VAR = "VIGIL_TEST_RUN"


def new_mark() -> str:
    return secrets.token_hex(8)


def vigil_env(home: Path, mark: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "VIGIL_REAPER"}  # this test's own reaper stays out
    # the orderly way out after SIGTERM, however loaded the machine: the hard deadline (4.5 s by
    # default) is a last resort with a test of its own; how fast the orderly way is, bench/faults.py says
    env.update({"PYTHONPATH": str(ROOT), "VIGIL_HOME": str(home), "VIGIL_SHUTDOWN_DEADLINE_S": "60",
                MARK_VAR: mark, **extra})
    return env


def start_vigil(args: list[str], home: Path, mark: str, **popen: object) -> subprocess.Popen:
    """A vigil in the background. Its output goes nowhere unless asked for: an unread pipe
    would fill up and stall it."""
    popen.setdefault("stdout", subprocess.DEVNULL)
    popen.setdefault("stderr", subprocess.DEVNULL)
    return subprocess.Popen([sys.executable, "-m", "tui_app", *args], env=vigil_env(home, mark),
                            **popen)  # type: ignore[call-overload]


def run_vigil(args: list[str], home: Path, mark: str | None = None, timeout: float = 120,
              **extra_env: str) -> subprocess.CompletedProcess:
    env = vigil_env(home, mark or new_mark(), **extra_env)
    return subprocess.run([sys.executable, "-m", "tui_app", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def write_script(path: Path, steps: list[dict]) -> Path:
    path.write_text(json.dumps({"steps": steps}))
    return path


def marked_processes(mark: str) -> list[int]:
    """Live processes whose environment carries the mark (zombies run nothing and do not count)."""
    wanted = f"{MARK_VAR}={mark}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                env = handle.read().split(b"\0")
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        if wanted in env and stat[stat.rfind(b")") + 2:].split()[0] != b"Z":
            found.append(int(name))
    return found


def wait_until_gone(mark: str, timeout: float) -> tuple[list[int], float]:
    """(what is still alive, seconds waited) once no marked process is left or `timeout` passed."""
    began = time.monotonic()
    while True:
        left = marked_processes(mark)
        if not left or time.monotonic() - began >= timeout:
            return left, time.monotonic() - began
        time.sleep(0.02)


def kill_marked(mark: str) -> None:
    """Test cleanup: nothing of a run outlives its test, even when an assertion failed."""
    for pid in marked_processes(mark):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def session_dirs(home: Path) -> list[Path]:
    root = home / "sessions"
    return sorted(root.iterdir()) if root.is_dir() else []


def log_lines(home: Path) -> int:
    dirs = session_dirs(home)
    if not dirs:
        return 0
    try:
        return (dirs[-1] / "events.jsonl").read_bytes().count(b"\n")
    except OSError:
        return 0


def wait_for(predicate, timeout: float, what: str, process: subprocess.Popen | None = None) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"vigil ended ({process.returncode}) before {what}: "
                                 f"{process.stderr.read().decode() if process.stderr else ''}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)
