"""The turn loop: prompt → model step → tool batch → results in model order → next step, until
the model stops, the step limit is reached, a result stops the turn, or the user interrupts.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tui_app.agents.compaction import account_of, compact, is_context_overflow, maybe_compact
from tui_app.agents.mentions import attach_mentions
from tui_app.runtime.agent import TurnResult
from tui_app.runtime.call import prompt_id
from tui_app.runtime.events import (
    AssistantText,
    AssistantTextDelta,
    AssistantThinking,
    AssistantThinkingDelta,
    ModelRetry,
    ModelStepEnded,
    ModelStepStarted,
    ToolBatchComplete,
    ToolCallError,
    ToolCallRequested,
    ToolCallResult,
    TurnEnded,
    TurnStarted,
    UserMessage,
    Warning,
)
from tui_app.runtime.executor import TurnControl, run_batch
from tui_app.runtime.model import (
    BlockStop,
    ModelError,
    ModelRequest,
    Retrying,
    StepStop,
    TextDelta,
    ThinkingBlockDone,
    ThinkingDelta,
    ToolInputDelta,
    ToolUseStart,
)
from tui_app.runtime.outcome import Outcome, project_exception
from tui_app.runtime.permissions.decision import PermissionQuery
from tui_app.runtime.pipeline import CallEnv, ToolCall, run_call, synthetic_outcome
from tui_app.runtime.validation import validate_input

MAX_STOP_HOOK_CONTINUATIONS = 8
STREAM_BROKEN_MESSAGE = ("The model's response broke off before it was complete, so this call was not run. "
                         "Make the call again if it is still needed.")
#: a Stop hook: (the last text, whether a Stop hook already continued this turn) → an instruction or None
StopHook = Callable[[str, bool], Awaitable[str | None]]
#: stop reasons of a response that ended as it should
NORMAL_STOPS = {None, "end_turn", "tool_use", "stop_sequence"}
STOP_NOTES = {
    "max_tokens": "The response reached the output token limit and may be cut short.",
    "refusal": "The model declined to continue this response.",
    "model_context_window_exceeded": "The conversation no longer fits the model's context window.",
    "pause_turn": "The provider paused the response before it was finished.",
}


@dataclass
class StepResult:
    calls: list[ToolCall] = field(default_factory=list)
    early: dict[str, asyncio.Task[Outcome]] = field(default_factory=dict)
    texts: dict[int, list[str]] = field(default_factory=dict)
    stop_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    #: text blocks started and not yet closed by the stream
    open_text: set[int] = field(default_factory=set)
    #: a call of this response did not start early, so no later one may (model order)
    early_closed: bool = False

    @property
    def text(self) -> str:
        return "".join("".join(self.texts[i]) for i in sorted(self.texts))


def add_usage(total: dict[str, int], usage: dict[str, int]) -> None:
    for key, value in usage.items():
        if isinstance(value, int):
            total[key] = total.get(key, 0) + value


async def run_turn(session: Any, prompt: str, control: TurnControl, turn_id: str) -> TurnResult:
    """One turn of the built-in agent (`session`: its BuiltinHost, the session with the agent's
    model and prompt)."""
    started = time.perf_counter()
    emit = session.emit
    emit(TurnStarted(turn_id=turn_id, prompt=prompt, client=session.turn_client))
    result = TurnResult(turn_id=turn_id, reason="completed")
    info = {**session.hook_session_info(), "prompt_id": prompt_id(session.id, turn_id)}
    submitted = await session.hooks.user_prompt_submit(info, prompt)
    if submitted.blocked:
        result.reason, result.error = "rejected", submitted.reason or "Prompt blocked by UserPromptSubmit hook"
        emit(TurnEnded(turn_id=turn_id, reason="rejected", message=result.error))
        return result
    emit(UserMessage(turn_id=turn_id, text=prompt))
    for attachment in await attach_mentions(session, prompt):  # @path: the file goes with the prompt
        emit(UserMessage(turn_id=turn_id, text=attachment.text, source="attachment"))
    for extra in submitted.context:
        emit(UserMessage(turn_id=turn_id, text=extra, source="hook"))

    async def stop_hook(text: str, active: bool) -> str | None:
        stop = await session.hooks.stop({**info, "background_tasks": running_tasks(session)}, text, active)
        return stop.continue_with

    await agent_loop(session, control, turn_id, result, stop_hook=stop_hook)
    emit(TurnEnded(turn_id=turn_id, reason=result.reason, steps=result.steps,  # type: ignore[arg-type]
                   message=result.error or "", usage=result.usage,
                   duration_ms=int((time.perf_counter() - started) * 1000)))
    return result


async def agent_loop(host: Any, control: TurnControl, turn_id: str, result: TurnResult, *,
                     stop_hook: StopHook | None = None) -> None:
    """Model step → tool batch → … until the model stops, for the session's own agent or a
    subagent (`host`: a Session, or a subagent's host with the same attributes)."""
    env = host.call_env(turn_id)
    emit = host.emit
    account = account_of(host)
    continuations = 0
    refitted = False
    while True:
        if host.max_steps is not None and result.steps >= host.max_steps:
            result.reason = "max_turns"
            result.error = f"Reached the limit of {host.max_steps} model steps"
            break
        await maybe_compact(host, control, turn_id)
        if control.is_aborted:
            result.reason = "interrupted"
            break
        result.steps += 1
        step_no = host.next_step()
        emit(ModelStepStarted(turn_id=turn_id, step=step_no, model=host.model.model))
        step = await stream_step(host, env, step_no, control)
        add_usage(result.usage, step.usage)
        if account is not None:
            account.record(step.usage, len(host.conversation.messages))
        if step.text:
            result.text = step.text
        if (not step.calls and not refitted and not control.is_aborted and account is not None
                and account.settings.enabled and is_context_overflow(step.stop_reason, step.error)):
            refitted = True  # once a turn: the summary itself might not fit either
            if await compact(host, control, turn_id=turn_id, trigger="auto") is not None:
                continue
        if step.error is not None or control.is_aborted:
            if step.calls:
                await _settle_unrun(step, env, control, step_no)
            result.reason = "interrupted" if control.is_aborted else "error"
            result.error = step.error
            break
        if step.stop_reason not in NORMAL_STOPS:
            note = STOP_NOTES.get(step.stop_reason or "", f"The model stopped for a reason Vigil does not know "
                                                           f"({step.stop_reason!r}).")
            emit(Warning(turn_id=turn_id, code="model_stop_reason", message=note,
                         detail={"stop_reason": step.stop_reason, "step": step_no}))
            if not step.calls:
                result.error = note  # the turn ends here, and says why
                break
        if not step.calls:
            instruction = await stop_hook(step.text, continuations > 0) if stop_hook is not None else None
            if instruction and continuations < MAX_STOP_HOOK_CONTINUATIONS:
                continuations += 1
                emit(UserMessage(turn_id=turn_id, text=instruction, source="stop_hook"))
                continue
            break
        continuations = 0
        outcomes = await run_batch(step.calls, env, control, batch=step_no, early=step.early,
                                   max_concurrency=host.max_concurrency)
        result.outcomes.extend(outcomes)
        if control.is_aborted:
            result.reason = "interrupted"
            break
        if any(o.stop_turn for o in outcomes):
            result.reason = "stopped"
            plan = _proposed_plan(outcomes)
            if plan is not None:
                result.text = plan
            break


def _proposed_plan(outcomes: list[Outcome]) -> str | None:
    """ExitPlanMode with nobody to ask (headless) ends the turn: the plan is the turn's result."""
    for outcome in outcomes:
        if isinstance(outcome, ToolCallResult) and outcome.tool == "ExitPlanMode" and outcome.stop_turn:
            text = getattr(outcome.display, "text", None)
            if isinstance(text, str):
                return text
    return None


def running_tasks(session: Any) -> list[dict[str, Any]]:
    """The background commands still running, as the Stop hook is told (Claude Code's `background_tasks`)."""
    tasks = session.services.get("background_tasks")
    listed = tasks.list() if hasattr(tasks, "list") else []
    return [{"id": t.id, "command": t.command, "status": t.status} for t in listed if getattr(t, "running", False)]


async def _settle_unrun(step: StepResult, env: CallEnv, control: TurnControl, step_no: int) -> None:
    """Every complete call gets its one result, even when the step broke or was interrupted. A
    call the stream never finished was never announced, so it is neither run nor owed a result."""
    # early calls are read-only and already running: let them finish, unless the user interrupts
    pending: set[asyncio.Future[Any]] = {t for t in step.early.values() if not t.done()}
    abort_wait = asyncio.ensure_future(control.aborted.wait())
    try:
        while pending and not control.is_aborted:
            _, pending = await asyncio.wait(pending | {abort_wait}, return_when=asyncio.FIRST_COMPLETED)
            pending.discard(abort_wait)
    finally:
        abort_wait.cancel()
    if control.is_aborted:
        await run_batch(step.calls, env, control, batch=step_no, early=step.early)
        return
    outcomes = [step.early[call.id].result() if call.id in step.early
                else synthetic_outcome(call, env, "cancel", "aborted_before_dispatch", STREAM_BROKEN_MESSAGE)
                for call in step.calls]
    failed = sum(isinstance(o, ToolCallError) for o in outcomes)
    env.emit(ToolBatchComplete(turn_id=env.turn_id, batch=step_no, ok=len(outcomes) - failed, failed=failed))


async def stream_step(session: Any, env: CallEnv, step_no: int, control: TurnControl) -> StepResult:
    step = StepResult()
    request = ModelRequest(system=session.system_prompt, messages=session.conversation.history(),
                           tools=session.tool_menu)
    consumer = asyncio.ensure_future(_consume(session, env, step_no, request, step))
    remove = control.on_abort(consumer.cancel)
    try:
        await asyncio.wait({consumer})
    finally:
        remove()
        if not consumer.done():
            consumer.cancel()
            await asyncio.gather(consumer, return_exceptions=True)
    if consumer.done() and not consumer.cancelled() and consumer.exception() is not None:
        step.error = project_exception(consumer.exception())  # type: ignore[arg-type]
    _close_open_text(session, env, step_no, step)
    session.emit(ModelStepEnded(turn_id=env.turn_id, step=step_no, stop_reason=step.stop_reason,
                                usage=step.usage, error=step.error))
    return step


async def _consume(session: Any, env: CallEnv, step_no: int, request: ModelRequest, step: StepResult) -> None:
    emit, turn_id = session.emit, env.turn_id
    tools: dict[int, tuple[str, str, list[str]]] = {}
    try:
        async for event in session.model.stream(request):
            if isinstance(event, TextDelta):
                step.texts.setdefault(event.index, []).append(event.text)
                step.open_text.add(event.index)
                emit(AssistantTextDelta(turn_id=turn_id, step=step_no, index=event.index, text=event.text))
            elif isinstance(event, ToolUseStart):
                tools[event.index] = (event.id, event.name, [])
            elif isinstance(event, ToolInputDelta):
                if event.index in tools:
                    tools[event.index][2].append(event.partial_json)
            elif isinstance(event, BlockStop):
                if event.index in step.open_text:
                    step.open_text.discard(event.index)
                    emit(AssistantText(turn_id=turn_id, step=step_no, index=event.index,
                                       text="".join(step.texts[event.index])))
                elif event.index in tools:
                    call_id, name, parts = tools.pop(event.index)
                    _announce_call(session, env, step_no, event.index, call_id, name, "".join(parts), step)
            elif isinstance(event, ThinkingDelta):
                emit(AssistantThinkingDelta(turn_id=turn_id, step=step_no, index=event.index, text=event.text))
            elif isinstance(event, ThinkingBlockDone):
                emit(AssistantThinking(turn_id=turn_id, step=step_no, index=event.index, raw=event.raw))
            elif isinstance(event, StepStop):
                step.stop_reason = event.stop_reason
                step.usage = dict(event.usage)
            elif isinstance(event, Retrying):
                emit(ModelRetry(turn_id=turn_id, attempt=event.attempt, max_attempts=event.max_attempts,
                                status=event.status, reason=event.reason, wait_ms=event.wait_ms))
    except ModelError as exc:
        step.error = str(exc)


def _announce_call(
    session: Any, env: CallEnv, step_no: int, index: int, call_id: str, name: str, raw_json: str,
    step: StepResult,
) -> None:
    data: Any
    try:
        data = json.loads(raw_json) if raw_json.strip() else {}
    except json.JSONDecodeError:
        data = raw_json  # the pipeline turns it into a schema_invalid result the model can correct
    # a subagent's calls share the session's table and log with everyone else's: its ids are its own
    prefix = getattr(session, "call_id_prefix", "")
    call_id = prefix + call_id if call_id else ""
    if not call_id or any(c.id == call_id for c in step.calls):
        # results are paired by id: a provider that sent none (or the same twice) still gets pairs
        call_id = f"{call_id or prefix + 'call'}_s{step_no}_{index}"
    call = ToolCall(call_id, name, data)
    session.emit(ToolCallRequested(turn_id=env.turn_id, call_id=call_id, step=step_no, index=index,
                                   name=name, input=data))
    step.calls.append(call)
    # Early calls must be a prefix of the response: a read that follows an edit must see the edit,
    # so once one call waits for the batch, every later one does too. The group cap holds as well.
    if (session.early_execution and not step.early_closed and len(step.early) < session.max_concurrency
            and _may_start_early(call, env)):
        step.early[call_id] = asyncio.ensure_future(run_call(call, env, 0))
    else:
        step.early_closed = True


def _may_start_early(call: ToolCall, env: CallEnv) -> bool:
    """Complete, read-only, concurrency-safe and allowed without asking: start while the model
    is still streaming (results are still committed in model order)."""
    spec = env.registry.resolve(call.name) if call.name else None
    if spec is None or not env.registry.is_visible(spec.name) or not isinstance(call.input, dict):
        return False
    data, _ = validate_input(spec, call.input)
    if data is None:
        return False
    flags = spec.flags_of(data)
    if not (flags.effectively_read_only and flags.concurrency_safe and not flags.destructive):
        return False
    if flags.requires_user_interaction or spec.permission.always_ask:
        return False
    decision = env.policy.decide(PermissionQuery(spec, data, flags, env.cwd))
    return decision.behavior == "allow"


def _close_open_text(session: Any, env: CallEnv, step_no: int, step: StepResult) -> None:
    """Text blocks the stream never closed (interrupt, broken stream) are kept as they are."""
    for index in sorted(step.open_text):
        session.emit(AssistantText(turn_id=env.turn_id, step=step_no, index=index,
                                   text="".join(step.texts[index])))
    step.open_text.clear()
