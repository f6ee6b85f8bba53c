"""Run built-in tools through the real pipeline (lookup → validate → checks → hooks → permission →
execute → finish), the way a session does, and hand back the outcome event."""

from __future__ import annotations

import itertools
from typing import Any

from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.events import ToolCallError, ToolCallResult
from tui_app.runtime.hooks.runner import NoHooks
from tui_app.runtime.permissions.broker import ApprovalBroker
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.runtime.pipeline import CallEnv, ToolCall, run_call
from tui_app.runtime.registry import ToolRegistry

_ids = itertools.count(1)


class RecordingFileState:
    """A stand-in for the file-state service that remembers every baseline reported to it."""

    def __init__(self) -> None:
        self.reads: list[dict[str, Any]] = []

    def record_read(self, **baseline: Any) -> None:
        self.reads.append(baseline)


def make_env(cwd: str, *specs: ToolSpec, services: dict[str, Any] | None = None,
             events: list[Any] | None = None) -> CallEnv:
    registry = ToolRegistry()
    for spec in specs:
        registry.register(spec)
    seen = events if events is not None else []

    def emit(event: Any) -> Any:
        seen.append(event)
        return event

    return CallEnv(session_id="test-session", cwd=str(cwd), registry=registry, policy=ModePolicy(),
                   hooks=NoHooks(), broker=ApprovalBroker(), emit=emit, services=dict(services or {}))


async def call(spec: ToolSpec, tool_input: Any, cwd: Any, **env: Any) -> ToolCallResult | ToolCallError:
    outcome = await run_call(ToolCall(id=f"call-{next(_ids)}", name=spec.name, input=tool_input),
                             make_env(str(cwd), spec, **env))
    return outcome


async def ok_text(spec: ToolSpec, tool_input: Any, cwd: Any, **env: Any) -> str:
    """The model-facing text of a call that must succeed."""
    outcome = await call(spec, tool_input, cwd, **env)
    assert isinstance(outcome, ToolCallResult), f"expected success, got {outcome.code}: {outcome.message}"
    assert isinstance(outcome.model_content, str)
    return outcome.model_content


async def error_of(spec: ToolSpec, tool_input: Any, cwd: Any, **env: Any) -> ToolCallError:
    outcome = await call(spec, tool_input, cwd, **env)
    assert isinstance(outcome, ToolCallError), f"expected an error, got: {outcome.model_content!r}"
    return outcome
