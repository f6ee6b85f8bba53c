"""One command hook as a process: JSON on stdin, stdout and stderr captured, a timeout that kills
the whole process group.

The hook runs through `bash -c` (or exec'd directly when it gives `args`) in the session's
directory, in a new session: no controlling terminal, its own process group. Its answer is taken
when it *exits*: a child it left behind (`sleep 777 & exit 0`) may keep its stdout open, so the
pipes are drained for at most `DRAIN_AFTER_EXIT_S` more, then the group is killed; that is an
ordinary exit, not a timeout. Only a hook that has not exited when its timeout ends times out:
its group gets SIGTERM, then SIGKILL after a grace.

A subprocess *protocol* rather than `Process.wait()`: on Python 3.11 `wait()` returns only once
every pipe is closed, which is exactly what a background child prevents.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Literal

from tui_app.runtime.hooks.config import HookHandler
from tui_app.runtime.processes.groups import start_whole
from tui_app.runtime.processes.reaper import unwatch_group, watch_group

MAX_OUTPUT_BYTES = 1 << 20
DRAIN_AFTER_EXIT_S = 1.0
KILL_GRACE_S = 1.0


@dataclass(frozen=True)
class ProcessResult:
    status: Literal["exited", "timeout", "spawn_failed"]
    exit_code: int | None
    stdout: str
    stderr: str
    duration_ms: int
    pgid: int | None = None
    error: str = ""


class _HookProtocol(asyncio.SubprocessProtocol):
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.out = bytearray()
        self.err = bytearray()
        #: the hook process itself exited (its answer is final)
        self.exited: asyncio.Future[None] = loop.create_future()
        #: … and every pipe reached end of file
        self.closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        into = self.out if fd == 1 else self.err
        if len(into) < MAX_OUTPUT_BYTES:
            chunk = data if isinstance(data, bytes) else data.encode()
            into.extend(chunk[: MAX_OUTPUT_BYTES - len(into)])

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def run_hook_process(
    handler: HookHandler,
    payload: bytes,
    cwd: str,
    env: dict[str, str],
    kill_grace_s: float = KILL_GRACE_S,
) -> ProcessResult:
    started = time.perf_counter()

    def elapsed() -> int:
        return int((time.perf_counter() - started) * 1000)

    argv = ["bash", "-c", handler.command] if handler.args is None else [handler.command, *handler.args]
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await start_whole(loop.subprocess_exec(
            lambda: _HookProtocol(loop), *argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True,
        ), _end_unwanted)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        return ProcessResult("spawn_failed", None, "", "", elapsed(), error=f"{argv[0]}: {reason}")
    pgid = transport.get_pid()  # a new session: the hook leads its own process group
    watch_group(pgid)
    try:
        _feed(transport, payload)
        try:
            await asyncio.wait_for(asyncio.shield(protocol.exited), handler.timeout_s)
        except TimeoutError:
            await _kill_group(protocol, pgid, kill_grace_s)
            return ProcessResult("timeout", None, _text(protocol.out), _text(protocol.err), elapsed(), pgid,
                                 error=f"timed out after {handler.timeout_s:g}s")
        # the answer is in; what it left behind gets a moment to finish writing, then goes
        await asyncio.wait({protocol.closed}, timeout=DRAIN_AFTER_EXIT_S)
        code = transport.get_returncode()
        _signal_group(pgid, signal.SIGKILL)
        await _group_gone(pgid)
        return ProcessResult("exited", code, _text(protocol.out), _text(protocol.err), elapsed(), pgid)
    except asyncio.CancelledError:
        # the answer it would have given is no longer wanted (the race was lost, the turn aborted)
        _signal_group(pgid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.shield(_group_gone(pgid))
        raise
    finally:
        unwatch_group(pgid)
        transport.close()


async def _end_unwanted(started: tuple[asyncio.SubprocessTransport, _HookProtocol]) -> None:
    """A hook started just as its answer stopped being wanted (the race was lost, the turn ended)."""
    transport, _ = started
    pgid = transport.get_pid()
    _signal_group(pgid, signal.SIGKILL)
    transport.close()
    await _group_gone(pgid)


def _feed(transport: asyncio.SubprocessTransport, payload: bytes) -> None:
    stdin = transport.get_pipe_transport(0)
    if stdin is None:
        return
    with contextlib.suppress(OSError):  # a hook may exit without reading its input
        stdin.write(payload)  # type: ignore[attr-defined]
        stdin.close()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _kill_group(protocol: _HookProtocol, pgid: int, grace_s: float) -> None:
    _signal_group(pgid, signal.SIGTERM)
    await asyncio.wait({protocol.exited}, timeout=grace_s)
    # always: children that ignored TERM, or outlived the leader, are still in the group
    _signal_group(pgid, signal.SIGKILL)
    await asyncio.wait({protocol.exited}, timeout=2.0)
    await _group_gone(pgid)


async def _group_gone(pgid: int, limit_s: float = 2.0) -> None:
    """A killed process needs a moment to die; return once no live member of the group is left
    (a zombie counts as gone: it runs nothing, and an orphan's may linger where PID 1 never reaps)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if not _live_members(pgid):
            return
        await asyncio.sleep(0.005)


def _live_members(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not os.path.isdir("/proc/self"):
        return True
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def _text(data: bytearray) -> str:
    return bytes(data).decode("utf-8", "replace")
