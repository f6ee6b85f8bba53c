"""Timeout resolution (docs/architecture.md §7) and the clock that starts only after approval."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes import SAFE, WorkInput, make_env
from tui_app.runtime.contract import RawResult, TimeoutPolicy, ToolSpec
from tui_app.runtime.permissions.broker import ApprovalAnswer, ApprovalBroker
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.runtime.timeouts import Deadline, DeadlineExceeded, ResolvedTimeout, resolve_timeout


async def noop(args, ctx):
    return RawResult(output="ok")


def spec_with(policy: TimeoutPolicy, timeout_for=None) -> ToolSpec:
    return ToolSpec(name="T", description="", handler=noop, timeout=policy, timeout_for=timeout_for)


BASH = TimeoutPolicy(default_ms=120_000, max_ms=600_000, allow_call_override=True, cleanup_grace_ms=6000)


@pytest.mark.parametrize(
    ("policy", "timeout_for", "data", "expected"),
    [
        # a tool with no timeout is never timed
        (TimeoutPolicy(kind="none"), None, {"timeout": 5}, None),
        # nothing declared: the runtime default
        (TimeoutPolicy(), None, {}, ResolvedTimeout(300_000)),
        # the tool default
        (TimeoutPolicy(default_ms=30_000), None, {}, ResolvedTimeout(30_000)),
        # a call override is ignored unless the tool allows it
        (TimeoutPolicy(default_ms=30_000), None, {"timeout": 5}, ResolvedTimeout(30_000)),
        # Bash: default 120000 + grace 6000
        (BASH, None, {}, ResolvedTimeout(120_000, 6000)),
        # Bash: the call's `timeout`
        (BASH, None, {"timeout": 1000}, ResolvedTimeout(1000, 6000)),
        # `timeout_ms` wins over `timeout`
        (BASH, None, {"timeout_ms": 2500, "timeout": 1000}, ResolvedTimeout(2500, 6000)),
        # capped at the max
        (BASH, None, {"timeout": 9_000_000}, ResolvedTimeout(600_000, 6000)),
        # a nonsense override falls back to the default
        (BASH, None, {"timeout": -4}, ResolvedTimeout(120_000, 6000)),
        (BASH, None, {"timeout": True}, ResolvedTimeout(120_000, 6000)),
        # the tool's own per-input budget beats everything but the max
        (BASH, lambda d: 150_000, {"timeout": 1000}, ResolvedTimeout(150_000, 6000)),
        (BASH, lambda d: 10_000_000, {}, ResolvedTimeout(600_000, 6000)),
        # a per-input budget of None falls through to the override
        (BASH, lambda d: None, {"timeout": 1000}, ResolvedTimeout(1000, 6000)),
        # never below 1 ms
        (TimeoutPolicy(default_ms=0), None, {}, ResolvedTimeout(1)),
    ],
)
def test_resolution(policy, timeout_for, data, expected):
    assert resolve_timeout(spec_with(policy, timeout_for), data) == expected


def test_runtime_default_can_be_configured():
    assert resolve_timeout(spec_with(TimeoutPolicy()), {}, runtime_default_ms=42) == ResolvedTimeout(42)


async def test_waiting_for_approval_never_counts_toward_the_timeout():
    async def quick(args, ctx):
        await asyncio.sleep(0.05)
        return RawResult(output="ran")

    flags = SAFE.model_copy(update={"needs_approval": True, "read_only": False})
    spec = ToolSpec(name="Slowpoke", description="", handler=quick, input_model=WorkInput, flags=flags,
                    timeout=TimeoutPolicy(default_ms=200))
    broker = ApprovalBroker(interactive=True)
    env, _rec = make_env(spec, broker=broker)
    task = asyncio.ensure_future(run_call(ToolCall("c1", "Slowpoke", {}), env))
    while not broker.pending():
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.5)  # the user thinks for longer than the tool's whole timeout
    request = broker.pending()[0]
    assert broker.answer(request.request_id, ApprovalAnswer("allow", input_sha256=request.input_sha256))
    outcome = await task
    assert outcome.type == "ToolCallResult", outcome
    assert outcome.metrics.permission_wait_ms >= 500
    assert outcome.metrics.exec_ms < 200


async def test_a_paused_deadline_does_not_expire():
    deadline = Deadline(100)

    async def work():
        deadline.pause()
        await asyncio.sleep(0.25)  # e.g. queued behind a provider's rate limit
        deadline.resume()
        await asyncio.sleep(0.05)
        return "done"

    assert await deadline.run(work()) == "done"


async def test_a_running_deadline_expires():
    deadline = Deadline(50)
    with pytest.raises(DeadlineExceeded):
        await deadline.run(asyncio.sleep(1))
