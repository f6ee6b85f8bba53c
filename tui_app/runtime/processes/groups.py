"""Finding and ending process groups: the shells Bash starts, and the external agents Vigil supervises.

Every shell Vigil starts leads a new session (`start_new_session=True`), so it and everything it
forks share one process group. Ending a call sends TERM to that group, to descendants that left it
(`setsid`), and to any process still holding the call's output pipes; waits up to a grace period;
then sends KILL and waits until none is left.

A process counts as gone when it no longer exists or is a zombie: a zombie runs nothing, and PID 1
of a container often never reaps orphans, so zombies may linger for good. Liveness therefore comes
from /proc (state `Z` is ignored), with `killpg(pgid, 0)` as the fallback where there is no /proc.

The groups that are alive are also kept in a process-wide registry: if Vigil exits without its
session closing (an exception, a KeyboardInterrupt that tore the loop down), an atexit handler
ends them, so no exit path leaves a shell running.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from tui_app.runtime.processes import shutdown
from tui_app.runtime.processes.reaper import unwatch_group, watch_group

T = TypeVar("T")

PROC = "/proc"
POLL_S = 0.02
#: after KILL, how long to wait for the kernel to finish (a process in uninterruptible sleep)
KILL_WAIT_S = 2.0


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    state: str
    ppid: int
    pgrp: int


def has_proc() -> bool:
    return os.path.isdir(f"{PROC}/self")


def read_stat(pid: int) -> ProcInfo | None:
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    # `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses, so split at the last ')'
    rest = data[data.rfind(b")") + 2 :].split()
    if len(rest) < 3:
        return None
    return ProcInfo(pid, rest[0].decode("ascii", "replace"), int(rest[1]), int(rest[2]))


def scan() -> list[ProcInfo]:
    out = []
    try:
        names = os.listdir(PROC)
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            info = read_stat(int(name))
            if info is not None:
                out.append(info)
    return out


def is_alive(pid: int) -> bool:
    info = read_stat(pid)
    if info is not None:
        return info.state != "Z"
    if has_proc():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def group_members(pgid: int, table: Iterable[ProcInfo] | None = None) -> set[int]:
    """Live (non-zombie) members of a process group."""
    if not has_proc():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return set()
        except PermissionError:
            pass
        return {pgid}
    return {p.pid for p in (table if table is not None else scan()) if p.pgrp == pgid and p.state != "Z"}


def descendants(pid: int, table: Iterable[ProcInfo] | None = None) -> set[int]:
    """Live descendants of `pid` (found through parent links, so also those that left the group)."""
    children: dict[int, list[ProcInfo]] = {}
    for info in table if table is not None else scan():
        children.setdefault(info.ppid, []).append(info)
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child.pid not in out:
                if child.state != "Z":
                    out.add(child.pid)
                todo.append(child.pid)
    return out


def cmdline(pid: int) -> list[str] | None:
    try:
        with open(f"{PROC}/{pid}/cmdline", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return data.decode("utf-8", "surrogateescape").split("\0")[:-1]


def pipe_holders(inodes: Iterable[int]) -> set[int]:
    """Processes (other than Vigil) with one of these pipes open: what keeps a call's output open."""
    wanted = {f"pipe:[{ino}]" for ino in inodes}
    me = os.getpid()
    out: set[int] = set()
    if not wanted or not has_proc():
        return out
    for info in scan():
        if info.pid == me or info.state == "Z":
            continue
        try:
            fds = os.listdir(f"{PROC}/{info.pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{PROC}/{info.pid}/fd/{fd}") in wanted:
                    out.add(info.pid)
                    break
            except OSError:
                continue
    return out


# ---- ending processes ----------------------------------------------------------------------------

def _signal(pgid: int | None, pids: Iterable[int], sig: int) -> None:
    if pgid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _survivors(pgid: int | None, pids: Iterable[int]) -> set[int]:
    table = scan() if has_proc() else None
    alive = group_members(pgid, table) if pgid is not None else set()
    return alive | {pid for pid in pids if is_alive(pid)}


def targets_of(pgid: int | None, leader: int | None = None, extra: Iterable[int] = ()) -> set[int]:
    """Processes outside the group that still belong to the call: the leader's descendants (taken
    while the leader lives; an orphan's parent link is lost) and the given ones (pipe holders)."""
    table = scan() if has_proc() else []
    out = set(extra)
    if leader is not None:
        out |= descendants(leader, table)
    return out


async def terminate(pgid: int | None, pids: Iterable[int] = (), grace_s: float = 6.0) -> set[int]:
    """TERM the group and `pids`, wait up to `grace_s`, KILL what is left, wait until none remains.
    Returns the processes that outlived KILL (empty unless something is stuck in the kernel)."""
    pids = set(pids)
    _signal(pgid, pids, signal.SIGTERM)
    began = time.monotonic()
    while _survivors(pgid, pids):
        # looked up each time: a shutdown (SIGTERM to Vigil) that begins meanwhile shortens it
        if time.monotonic() - began >= shutdown.grace(grace_s):
            break
        await asyncio.sleep(POLL_S)
    else:
        return set()
    _signal(pgid, pids, signal.SIGKILL)
    deadline = time.monotonic() + KILL_WAIT_S
    while left := _survivors(pgid, pids):
        if time.monotonic() >= deadline:
            return left
        await asyncio.sleep(POLL_S)
    return set()


# ---- the registry of live groups, for the last-resort exit handler --------------------------------

_live: dict[int, set[int]] = {}
_lock = threading.Lock()
_registered = False


async def finish_despite_cancel(future: Awaitable[object]) -> bool:
    """Await `future` to the end even when cancelled meanwhile (cleanup must complete); returns
    whether a cancel arrived, so the caller can re-raise it afterwards."""
    task = asyncio.ensure_future(future)
    cancelled = False
    while True:
        try:
            await asyncio.shield(task)
            return cancelled
        except asyncio.CancelledError:
            if task.cancelled():
                raise
            cancelled = True


async def start_whole(spawn: Awaitable[T], end: Callable[[T], Awaitable[object]]) -> T:
    """Await a process start that a cancellation cannot cut in half. Cancelled while it connects
    the pipes, asyncio (3.11) kills only the leader and then waits for pipes that were never
    connected, for ever (seen: SIGTERM during a ReadArtifact search hung the exit; a permission
    hook that lost its race to the user's answer hung a test's teardown). Here the start runs to
    its end, `end` stops what it started, and the cancellation goes on."""
    starting = asyncio.ensure_future(spawn)
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await finish_despite_cancel(starting)
            await finish_despite_cancel(end(starting.result()))
        raise


async def spawn_group(*argv: str, **kwargs: object) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec(…, start_new_session=True)` started whole (`start_whole`);
    cancelled, the new group is killed."""
    async def end(process: asyncio.subprocess.Process) -> None:
        kill_group(process.pid)

    return await start_whole(asyncio.create_subprocess_exec(*argv, start_new_session=True, **kwargs), end)


def kill_group(pgid: int) -> None:
    """SIGKILL a whole process group, if it is still there."""
    _signal(pgid, (), signal.SIGKILL)


def track(pgid: int) -> None:
    global _registered
    watch_group(pgid)  # the reaper ends the group should Vigil die without a word (kill -9)
    with _lock:
        _live.setdefault(pgid, set())
        if not _registered:
            atexit.register(kill_all_tracked)
            _registered = True


def track_extra(pgid: int, pids: Iterable[int]) -> None:
    with _lock:
        _live.setdefault(pgid, set()).update(pids)


def untrack(pgid: int) -> None:
    with _lock:
        _live.pop(pgid, None)
    unwatch_group(pgid)


def tracked() -> dict[int, set[int]]:
    with _lock:
        return {pgid: set(pids) for pgid, pids in _live.items()}


def kill_all_tracked() -> None:
    """Kill every group still tracked: runs at interpreter exit."""
    groups = tracked()
    if not groups:
        return
    # a short grace: Vigil is on its way out and nothing will wait for it
    strays: set[int] = set()
    for pgid, pids in groups.items():
        strays |= pids | targets_of(pgid, leader=pgid)
    for pgid in groups:
        _signal(pgid, (), signal.SIGTERM)
    _signal(None, strays, signal.SIGTERM)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and any(_survivors(g, strays) for g in groups):
        time.sleep(POLL_S)
    for pgid in groups:
        _signal(pgid, (), signal.SIGKILL)
    _signal(None, strays, signal.SIGKILL)
    with _lock:
        _live.clear()
