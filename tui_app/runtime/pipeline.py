"""One tool call, stage by stage (docs/architecture.md §4).

lookup → validate → tool checks → PreToolUse hooks → permission → approval → start → execute →
finish. Each stage either passes a richer state on or ends the call by raising `CallEnded`, whose
`phase` names the stage. Every call gets exactly one Outcome event, paired by call id.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from tui_app.runtime.approval_stage import approve
from tui_app.runtime.call import (
    CallEnv,
    CallState,
    ToolCall,
    hook_call,
    make_context,
    parsed_input,
    tool_checks,
    validated_input,
)
from tui_app.runtime.contract import (
    ProgressSink,
    RawResult,
    ToolFailure,
    ToolSpec,
    ToolTimedOut,
)
from tui_app.runtime.display import ErrorDisplay
from tui_app.runtime.events import (
    ArtifactPersisted,
    CallMetrics,
    PermissionResolved,
    ToolCallError,
    ToolCallProgress,
    ToolCallResult,
    ToolCallStarted,
    Warning,
)
from tui_app.runtime.hooks.runner import NoHooks, PostToolUseOutcome
from tui_app.runtime.outcome import CallEnded, Outcome, project_exception, tool_use_error
from tui_app.runtime.permissions.broker import input_sha256
from tui_app.runtime.permissions.decision import (
    PermissionDecision,
    PermissionQuery,
    combine_with_hook,
)
from tui_app.runtime.results.budgets import DEFAULT as DEFAULT_BUDGET
from tui_app.runtime.results.displays import MAX_ERROR_MESSAGE_BYTES
from tui_app.runtime.results.sanitize import StreamNeutralizer, neutralize, neutralize_display
from tui_app.runtime.results.serialize import (
    Serialized,
    append_hook_context,
    bound_text,
    content_bytes,
    json_safe,
    serialize_result,
    utf8_len,
    valid_unicode,
)
from tui_app.runtime.timeouts import (
    Deadline,
    DeadlineExceeded,
    resolve_timeout,
)

LOG_FAILED_MESSAGE = "Not run: the session log cannot be written, so no further tool is started."
NO_POST = PostToolUseOutcome()

# ---- the whole call ------------------------------------------------------------------------------

async def run_call(call: ToolCall, env: CallEnv, group: int = 0) -> Outcome:
    state = CallState(call, env, group)
    try:
        lookup(state)
        validate(state)
        await tool_checks(state)
        await pre_tool_use(state)
        decision = decide_permission(state)
        if decision.behavior == "ask":
            await approve(state, decision)
        start(state)
        raw = await execute(state)
        return await finish(state, raw)
    except CallEnded as ended:
        return await end_with_error(state, ended)
    except asyncio.CancelledError:
        # the executor cancels a call only when the user interrupts the turn
        spec = state.spec
        message = spec.cancellation_message if spec else "Tool call cancelled by the user."
        return await end_with_error(state, CallEnded(
            "cancel", "cancelled", message, side_effects="unknown" if state.started else "none"))


# ---- stages ---------------------------------------------------------------------------------------

def lookup(state: CallState) -> None:
    name = state.call.name
    if not name or not name.strip():
        raise CallEnded("lookup", "unknown_tool", f"No such tool available: {name}",
                        tool_use_error(f"Error: No such tool available: {name}"))
    spec = state.env.registry.resolve(name)
    if spec is None:
        raise CallEnded("lookup", "unknown_tool", f"Tool not found: {name}")
    if not state.env.registry.is_visible(spec.name):
        raise CallEnded("lookup", "tool_not_visible", f"Tool not available in this session: {spec.name}")
    state.spec = spec


def validate(state: CallState) -> None:
    assert state.spec is not None
    state.input = validated_input(state.spec, state.call.input, "validate", state)


async def pre_tool_use(state: CallState) -> None:
    if type(state.env.hooks) is NoHooks:  # exactly the empty runner (a subclass may listen)
        return  # nothing could deny, rewrite or add to the call
    result = await state.env.hooks.pre_tool_use(hook_call(state))
    state.context.extend(result.context)
    if result.decision == "deny" or result.stop_reason is not None:
        # `continue: false` stops the agent now: the call it was about does not run either (the
        # turn stops through the call's end, `stop_turn`)
        reason = (result.reason or "Blocked by PreToolUse hook") if result.decision == "deny" else (
            f"Stopped by a PreToolUse hook: {result.stop_reason}")
        state.env.emit(PermissionResolved(
            turn_id=state.env.turn_id, call_id=state.call.id, decision="deny", decided_by="hook", reason=reason))
        raise CallEnded("hook", "hook_denied", reason, stop_turn=result.stop_reason is not None)
    if result.updated_input is not None:
        assert state.spec is not None
        state.input = validated_input(state.spec, result.updated_input, "hook", state)
        await tool_checks(state)
    state.hook_word = result.decision
    state.hook_reason = result.reason


def decide_permission(state: CallState) -> PermissionDecision:
    spec, env = state.spec, state.env
    assert spec is not None
    state.flags = spec.flags_of(state.input)
    decision = env.policy.decide(PermissionQuery(spec, state.input, state.flags, env.cwd))
    state.sandboxed = decision.sandboxed
    note_checked_paths(state, decision)
    decision = combine_with_hook(decision, state.hook_word, state.hook_reason, spec)  # type: ignore[arg-type]
    if decision.behavior == "deny":
        env.emit(PermissionResolved(turn_id=env.turn_id, call_id=state.call.id, decision="deny",
                                    decided_by=decision.decided_by, reason=decision.reason, rule=decision.rule))
        raise CallEnded("permission", "permission_denied", decision.reason or f"Permission to use {spec.name} denied")
    if decision.behavior == "allow" and decision.decided_by != "tool":
        # a tool that needs no approval (a read) has nothing to resolve; its flags are on ToolCallStarted
        env.emit(PermissionResolved(turn_id=env.turn_id, call_id=state.call.id, decision="allow",
                                    decided_by=decision.decided_by, reason=decision.reason, rule=decision.rule))
    return decision


def note_checked_paths(state: CallState, decision: PermissionDecision) -> None:
    """What the decision looked at, for the tool to compare with what it opens (a preview too)."""
    state.checked_paths = tuple(getattr(decision, "paths", ()))
    if state.ctx is not None:
        state.ctx.checked_paths = state.checked_paths


def start(state: CallState) -> None:
    spec, env = state.spec, state.env
    assert spec is not None and state.flags is not None
    if state.approved_sha256 is not None and input_sha256(state.input) != state.approved_sha256:
        raise CallEnded("permission", "permission_denied",
                        "The input changed after it was approved; it was not run (approve A, run B is refused).")
    timeout = resolve_timeout(spec, state.input, env.runtime_default_timeout_ms)
    if not env.can_record():
        raise CallEnded("cancel", "aborted_before_dispatch", LOG_FAILED_MESSAGE)
    env.emit(ToolCallStarted(
        turn_id=env.turn_id, call_id=state.call.id, tool=spec.name, input=state.input,
        target=spec.target(state.input), flags=state.flags,
        timeout_ms=timeout.limit_ms if timeout else None, group=state.group, sandboxed=state.sandboxed,
    ))
    if not env.can_record():  # the start itself could not be recorded: the tool does not run
        raise CallEnded("cancel", "aborted_before_dispatch", LOG_FAILED_MESSAGE)
    state.started = True
    state.exec_started = time.perf_counter()
    progress = ProgressSink(_progress_emitter(state))
    state.ctx = make_context(state, progress)
    state.ctx.sandboxed = state.sandboxed
    state.ctx.checked_paths = state.checked_paths
    state.ctx.timeout_ms = timeout.limit_ms if timeout else None
    state.timeout = timeout


def _progress_emitter(state: CallState) -> Callable[..., None]:
    """Progress goes to the screen only: its text is neutralised (output keeps SGR colours, and a
    sequence split between two chunks waits for its other half)."""
    emit, turn_id, call_id = state.env.emit, state.env.turn_id, state.call.id
    streams: dict[str, StreamNeutralizer] = {}

    def emit_progress(**fields: Any) -> None:
        text = fields.get("text") or ""
        if fields.get("kind") == "output":
            cleaner = streams.setdefault(fields.get("stream") or "stdout", StreamNeutralizer(keep_sgr=True))
            fields["text"] = text = cleaner.feed(text)
            if not text:
                return
        elif text:
            fields["text"] = neutralize(text)
        emit(ToolCallProgress(turn_id=turn_id, call_id=call_id, **fields))

    return emit_progress


async def execute(state: CallState) -> RawResult:
    spec, ctx = state.spec, state.ctx
    assert spec is not None and ctx is not None
    timeout = state.timeout
    deadline = Deadline(timeout.watchdog_ms if timeout else None)
    ctx.services = {**ctx.services, "deadline": deadline}
    try:
        raw = await deadline.run(spec.handler(parsed_input(state), ctx))
    except ToolFailure as failure:
        raise CallEnded("execute", failure.code, failure.message,
                        failure.model_content or tool_use_error(failure.message),
                        side_effects=failure.side_effects, retryable=failure.retryable,
                        display=failure.display) from None
    except ToolTimedOut as exc:
        raise CallEnded("timeout", "timeout", str(exc), side_effects="unknown", retryable=True,
                        display=exc.partial) from None
    except DeadlineExceeded:
        limit = timeout.limit_ms if timeout else 0
        raise CallEnded("timeout", "timeout", f"Tool execution timed out after {limit}ms",
                        side_effects="unknown", retryable=True) from None
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise CallEnded("execute", "execution_failed", project_exception(exc), side_effects="unknown") from None
    finally:
        ctx.progress.closed = True
        state.exec_ms = int((time.perf_counter() - (state.exec_started or state.t0)) * 1000)
    if not isinstance(raw, RawResult):
        raise CallEnded("output", "output_invalid", f"{spec.name} returned {type(raw).__name__}, not a result",
                        side_effects="unknown")
    return raw


def check_output(spec: ToolSpec, raw: RawResult) -> None:
    if raw.is_error:
        return
    try:
        if spec.output_model is not None:
            spec.output_model.model_validate(raw.output)
        elif spec.output_schema is not None:
            import jsonschema

            jsonschema.validate(raw.output, dict(spec.output_schema))
    except Exception as exc:
        raise CallEnded("output", "output_invalid", "Tool output failed runtimeOutputSchema validation",
                        side_effects="applied", extra={"detail": project_exception(exc)}) from None


async def finish(state: CallState, raw: RawResult) -> Outcome:
    spec, env = state.spec, state.env
    assert spec is not None
    check_output(spec, raw)
    serialized = serialize(state, raw)
    announce_serialization(state, serialized)
    if raw.is_error:
        error_text = serialized.text
        failure = await env.hooks.post_tool_use_failure(
            hook_call(state), error_text, False, state.exec_ms)
        _failure_feedback(state, failure)
        return emit_error(state, CallEnded("execute", raw.error_code, serialized.summary or "failed",
                                           side_effects="applied", display=raw.display),
                          serialized.content, serialized)
    response = spec.tool_response(state.input, raw) if spec.tool_response else raw.output
    tool_response = json_safe(response)
    if type(env.hooks) is NoHooks:
        post = NO_POST  # nothing to ask
    else:
        post = await env.hooks.post_tool_use(hook_call(state), tool_response, state.exec_ms)
    state.context.extend(post.context)
    if post.stop_reason is not None:
        state.stop_reason = post.stop_reason
    if post.block_reason is not None:
        # Claude Code's rule: the call ran, so its result stands (a success, never a denial);
        # the hook's reason reaches the model as context next to it
        state.context.append(f"PostToolUse:{spec.name} hook blocking error: {post.block_reason}")
    content = append_hook_context(serialized.content, state.context)
    sent = content_bytes(content)
    outcome = ToolCallResult(
        turn_id=env.turn_id, call_id=state.call.id, tool=spec.name, model_content=content,
        display=neutralize_display(raw.display), truncated=serialized.truncated,
        original_bytes=serialized.original_bytes, sent_bytes=sent, strategy=serialized.strategy,
        artifacts=serialized.artifacts, metrics=metrics(state, sent),
        stop_turn=(raw.stop_turn or spec.stop_turn_on_success or state.stop_reason is not None),
        tool_response=tool_response,
    )
    return env.emit(outcome)


def serialize(state: CallState, raw: RawResult) -> Serialized:
    """The model's content under the budget. A tool whose own formatting breaks has still run,
    so the call ends as an output error with its side effects applied."""
    spec = state.spec
    assert spec is not None
    try:
        return serialize_result(spec, raw, state.call.id, state.env.artifacts)
    except Exception as exc:
        raise CallEnded("output", "output_invalid",
                        f"Could not format the output of {spec.name}: {project_exception(exc)}",
                        side_effects="applied") from None


def _failure_feedback(state: CallState, failure: PostToolUseOutcome) -> None:
    state.context.extend(failure.context)
    if failure.block_reason:
        state.context.append(f"PostToolUseFailure hook feedback: {failure.block_reason}")
    if failure.stop_reason is not None:
        state.stop_reason = failure.stop_reason


def announce_serialization(state: CallState, serialized: Serialized) -> None:
    env = state.env
    for ref in serialized.artifacts:
        env.emit(ArtifactPersisted(turn_id=env.turn_id, call_id=state.call.id, artifact=ref, tool=state.tool_name))
    for message in serialized.warnings:
        env.emit(Warning(turn_id=env.turn_id, call_id=state.call.id, code="artifact_fallback", message=message))


def metrics(state: CallState, bytes_out: int) -> CallMetrics:
    return CallMetrics(
        total_ms=int((time.perf_counter() - state.t0) * 1000), permission_wait_ms=state.wait_ms,
        exec_ms=state.exec_ms, bytes_out=bytes_out,
    )


async def end_with_error(state: CallState, ended: CallEnded) -> Outcome:
    """A call that ended early. Failures after start also run PostToolUseFailure hooks."""
    if state.started and ended.phase in ("execute", "timeout", "cancel", "output"):
        try:
            failure = await state.env.hooks.post_tool_use_failure(
                hook_call(state), ended.message, ended.phase == "cancel", state.exec_ms)
            _failure_feedback(state, failure)
        except Exception as exc:  # a broken hook never hides the call's own failure
            state.env.emit(Warning(turn_id=state.env.turn_id, call_id=state.call.id, code="hook_failed",
                                   message=project_exception(exc)))
    text = valid_unicode(ended.model_text if ended.model_text is not None else ended.message)
    # a failure's own words obey the tool's budget too, keeping head and tail
    limit = state.spec.budget.limit_bytes if state.spec is not None else DEFAULT_BUDGET.limit_bytes
    bounded, cut = bound_text(text, limit)
    serialized = None
    if cut:
        serialized = Serialized(bounded, bounded, truncated=True, original_bytes=utf8_len(text),
                                sent_bytes=utf8_len(bounded), strategy="truncate")
    return emit_error(state, ended, bounded, serialized)


def emit_error(state: CallState, ended: CallEnded, content: Any, serialized: Serialized | None) -> Outcome:
    env = state.env
    message = bound_text(valid_unicode(ended.message), MAX_ERROR_MESSAGE_BYTES)[0]
    display = ended.display or ErrorDisplay(phase=ended.phase, code=ended.code, message=message)
    content = append_hook_context(content, state.context)
    sent = content_bytes(content)
    return env.emit(ToolCallError(
        turn_id=env.turn_id, call_id=state.call.id, tool=state.tool_name, phase=ended.phase, code=ended.code,
        message=message, model_content=content,
        side_effects=ended.side_effects, retryable=ended.retryable, display=neutralize_display(display),
        truncated=serialized.truncated if serialized else False,
        original_bytes=serialized.original_bytes if serialized else sent, sent_bytes=sent,
        strategy=serialized.strategy if serialized else "inline",
        artifacts=serialized.artifacts if serialized else [], metrics=metrics(state, sent),
        stop_turn=ended.stop_turn or state.stop_reason is not None,
    ))


def synthetic_outcome(call: ToolCall, env: CallEnv, phase: str, code: str, message: str) -> Outcome:
    """A result for a call that never ran (turn stopped, turn aborted, stream broken)."""
    spec = env.registry.resolve(call.name) if call.name else None
    return env.emit(ToolCallError(
        turn_id=env.turn_id, call_id=call.id, tool=spec.name if spec else call.name, phase=phase,  # type: ignore[arg-type]
        code=code, message=message, model_content=message,
        display=ErrorDisplay(phase=phase, code=code, message=message),
    ))
