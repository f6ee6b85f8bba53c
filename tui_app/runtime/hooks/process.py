"""One command hook as a process: JSON on stdin, stdout and stderr captured, a timeout that kills
the whole process group.

The hook runs through `bash -c` (or exec'd directly when it gives `args`) in the session's
directory, in a new session: no controlling terminal, its own process group. On timeout the group
gets SIGTERM, then SIGKILL after a grace, so a hook's `sleep 600 &` dies with it. When the hook
exits but a child it left behind keeps its stdout open, Vigil stops reading after a short drain
instead of waiting for that child.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass
from typing import Literal

from tui_app.runtime.hooks.config import HookHandler

MAX_OUTPUT_BYTES = 1 << 20
DRAIN_AFTER_EXIT_S = 0.5
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
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=cwd, env=env, start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        return ProcessResult("spawn_failed", None, "", "", elapsed(), error=f"{argv[0]}: {reason}")
    pgid = proc.pid  # a new session: the hook leads its own process group
    out, err = bytearray(), bytearray()
    try:
        await asyncio.wait_for(_communicate(proc, payload, out, err), handler.timeout_s)
    except TimeoutError:
        await _kill_group(proc, pgid, kill_grace_s)
        return ProcessResult("timeout", None, _text(out), _text(err), elapsed(), pgid,
                             error=f"timed out after {handler.timeout_s:g}s")
    except asyncio.CancelledError:
        # the answer it would have given is no longer wanted (the race was lost, the turn aborted)
        _signal_group(pgid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.shield(proc.wait())
            await asyncio.shield(_group_gone(pgid))
        raise
    return ProcessResult("exited", proc.returncode, _text(out), _text(err), elapsed(), pgid)


async def _communicate(proc: asyncio.subprocess.Process, payload: bytes, out: bytearray, err: bytearray) -> None:
    tasks = [
        asyncio.ensure_future(_feed(proc, payload)),
        asyncio.ensure_future(_read(proc.stdout, out)),
        asyncio.ensure_future(_read(proc.stderr, err)),
    ]
    try:
        await proc.wait()
        await asyncio.wait(tasks, timeout=DRAIN_AFTER_EXIT_S)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _feed(proc: asyncio.subprocess.Process, payload: bytes) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(payload)
        await proc.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # a hook may exit without reading its input
    finally:
        with contextlib.suppress(Exception):
            proc.stdin.close()


async def _read(stream: asyncio.StreamReader | None, into: bytearray) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        if len(into) < MAX_OUTPUT_BYTES:
            into.extend(chunk[: MAX_OUTPUT_BYTES - len(into)])


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _kill_group(proc: asyncio.subprocess.Process, pgid: int, grace_s: float) -> None:
    _signal_group(pgid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), grace_s)
    # always: children that ignored TERM, or outlived the leader, are still in the group
    _signal_group(pgid, signal.SIGKILL)
    await proc.wait()
    await _group_gone(pgid)


async def _group_gone(pgid: int, limit_s: float = 2.0) -> None:
    """A killed process needs a moment to die; return once no member of the group is left."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        await asyncio.sleep(0.005)


def _text(data: bytearray) -> str:
    return bytes(data).decode("utf-8", "replace")
