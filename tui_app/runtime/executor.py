"""Runs one model response's batch of calls: group, run group by group, commit in model order.

Calls of a group overlap; results come back in the model's order whatever order they finish in.
A result that stops the turn gives every later group a synthetic result; a user interrupt
settles the calls in flight as `cancelled` and gives the rest `aborted_before_dispatch`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence

from tui_app.runtime.events import ToolBatchComplete, ToolCallError, ToolCallScheduled
from tui_app.runtime.outcome import ABORTED_BEFORE_DISPATCH_MESSAGE, TURN_STOP_MESSAGE, Outcome
from tui_app.runtime.pipeline import CallEnv, ToolCall, run_call, synthetic_outcome
from tui_app.runtime.scheduler import DEFAULT_MAX_CONCURRENCY, plan_groups
from tui_app.runtime.validation import normalise_input


class TurnControl:
    """The turn's interrupt switch. `abort()` must be called on the runtime's loop (the session
    offers a thread-safe wrapper)."""

    def __init__(self) -> None:
        self.aborted = asyncio.Event()
        self.reason = ""
        self._on_abort: list[Callable[[], object]] = []

    def abort(self, reason: str = "interrupted") -> None:
        self.reason = reason
        self.aborted.set()
        callbacks, self._on_abort = self._on_abort, []
        for callback in callbacks:
            callback()

    def on_abort(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call `callback` when the turn is aborted (at once if it already was); returns its remover.
        A callback costs nothing per call, where a task waiting on `aborted` costs a task each."""
        if self.is_aborted:
            callback()
            return _nothing
        self._on_abort.append(callback)

        def remove() -> None:
            if callback in self._on_abort:
                self._on_abort.remove(callback)

        return remove

    @property
    def is_aborted(self) -> bool:
        return self.aborted.is_set()


def _nothing() -> None:
    return None


def may_overlap(call: ToolCall, env: CallEnv) -> bool:
    """Whether a call may share a group. A call that will fail lookup or validation touches
    nothing, so it may overlap too."""
    spec = env.registry.resolve(call.name) if call.name else None
    if spec is None:
        return True
    data = normalise_input(call.input)
    if not isinstance(data, dict):
        return True
    try:
        flags = spec.flags_of(data)
    except Exception:
        flags = spec.flags
    return flags.runs_in_parallel


async def run_batch(
    calls: Sequence[ToolCall],
    env: CallEnv,
    control: TurnControl,
    batch: int = 0,
    early: Mapping[str, asyncio.Task[Outcome]] | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
) -> list[Outcome]:
    early = early or {}
    groups = plan_groups([may_overlap(c, env) for c in calls], max_concurrency)
    group_ids = [[calls[i].id for i in g] for g in groups]
    for gi, group in enumerate(groups):
        for i in group:
            env.emit(ToolCallScheduled(turn_id=env.turn_id, call_id=calls[i].id, batch=batch, group=gi,
                                       groups=group_ids))
    outcomes: dict[str, Outcome] = {}
    stopped = False
    for gi, group in enumerate(groups):
        members = [calls[i] for i in group]
        if stopped or control.is_aborted:
            code, message = (("turn_stopped", TURN_STOP_MESSAGE) if stopped
                             else ("aborted_before_dispatch", ABORTED_BEFORE_DISPATCH_MESSAGE))
            outcomes.update(await _settle_early(members, env, early))
            for call in members:
                if call.id not in outcomes:
                    outcomes[call.id] = synthetic_outcome(call, env, "cancel", code, message)
            continue
        results = await run_group(members, env, control, gi, early)
        outcomes.update(results)
        stopped = any(o.stop_turn for o in results.values())
    ordered = [outcomes[c.id] for c in calls]
    failed = sum(isinstance(o, ToolCallError) for o in ordered)
    env.emit(ToolBatchComplete(turn_id=env.turn_id, batch=batch, ok=len(ordered) - failed, failed=failed))
    return ordered


async def run_group(
    members: Sequence[ToolCall],
    env: CallEnv,
    control: TurnControl,
    group: int,
    early: Mapping[str, asyncio.Task[Outcome]],
) -> dict[str, Outcome]:
    tasks = {c.id: early.get(c.id) or asyncio.ensure_future(run_call(c, env, group)) for c in members}

    def cancel_running() -> None:
        for task in tasks.values():
            task.cancel()  # a call settles itself as `cancelled`; one that never began is aborted below

    remove = control.on_abort(cancel_running)
    try:
        # each call turns its own failures and cancellation into an outcome, so gathering them
        # never raises for a call; cancelling the turn itself cancels every call it gathers
        await asyncio.gather(*tasks.values(), return_exceptions=True)
    except asyncio.CancelledError:
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)  # each call settles before we go
        raise
    finally:
        remove()
    return {c.id: _outcome_of(tasks[c.id], c, env) for c in members}


def _outcome_of(task: asyncio.Task[Outcome], call: ToolCall, env: CallEnv) -> Outcome:
    """A task cancelled before its first step never ran its pipeline, so it owes no result yet."""
    if task.cancelled():
        return synthetic_outcome(call, env, "cancel", "aborted_before_dispatch", ABORTED_BEFORE_DISPATCH_MESSAGE)
    return task.result()


async def _settle_early(
    members: Sequence[ToolCall], env: CallEnv, early: Mapping[str, asyncio.Task[Outcome]]
) -> dict[str, Outcome]:
    """Calls started early (while the model streamed) count as started: a finished one keeps its
    result, a running one is cancelled and settles itself."""
    started = {c.id: (early[c.id], c) for c in members if c.id in early}
    for task, _ in started.values():
        if not task.done():
            task.cancel()
    if started:
        await asyncio.gather(*(t for t, _ in started.values()), return_exceptions=True)
    return {call_id: _outcome_of(task, call, env) for call_id, (task, call) in started.items()}
