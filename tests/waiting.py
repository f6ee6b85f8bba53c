"""Waiting for an event in a test: poll until it happened, with a deadline generous enough for a
machine whose cores are all busy. The deadline only bounds a failure; a passing test never waits
for it, so it costs nothing to be generous."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

#: ten times anything the suite waits for on a loaded 2-core machine
DEADLINE_S = 60.0


async def eventually(predicate: Callable[[], Any], what: str, timeout: float = DEADLINE_S,
                     interval: float = 0.02) -> Any:
    """The predicate's first truthy value; an AssertionError naming `what` after `timeout` seconds."""
    end = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() >= end:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(interval)
    return value


#: a call that takes longer than this hung: the tests' `sleep`s last 50 minutes (tests/procs.marker)
#: and their timeouts are set longer than this, so only a hang crosses it, never a slow machine
HANG_S = 60.0
