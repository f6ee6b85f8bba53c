"""One shell command as a child process: its own session and process group, stdin closed, stdout
and stderr handed over chunk by chunk in the order they arrive, and ended as a whole.

The output goes through an asyncio subprocess *protocol* rather than two StreamReaders: each chunk
the loop reads is passed on at once, so the two streams keep their arrival order and nothing is
buffered here. The pipes keep their default size and are read as soon as they are readable: a
bigger pipe, or batching reads, lets one stream run up to a pipe's worth ahead of the other (a
last stderr line would land before the end of stdout), for no gain worth it (tried: within noise).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Awaitable, Callable
from functools import cache
from typing import Literal

from tui_app.runtime.processes import groups as proc_table

Stream = Literal["stdout", "stderr"]
OnOutput = Callable[[Stream, bytes], None]
Wrap = Callable[[list[str]], list[str]]

#: after the shell exits, how long its output may stay open before the holders count as strays
SETTLE_S = 0.25
#: more time for holders that are still forks of the shell itself: a `nohup job >/dev/null &`
#: the scheduler has not yet run holds the output only until it applies its redirection
LATE_FORK_S = 2.0


@cache
def shell_path() -> str:
    return shutil.which("bash") or "/bin/sh"


class _Protocol(asyncio.SubprocessProtocol):
    def __init__(self, on_output: OnOutput, loop: asyncio.AbstractEventLoop) -> None:
        self.on_output = on_output
        self.exited: asyncio.Future[None] = loop.create_future()
        #: the leader exited *and* both pipes reached end of file
        self.closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        self.on_output("stdout" if fd == 1 else "stderr", data if isinstance(data, bytes) else data.encode())

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


class ShellRun:
    """A started command. `start` → `wait_exit` → `settle` (or `stop`) → `release`."""

    def __init__(self, transport: asyncio.SubprocessTransport, protocol: _Protocol, command: str = "") -> None:
        self.transport = transport
        self.argv = [shell_path(), "-c", command]
        self.protocol = protocol
        self.pid: int = transport.get_pid()
        self.pgid = self.pid  # a session leader leads its own group
        proc_table.track(self.pgid)
        self.pipe_inodes: set[int] = set()
        for fd in (1, 2):
            pipe = transport.get_pipe_transport(fd)
            handle = pipe.get_extra_info("pipe") if pipe is not None else None
            try:
                self.pipe_inodes.add(os.fstat(handle.fileno()).st_ino)  # type: ignore[union-attr]
            except (AttributeError, ValueError, OSError):
                pass  # already at end of file and closed: nothing can hold it open
        self._stopping: asyncio.Future[set[int]] | None = None
        self.stopped_strays: set[int] = set()

    @classmethod
    async def start(cls, command: str, cwd: str, env: dict[str, str], on_output: OnOutput,
                    grace_s: float = 6.0, wrap: Wrap | None = None) -> ShellRun:
        """`wrap` turns the shell's argv into the argv really started (the sandbox puts bwrap in
        front); the shell inside keeps its own argv, which is what strays are told apart by."""
        loop = asyncio.get_running_loop()
        argv = [shell_path(), "-c", command]
        if wrap is not None:
            argv = wrap(argv)
        async def end_unwanted(started: tuple[asyncio.SubprocessTransport, _Protocol]) -> None:
            # the child may have forked already: end it all
            run = cls(*started, command)
            await run.stop(grace_s)
            run.release()

        transport, protocol = await proc_table.start_whole(loop.subprocess_exec(
            lambda: _Protocol(on_output, loop), *argv,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=cwd, env=env, start_new_session=True,
        ), end_unwanted)
        return cls(transport, protocol, command)

    @property
    def returncode(self) -> int | None:
        return self.transport.get_returncode()

    @property
    def exit_code(self) -> int | None:
        """The shell's exit status, with a death by signal N shown the way shells show it (128+N)."""
        code = self.returncode
        if code is None:
            return None
        return 128 - code if code < 0 else code

    async def wait_exit(self, timeout_s: float | None) -> bool:
        done, _ = await asyncio.wait({self.protocol.exited}, timeout=timeout_s)
        return bool(done)

    async def settle(self, grace_s: float) -> set[int]:
        """After the shell exited: wait for its output to close. Background jobs that still hold
        the output (`server &`) would keep the call open for ever; they are stopped, and returned."""
        if await self._closed_within(SETTLE_S):
            return set()
        holders = proc_table.pipe_holders(self.pipe_inodes)
        if any(proc_table.cmdline(pid) == self.argv for pid in holders):
            if await self._closed_within(LATE_FORK_S):
                return set()
            holders = proc_table.pipe_holders(self.pipe_inodes)
        strays = set(holders)
        for pid in holders:
            strays |= proc_table.descendants(pid)
        if strays:
            proc_table.track_extra(self.pgid, strays)
            await self._finish(proc_table.terminate(None, strays, grace_s))
            self.stopped_strays = strays
        await self._close_output()
        return strays

    async def stop(self, grace_s: float) -> None:
        """End the whole call: TERM the group, the leader's descendants that left it and whatever
        holds its output; KILL after `grace_s`. Completes even when cancelled, then re-raises."""
        if self._stopping is None:
            leader = self.pid if self.returncode is None else None
            extra = proc_table.targets_of(self.pgid, leader, proc_table.pipe_holders(self.pipe_inodes))
            extra.discard(os.getpid())
            proc_table.track_extra(self.pgid, extra)
            self._stopping = asyncio.ensure_future(proc_table.terminate(self.pgid, extra, grace_s))
        await self._finish(self._stopping)
        await self._finish(self._close_output())

    async def _finish(self, work: Awaitable[object]) -> None:
        if await proc_table.finish_despite_cancel(work):
            raise asyncio.CancelledError()

    async def _closed_within(self, seconds: float) -> bool:
        done, _ = await asyncio.wait({self.protocol.closed}, timeout=seconds)
        return bool(done)

    async def _close_output(self) -> None:
        """Read what is left, for at most a second; then close the pipes ourselves (a holder that
        survived KILL, or one we may not signal) so the call can end."""
        if await self._closed_within(1.0):
            return
        for fd in (1, 2):
            pipe = self.transport.get_pipe_transport(fd)
            if pipe is not None:
                pipe.close()
        await self._closed_within(1.0)

    def release(self) -> None:
        proc_table.untrack(self.pgid)
        if not self.transport.is_closing():
            self.transport.close()
