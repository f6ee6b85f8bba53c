"""Helpers for the file-tool tests: a session-like environment with the real FileState and the
real Read tool, which reports the baselines that Write and Edit check."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from tests.fakes import Recorder, make_env
from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.files.state import FileState
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.tools.read import READ


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
