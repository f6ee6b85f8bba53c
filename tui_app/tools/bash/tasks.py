"""Background shell tasks: started by `Bash(run_in_background=true)`, read with TaskOutput,
stopped with TaskStop, and all stopped when the session closes (`aclose`).

Each task writes every byte of its output (stdout and stderr, in arrival order) to its own
artifact, visible while it grows; reading returns what was written since the last read, so memory
stays flat however long a task runs. The session registers one `BackgroundTasks` as the service
"background_tasks".
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import itertools
import re
import tempfile
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tui_app.runtime.results.artifacts import ArtifactStore, ArtifactWriter
from tui_app.tools.bash.output import skip_continuation
from tui_app.tools.bash.shell_run import ShellRun, Stream, Wrap

Status = Literal["running", "completed", "failed", "killed"]
DEFAULT_READ_BYTES = 30_000


@dataclass
class NewOutput:
    text: str
    #: bytes of new output passed over because more arrived than one read returns
    skipped: int
    status: Status
    exit_code: int | None


@dataclass
class BackgroundTask:
    id: str
    command: str
    cwd: str
    writer: ArtifactWriter
    started_at: float = field(default_factory=time.time)
    run: ShellRun | None = None
    status: Status = "running"
    exit_code: int | None = None
    ended_at: float | None = None
    bytes: int = 0
    write_error: str | None = None
    read_offset: int = 0
    watcher: asyncio.Task[None] | None = None
    on_end: Callable[[], Awaitable[None]] | None = None
    _decoder: Any = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace"))

    @property
    def path(self) -> str:
        return str(self.writer.path)

    @property
    def uri(self) -> str:
        return self.writer.uri

    @property
    def running(self) -> bool:
        return self.status == "running"

    def on_output(self, stream: Stream, data: bytes) -> None:
        self.bytes += len(data)
        if self.write_error is not None:
            return
        try:
            self.writer.write(data)
        except Exception as exc:  # disk full: the task keeps running, its output is lost, and we say so
            self.write_error = str(exc) or type(exc).__name__


class BackgroundTasks:
    def __init__(self, grace_s: float = 6.0) -> None:
        self.grace_s = grace_s
        self._tasks: dict[str, BackgroundTask] = {}
        self._ids = itertools.count(1)
        self._fallback: ArtifactStore | None = None

    def _store(self, artifacts: Any) -> Any:
        if artifacts is not None:
            return artifacts
        if self._fallback is None:  # a session without an artifact store still needs somewhere to write
            self._fallback = ArtifactStore("background", tempfile.mkdtemp(prefix="vigil-tasks-"))
        return self._fallback

    async def start(self, command: str, cwd: str, *, call_id: str, env: dict[str, str],
                    artifacts: Any = None, wrap: Wrap | None = None,
                    on_end: Callable[[], Awaitable[None]] | None = None) -> BackgroundTask:
        """`wrap` as for ShellRun.start (the sandbox); `on_end` runs once the task has ended."""
        task_id = f"bash_{next(self._ids)}"
        writer = self._store(artifacts).open_writer(f"{call_id}-{task_id}", "Bash", visible_while_writing=True)
        task = BackgroundTask(id=task_id, command=command, cwd=cwd, writer=writer, on_end=on_end)
        try:
            task.run = await ShellRun.start(command, cwd, env, task.on_output, self.grace_s, wrap=wrap)
        except BaseException:
            writer.abort()
            raise
        self._tasks[task_id] = task
        task.watcher = asyncio.ensure_future(self._watch(task))
        return task

    async def _watch(self, task: BackgroundTask) -> None:
        run = task.run
        assert run is not None
        try:
            await asyncio.shield(run.protocol.closed)
        except asyncio.CancelledError:
            # the loop is going away without the session closing (asyncio.run at exit): end it
            if task.status == "running":
                task.status = "killed"
            await run.stop(self.grace_s)
            raise
        finally:
            task.exit_code = run.exit_code
            if task.status == "running":
                task.status = "completed" if task.exit_code == 0 else "failed"
            task.ended_at = time.time()
            run.release()
            if task.on_end is not None:
                with contextlib.suppress(Exception):
                    await task.on_end()
            if not task.writer.closed:
                try:
                    task.writer.close()
                except Exception as exc:
                    task.write_error = task.write_error or str(exc)

    def get(self, task_id: str) -> BackgroundTask | None:
        return self._tasks.get(task_id)

    def list(self) -> list[BackgroundTask]:
        return list(self._tasks.values())

    async def wait(self, task: BackgroundTask, timeout_s: float | None) -> bool:
        """Wait for the task to end; False when it is still running after `timeout_s`."""
        if task.watcher is None or task.watcher.done():
            return True
        done, _ = await asyncio.wait({task.watcher}, timeout=timeout_s)
        return bool(done)

    @staticmethod
    def _settled_state(task: BackgroundTask) -> tuple[Status, int | None]:
        """The task's status and exit code, taken before its output is flushed to the file: what
        is read afterwards is then complete for that status."""
        status, exit_code = task.status, task.exit_code
        if not task.writer.closed:
            try:
                task.writer.flush()
            except (OSError, ValueError):
                pass
        return status, exit_code

    def read_new(self, task: BackgroundTask, max_bytes: int = DEFAULT_READ_BYTES) -> NewOutput:
        """What the task wrote since the last read: at most `max_bytes` (the latest ones)."""
        status, exit_code = self._settled_state(task)
        try:
            with open(task.path, "rb") as handle:
                handle.seek(0, 2)
                end = handle.tell()
                start = task.read_offset
                skipped = max(0, end - start - max_bytes)
                handle.seek(start + skipped)
                data = handle.read(end - start - skipped)
        except OSError:
            data, skipped, end = b"", 0, task.read_offset
        task.read_offset = end
        if skipped:
            task._decoder.reset()
            data = skip_continuation(data)
        text = task._decoder.decode(data, final=status != "running")
        return NewOutput(text=text, skipped=skipped, status=status, exit_code=exit_code)

    def read_new_matching(self, task: BackgroundTask, pattern: re.Pattern[str],
                          max_bytes: int = DEFAULT_READ_BYTES) -> NewOutput:
        """The new lines that match `pattern` (the latest `max_bytes` of them); the others are
        passed over for good. A running task's unfinished last line waits for the next read."""
        status, exit_code = self._settled_state(task)
        kept: deque[str] = deque()
        size = skipped = 0
        offset = task.read_offset
        try:
            with open(task.path, "rb") as handle:
                handle.seek(offset)
                for raw in handle:
                    if not raw.endswith(b"\n") and status == "running":
                        break
                    offset += len(raw)
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    if not pattern.search(line):
                        continue
                    kept.append(line)
                    size += len(line.encode()) + 1
                    while size > max_bytes and len(kept) > 1:
                        dropped = len(kept.popleft().encode()) + 1
                        size -= dropped
                        skipped += dropped
        except OSError:
            pass
        task.read_offset = offset
        task._decoder.reset()  # the next plain read starts on a line boundary
        text = "".join(line + "\n" for line in kept)
        return NewOutput(text=text, skipped=skipped, status=status, exit_code=exit_code)

    async def stop(self, task: BackgroundTask) -> bool:
        """Stop a running task (its whole process group); False if it had already ended."""
        if not task.running or task.run is None:
            return False
        task.status = "killed"
        await task.run.stop(self.grace_s)
        if task.watcher is not None:
            await asyncio.wait({task.watcher})
        return True

    async def aclose(self) -> None:
        """The session is closing: no background task outlives it."""
        running = [t for t in self._tasks.values() if t.running]
        await asyncio.gather(*(self.stop(t) for t in running), return_exceptions=True)
