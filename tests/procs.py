"""Looking for processes from tests: by a unique marker in their command line, and by group.

A process counts as alive unless it is gone or a zombie (PID 1 here does not reap orphans, so a
killed orphan may stay a zombie; it runs nothing)."""

from __future__ import annotations

import os
import secrets
import time

from tests.waiting import DEADLINE_S, eventually


def marker() -> str:
    """A unique number usable as a `sleep` argument: `sleep 3000.<digits>` sleeps ~50 min."""
    return f"3000.{secrets.randbelow(10**9):09d}"


def _stat(pid: int) -> tuple[str, int] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    rest = data[data.rfind(b")") + 2 :].split()
    return rest[0].decode(), int(rest[2])


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def live_pids() -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = _stat(int(name))
            if stat is not None and stat[0] != "Z":
                out.append(int(name))
    return out


def with_marker(mark: str) -> dict[int, int]:
    """Live processes whose command line holds `mark`: pid → process group."""
    me = os.getpid()
    out = {}
    for pid in live_pids():
        if pid != me and mark in _cmdline(pid):
            stat = _stat(pid)
            if stat is not None and stat[0] != "Z":
                out[pid] = stat[1]
    return out


def in_groups(pgids: set[int]) -> list[int]:
    return [pid for pid in live_pids() if (_stat(pid) or ("Z", -1))[1] in pgids]


async def wait_for_marker(mark: str, count: int = 1, timeout: float = DEADLINE_S) -> dict[int, int]:
    def enough() -> dict[int, int] | None:
        found = with_marker(mark)
        return found if len(found) >= count else None

    return await eventually(enough, f"{count} process(es) with {mark}", timeout)


def wait_gone(mark: str, timeout: float = DEADLINE_S) -> dict[int, int]:
    deadline = time.monotonic() + timeout
    while True:
        left = with_marker(mark)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


def kill_marked(mark: str) -> None:
    """Test cleanup: never leave a marked process behind, even when an assertion failed."""
    for pid in with_marker(mark):
        try:
            os.kill(pid, 9)
        except OSError:
            pass
