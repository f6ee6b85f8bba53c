"""Timeout resolution and a pausable deadline.

Resolution (docs/architecture.md §7): a tool with no timeout → none; else the tool's own per-input budget; else,
when the tool allows it, the call's `timeout_ms` / `timeout`; else the tool default; else the
runtime default; capped at the tool's max. The cleanup grace is kept apart: the handler is told
the limit, the watchdog fires at limit + grace (a tool that enforces its own limit, like Bash,
gets that long to kill and reap its processes).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Any

from tui_app.runtime.contract import ToolSpec

RUNTIME_DEFAULT_TIMEOUT_MS = 300_000


@dataclass(frozen=True)
class ResolvedTimeout:
    limit_ms: int
    grace_ms: int = 0

    @property
    def watchdog_ms(self) -> int:
        return self.limit_ms + self.grace_ms


def env_ms(name: str, fallback: int) -> int:
    value = os.environ.get(name, "")
    try:
        parsed = int(value)
    except ValueError:
        return fallback
    return parsed if parsed > 0 else fallback


def resolve_timeout(
    spec: ToolSpec, data: dict[str, Any], runtime_default_ms: int = RUNTIME_DEFAULT_TIMEOUT_MS
) -> ResolvedTimeout | None:
    policy = spec.timeout
    if policy.kind == "none":
        return None
    default_ms = policy.default_ms if policy.default_ms is not None else runtime_default_ms
    requested: float | None = spec.timeout_for(data) if spec.timeout_for is not None else None
    if requested is None and policy.allow_call_override:
        for key in ("timeout_ms", "timeout"):
            value = data.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                requested = value
                break
    if requested is None:
        requested = default_ms
    if policy.max_ms is not None:
        requested = min(requested, policy.max_ms)
    return ResolvedTimeout(limit_ms=max(1, int(requested)), grace_ms=max(0, int(policy.cleanup_grace_ms)))


class DeadlineExceeded(Exception):
    pass


class Deadline:
    """A deadline whose clock can be paused: time a call spends in a queue it does not own (a
    provider's rate-limit gate, a question to the user) is not held against it.

    Built on `asyncio.timeout`, whose `reschedule` makes pausing free of extra tasks."""

    def __init__(self, limit_ms: int | None) -> None:
        self.limit_ms = limit_ms
        self._loop_time = asyncio.get_running_loop().time
        self._used = 0.0
        self._since: float | None = self._loop_time()
        self._cm: asyncio.Timeout | None = None

    @property
    def paused(self) -> bool:
        return self._since is None

    def elapsed_ms(self) -> float:
        used = self._used
        if self._since is not None:
            used += self._loop_time() - self._since
        return used * 1000

    def remaining_ms(self) -> float | None:
        if self.limit_ms is None:
            return None
        return max(0.0, self.limit_ms - self.elapsed_ms())

    def _when(self) -> float | None:
        remaining = self.remaining_ms()
        if remaining is None or self._since is None:
            return None
        return self._loop_time() + remaining / 1000

    def pause(self) -> None:
        if self._since is not None:
            self._used += self._loop_time() - self._since
            self._since = None
            if self._cm is not None:
                self._cm.reschedule(None)

    def resume(self) -> None:
        if self._since is None:
            self._since = self._loop_time()
            if self._cm is not None:
                self._cm.reschedule(self._when())

    async def run(self, coro: Any) -> Any:
        """Await `coro`; DeadlineExceeded when the deadline passes first (the coroutine has been
        cancelled and has finished its cleanup by then)."""
        if self.limit_ms is None:
            return await coro
        self._cm = asyncio.timeout_at(self._when())
        try:
            async with self._cm:
                return await coro
        except TimeoutError:
            if self._cm.expired():
                raise DeadlineExceeded() from None
            raise
        finally:
            self._cm = None
