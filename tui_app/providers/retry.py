"""Retrying a model request: exponential backoff with jitter, honouring the server's retry-after.

Only a request that has not yielded anything yet is retried: once text or a tool call reached the
turn loop, sending the request again would duplicate what the user already saw (and what an early
tool call already did), so a failure from then on ends the step with a ModelError instead.
Each retry is announced as a `Retrying` stream event before the wait, so the user sees it.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from tui_app.runtime.model import ModelError, Retrying, StreamEvent, ThinkingDelta

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504, 529})
#: error types a provider reports in a body or mid-stream that mean "try again later"
RETRYABLE_ERROR_TYPES = frozenset({"overloaded_error", "rate_limit_error", "api_error", "server_error",
                                   "rate_limit_exceeded", "timeout_error"})


class StreamFailure(Exception):
    """One attempt failed. `retryable` says whether a fresh attempt may succeed; the retry loop
    decides whether one is still allowed."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` given as seconds or an HTTP date."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            value = float(ms) / 1000
            if value >= 0:
                return value
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        value = float(raw)
        return value if value >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass
class RetryPolicy:
    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 32.0
    #: a fraction of the delay added or taken away at random, so clients do not retry in lockstep
    jitter: float = 0.25
    #: a retry-after longer than this is not waited out: the step fails and says how long it would be
    max_retry_after: float = 120.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """The wait after failed attempt number `attempt` (1-based)."""
        if retry_after is not None:
            return retry_after
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return max(0.0, backoff * (1 + self.rng.uniform(-self.jitter, self.jitter)))


async def with_retries(
    policy: RetryPolicy, attempt: Callable[[], AsyncIterator[StreamEvent]]
) -> AsyncIterator[StreamEvent]:
    """Run `attempt()` until it completes, retrying retryable failures that yielded nothing."""
    number = 1
    while True:
        yielded = False
        try:
            async for event in attempt():
                # streamed thinking is only shown: a retry after it starts over (the screen drops it)
                yielded = yielded or not isinstance(event, ThinkingDelta)
                yield event
            return
        except StreamFailure as failure:
            if yielded or not failure.retryable:
                raise ModelError(failure.message, status=failure.status, retryable=failure.retryable) from None
            if number >= policy.max_attempts:
                raise ModelError(f"{failure.message} (gave up after {number} attempts)", status=failure.status,
                                 retryable=True) from None
            if failure.retry_after is not None and failure.retry_after > policy.max_retry_after:
                raise ModelError(f"{failure.message}; the server asks to wait {failure.retry_after:.0f} s "
                                 f"before retrying, which is longer than Vigil waits", status=failure.status,
                                 retryable=True) from None
            wait = policy.delay(number, failure.retry_after)
            number += 1
            yield Retrying(attempt=number, max_attempts=policy.max_attempts, status=failure.status,
                           reason=failure.message, wait_ms=int(wait * 1000))
            await policy.sleep(wait)
