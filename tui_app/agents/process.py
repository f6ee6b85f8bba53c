"""An external agent's process: started in its own process group in the session's cwd, spoken to
in JSON lines, stopped with everything it started.

The agent leads a new session (`start_new_session=True`), so it and the shells it forks share one
process group; stopping it closes its stdin (a clean exit), then TERMs the group and every
descendant that left it, then KILLs what is left. The group is also in the process-wide registry
of `runtime.processes`, so no exit path of Vigil leaves the agent running. The last lines of its
stderr are kept for the one-line error when it exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections import deque
from collections.abc import Sequence
from typing import Any

from tui_app.runtime.processes import groups as processes
from tui_app.runtime.results.sanitize import neutralize

#: a line of the agent's stdout may carry a whole file (a Read result, a Write's content)
LINE_LIMIT = 256 * 1024 * 1024
STDERR_LINES = 12
#: after stdin is closed, how long the agent may take to exit by itself
EXIT_WAIT_S = 2.0
TERM_GRACE_S = 3.0


class AgentStartError(Exception):
    """The agent could not be started; the message is one line for the user."""


class AgentProcess:
    def __init__(self, argv: Sequence[str], *, cwd: str, env: dict[str, str], label: str) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.env = env
        self.label = label
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        self._stderr_task: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()
        self._stopping = False

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode if self.proc is not None else None

    async def start(self) -> None:
        try:
            self.proc = await processes.spawn_group(
                *self.argv, cwd=self.cwd, env=self.env, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=LINE_LIMIT)
        except OSError as exc:
            raise AgentStartError(f"could not start {self.label} ({self.argv[0]}): "
                                  f"{exc.strerror or exc}") from None
        processes.track(self.proc.pid)
        self._stderr_task = asyncio.ensure_future(self._read_stderr())

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        with contextlib.suppress(Exception):
            while line := await self.proc.stderr.readline():
                text = neutralize(line.decode("utf-8", "replace")).strip()
                if text:
                    self.stderr_tail.append(text)

    async def send(self, obj: dict[str, Any]) -> bool:
        """Write one JSON line; False when the agent is gone (its exit is reported by the reader)."""
        if not self.alive or self.proc is None or self.proc.stdin is None:
            return False
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        async with self._write_lock:
            try:
                self.proc.stdin.write(data)
                await self.proc.stdin.drain()
            except (ConnectionError, RuntimeError, OSError):
                return False
        return True

    async def read(self) -> dict[str, Any] | None:
        """The next JSON object the agent wrote; None once its stdout has ended. A line that is
        not a JSON object (a stray print) is kept with the stderr tail and skipped."""
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            try:
                line = await self.proc.stdout.readline()
            except (ValueError, asyncio.LimitOverrunError):
                self.stderr_tail.append(f"(a line of {self.label}'s output was too long and was skipped)")
                continue
            if not line:
                return None
            try:
                obj = json.loads(line)
            except ValueError:
                text = neutralize(line.decode("utf-8", "replace")).strip()
                if text:
                    self.stderr_tail.append(text[:500])
                continue
            if isinstance(obj, dict):
                return obj

    async def wait(self) -> int | None:
        if self.proc is None:
            return None
        code = await self.proc.wait()
        if self._stderr_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        return code

    def exit_message(self) -> str:
        """'Claude Code exited with code 1: <its last stderr lines>' (one line)."""
        code = self.returncode
        how = f"exited with code {code}" if code is not None and code >= 0 else (
            f"was killed by signal {-code}" if code is not None else "stopped answering")
        tail = " | ".join(list(self.stderr_tail)[-3:])
        return f"{self.label} {how}" + (f": {tail}" if tail else " (it wrote nothing to stderr)")

    async def stop(self) -> None:
        """Close stdin, give the agent a moment to exit, then end its group and its descendants."""
        proc = self.proc
        if proc is None or self._stopping:
            return
        self._stopping = True
        pgid = proc.pid
        strays = processes.targets_of(pgid, leader=proc.pid)  # taken while the leader still lives
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        if proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), EXIT_WAIT_S)
        strays |= processes.targets_of(pgid)
        await processes.terminate(pgid, strays, TERM_GRACE_S)
        with contextlib.suppress(Exception):  # reaped, or stuck in the kernel: nothing more to do
            await asyncio.wait_for(proc.wait(), 1.0)
        processes.untrack(pgid)
        if self._stderr_task is not None and not self._stderr_task.done():
            self._stderr_task.cancel()


def agent_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The agent runs with the user's environment (its keys, its PATH) plus `extra`."""
    env = dict(os.environ)
    env.update(extra or {})
    return env
