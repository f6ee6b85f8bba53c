"""Helpers for the file-tool tests: a session-like environment with the real FileState, and the
Read tool that reports baselines.

Read is built on another branch. Until it is merged, `READ` here is a small reader that reports
baselines through the same interface (`record_read(path, data_sha256, size, mtime_ns, full)`), so
the read-before-write tests run unchanged against the real Read once it is there.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from dataclasses import dataclass
from typing import Any

from tests.fakes import SAFE, Recorder, make_env
from tui_app.runtime.contract import RawResult, StrictInput, ToolContext, ToolFailure, ToolSpec
from tui_app.runtime.files.state import FileState, absolute_path
from tui_app.runtime.pipeline import ToolCall, run_call


class _ReadInput(StrictInput):
    file_path: str
    offset: int | None = None
    limit: int | None = None


async def _read(args: _ReadInput, ctx: ToolContext) -> RawResult:
    path = absolute_path(args.file_path, ctx.cwd)
    try:
        mtime_ns = os.stat(path).st_mtime_ns
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise ToolFailure(f"File does not exist: {path}") from None
    lines = data.decode("utf-8", "replace").split("\n")
    start = max(1, args.offset or 1)
    end = start - 1 + (args.limit or 2000)
    window = lines[start - 1:end]
    full = start == 1 and end >= len(lines)
    chunk = "\n".join(window).encode("utf-8") if not full else data
    ctx.service("file_state").record_read(path=path, data_sha256=hashlib.sha256(chunk).hexdigest(),
                                          size=len(chunk), mtime_ns=mtime_ns, full=full)
    return RawResult(text="\n".join(f"{n:>6}\t{line}" for n, line in enumerate(window, start)))


try:
    from tui_app.tools.read import READ
except ImportError:  # not merged yet: the stand-in above speaks the same interface
    READ = ToolSpec(name="Read", description="read a file", handler=_read, input_model=_ReadInput, flags=SAFE)


class Caller:
    """Numbered calls through the real pipeline."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.n = 0

    def call(self, name: str, data: dict[str, Any]) -> ToolCall:
        self.n += 1
        return ToolCall(f"toolu_{self.n:02d}", name, data)

    async def __call__(self, name: str, data: dict[str, Any]):
        return await run_call(self.call(name, data), self.env)


@dataclass
class FileEnv:
    env: Any
    rec: Recorder
    fs: FileState
    call: Caller


def file_env(tmp_path: Any, *specs: ToolSpec, watch: bool = False, **kw: Any) -> FileEnv:
    """An env whose services hold a real FileState for `tmp_path` (bound to the recorder)."""
    env, rec = make_env(READ, *specs, cwd=str(tmp_path), **kw)
    fs = FileState(str(tmp_path), emit=rec, watch=watch)
    env.services["file_state"] = fs
    return FileEnv(env, rec, fs, Caller(env))


async def external_write(path: Any, text: str) -> None:
    """Another process changes the file (not this one, not Vigil)."""
    proc = await asyncio.create_subprocess_exec(
        "sh", "-c", 'printf "%s" "$1" > "$2"', "sh", text, str(path))
    assert await proc.wait() == 0
