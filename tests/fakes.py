"""Small real tools for runtime tests: they run through the real pipeline, only their work is trivial."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from tui_app.runtime.contract import (
    RawResult,
    StrictInput,
    TimeoutPolicy,
    ToolContext,
    ToolFailure,
    ToolFlags,
    ToolSpec,
)
from tui_app.runtime.hooks.runner import NoHooks
from tui_app.runtime.permissions.broker import ApprovalBroker
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.runtime.pipeline import CallEnv
from tui_app.runtime.registry import ToolRegistry

SAFE = ToolFlags(read_only=True, concurrency_safe=True, side_effect_scope="none", needs_approval=False, risk="low")
UNSAFE = ToolFlags(read_only=False, concurrency_safe=False, side_effect_scope="workspace", needs_approval=False)


class WorkInput(StrictInput):
    label: str = ""
    delay_ms: int = 0
    fail: str | None = None
    output: str | None = None
    stop: bool = False


async def work(args: WorkInput, ctx: ToolContext) -> RawResult:
    if args.delay_ms:
        await asyncio.sleep(args.delay_ms / 1000)
    if args.fail == "business":
        raise ToolFailure("the thing is not ready")
    if args.fail == "crash":
        raise RuntimeError(f"crashed while working on {args.label}")
    out = args.output if args.output is not None else f"did {args.label}"
    return RawResult(output=out, stop_turn=args.stop)


def work_spec(name: str, flags: ToolFlags = SAFE, **extra: Any) -> ToolSpec:
    return ToolSpec(name=name, description=f"{name} test tool", handler=work, input_model=WorkInput,
                    flags=flags, **extra)


class Recorder:
    """An `emit` that stamps a sequence number and keeps every event."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def __call__(self, event: Any) -> Any:
        event = event.model_copy(update={"seq": len(self.events) + 1})
        self.events.append(event)
        return event

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def types(self) -> list[str]:
        return [e.type for e in self.events]


def make_env(*specs: ToolSpec, policy: Any = None, hooks: Any = None, broker: Any = None,
             cwd: str = "/tmp") -> tuple[CallEnv, Recorder]:
    registry = ToolRegistry()
    for spec in specs:
        registry.register(spec)
    recorder = Recorder()
    env = CallEnv(session_id="test", cwd=cwd, registry=registry, policy=policy or ModePolicy(),
                  hooks=hooks or NoHooks(), broker=broker or ApprovalBroker(), emit=recorder)
    return env, recorder


class Out(BaseModel):
    value: int


def timed(default_ms: int | None = None, **kw: Any) -> TimeoutPolicy:
    return TimeoutPolicy(default_ms=default_ms, **kw)
