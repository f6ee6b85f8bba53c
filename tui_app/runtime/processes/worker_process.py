"""CPU-bound work in a process of its own, so that cancelling it really stops it.

A thread cannot be stopped, and Python's `re` holds the interpreter for as long as one search
runs: a search over a gigabyte (or a pattern that backtracks for ever) on a thread kept a core
busy for minutes after its call timed out, and held off SIGTERM. Here the work is a standard-
library script run as `python -I -S SCRIPT` (a few tens of milliseconds to start), given a JSON
request on stdin and answering JSON on stdout. When the awaiting call is cancelled (a timeout,
Esc, the session closing) its process group is killed at once and the cancel completes only once
the process is gone. The reaper knows the group too, so not even kill -9 of Vigil leaves it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from tui_app.runtime.processes.groups import kill_group, spawn_group
from tui_app.runtime.processes.reaper import unwatch_group, watch_group

#: after SIGKILL, how long to wait for the kernel to take the process away
KILL_WAIT_S = 2.0


class WorkerFailed(Exception):
    """The worker process crashed or answered something that is not JSON."""


async def run_worker(script: Path, request: dict[str, Any]) -> Any:
    process = await spawn_group(
        sys.executable, "-I", "-S", str(script), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    watch_group(process.pid)
    try:
        out, err = await process.communicate(json.dumps(request).encode("utf-8"))
    except BaseException:
        kill_group(process.pid)
        with contextlib.suppress(Exception):
            await asyncio.shield(asyncio.wait_for(process.wait(), KILL_WAIT_S))
        raise
    finally:
        unwatch_group(process.pid)
    if process.returncode != 0:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit code {process.returncode}"]
        raise WorkerFailed(last[0])
    try:
        return json.loads(out)
    except ValueError:
        raise WorkerFailed("the worker's answer was not JSON") from None
