"""One call's state as it passes the stages, and the checks two stages share.

The pre-permission stages (pipeline) and the approval stage both re-validate an input and re-run the
tool's own checks after a rewrite; they meet here, a floor below both.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tui_app.runtime.contract import ProgressSink, ToolContext, ToolFailure, ToolFlags, ToolSpec
from tui_app.runtime.hooks.runner import HookCall, HookRunner
from tui_app.runtime.outcome import CallEnded, project_exception, tool_use_error
from tui_app.runtime.permissions.broker import ApprovalBroker
from tui_app.runtime.permissions.decision import PermissionPolicy
from tui_app.runtime.permissions.updates import SessionWrites
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.results.serialize import ArtifactSink
from tui_app.runtime.timeouts import RUNTIME_DEFAULT_TIMEOUT_MS, ResolvedTimeout
from tui_app.runtime.validation import Issue, check_input, validation_model_text


def ms_since(started: float) -> int:
    """Whole milliseconds since `started` (a `time.perf_counter()` reading)."""
    return int((time.perf_counter() - started) * 1000)


@dataclass(frozen=True)
class ToolCall:
    """What the model proposed."""

    id: str
    name: str
    input: Any


@dataclass
class CallEnv:
    """The session's services, as one call sees them."""

    session_id: str
    cwd: str
    registry: ToolRegistry
    policy: PermissionPolicy
    hooks: HookRunner
    broker: ApprovalBroker
    emit: Callable[[Any], Any]
    services: dict[str, Any] = field(default_factory=dict)
    transcript_path: str = ""
    turn_id: str | None = None
    runtime_default_timeout_ms: int = RUNTIME_DEFAULT_TIMEOUT_MS
    #: False once the session's log failed: no tool is started that could not be recorded
    can_record: Callable[[], bool] = lambda: True
    #: the session's one writer of its mode, rules and directories (None: a bare env of a test)
    writes: SessionWrites | None = None

    def writer(self) -> SessionWrites:
        return self.writes if self.writes is not None else SessionWrites(self.policy, self.emit)

    @property
    def artifacts(self) -> ArtifactSink | None:
        return self.services.get("artifacts")


@dataclass
class CallState:
    call: ToolCall
    env: CallEnv
    group: int = 0
    spec: ToolSpec | None = None
    input: dict[str, Any] = field(default_factory=dict)
    flags: ToolFlags | None = None
    context: list[str] = field(default_factory=list)
    hook_word: str | None = None
    hook_reason: str = ""
    stop_reason: str | None = None
    t0: float = field(default_factory=time.perf_counter)
    wait_ms: int = 0
    #: sha256 of the input an approval was given for; `start` refuses to run anything else
    approved_sha256: str | None = None
    exec_started: float | None = None
    exec_ms: int = 0
    started: bool = False
    ctx: ToolContext | None = None
    timeout: ResolvedTimeout | None = None
    #: the approval's answer, when the call was asked about (a driver reads how it was given)
    answer: Any = None
    #: what the permission decision said about the sandbox (Bash)
    sandboxed: bool | None = None
    #: the spellings of a file tool's path the permission decision was made on
    checked_paths: tuple[str, ...] | None = None
    #: (input, its parsed model) from validation
    parsed: tuple[dict[str, Any], Any] | None = None

    @property
    def tool_name(self) -> str:
        return self.spec.name if self.spec is not None else self.call.name


def validated_input(spec: ToolSpec, raw: Any, phase: str, state: CallState | None = None) -> dict[str, Any]:
    """The canonical input, or the call ends with `schema_invalid`. With `state`, the handler's
    parsed view is kept beside it (see `parsed_input`)."""
    if isinstance(raw, str):
        try:
            json.loads(raw)
        except json.JSONDecodeError as exc:
            issue = Issue("invalid_json", (), f"The input is not valid JSON: {exc.msg} at position {exc.pos}",
                          code="invalid_json")
            raise CallEnded(phase, "schema_invalid", issue.message,  # type: ignore[arg-type]
                            validation_model_text(spec.name, [issue]), retryable=True) from None
    data, parsed, issues = check_input(spec, raw)
    if data is None:
        text = validation_model_text(spec.name, issues)
        raise CallEnded(phase, "schema_invalid", text.removeprefix("<tool_use_error>").removesuffix(  # type: ignore[arg-type]
            "</tool_use_error>"), text, retryable=True)
    if state is not None:
        state.parsed = (data, parsed) if parsed is not None else None
    return data


def parsed_input(state: CallState) -> Any:
    """The handler's view of the input: the model validation made, while the input is still that
    very dict (a resolver or a hook that replaced it is parsed anew)."""
    assert state.spec is not None
    if state.parsed is not None and state.parsed[0] is state.input:
        return state.parsed[1]
    return state.spec.parse(state.input)


def make_context(state: CallState, progress: ProgressSink | None = None) -> ToolContext:
    env = state.env
    assert state.spec is not None
    return ToolContext(
        session_id=env.session_id, cwd=env.cwd, call_id=state.call.id, tool_name=state.spec.name,
        progress=progress or ProgressSink(lambda **_: None), services=env.services, emit=env.emit,
    )


async def tool_checks(state: CallState) -> None:
    """The tool's own preconditions and resolution, before any hook or dialog."""
    spec = state.spec
    assert spec is not None
    ctx = state.ctx = make_context(state)
    try:
        if spec.validate_input is not None:
            await spec.validate_input(parsed_input(state), ctx)
        if spec.resolve_input is not None:
            state.input = await spec.resolve_input(state.input, ctx)
    except ToolFailure as failure:
        code = "precondition_failed" if failure.code == "execution_failed" else failure.code
        raise CallEnded("precondition", code, failure.message, tool_use_error(failure.message),
                        retryable=failure.retryable) from None
    except (OSError, ValueError) as exc:
        # an impossible path (too long, a NUL byte a hook slipped in …) is the input's fault: the
        # model reads why, the run goes on
        message = f"Invalid input: {project_exception(exc)}"
        raise CallEnded("precondition", "precondition_failed", message, tool_use_error(message)) from None


def hook_call(state: CallState) -> HookCall:
    env = state.env
    return HookCall(
        session_id=env.session_id, cwd=env.cwd, permission_mode=env.policy.mode,
        transcript_path=env.transcript_path, tool_name=state.tool_name, tool_input=state.input,
        tool_use_id=state.call.id, prompt_id=prompt_id(env.session_id, env.turn_id),
    )


def prompt_id(session_id: str, turn_id: str | None) -> str:
    """A UUID per turn, stable when asked again (Claude Code names each user prompt this way)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"vigil:{session_id}/{turn_id or ''}")) if turn_id else ""
