"""Batches: grouping, order of commitment, turn stops and user interrupts."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fakes import SAFE, UNSAFE, make_env, work_spec
from tui_app.runtime.events import ToolCallError, ToolCallResult
from tui_app.runtime.executor import TurnControl, run_batch
from tui_app.runtime.outcome import ABORTED_BEFORE_DISPATCH_MESSAGE, TURN_STOP_MESSAGE
from tui_app.runtime.pipeline import ToolCall
from tui_app.runtime.scheduler import plan_groups

SAFE_TOOL = work_spec("Look", SAFE)
UNSAFE_TOOL = work_spec("Change", UNSAFE)


def test_consecutive_safe_calls_share_a_group_and_unsafe_calls_stand_alone():
    # [safe a, safe b, unsafe c, unsafe d, safe e] → [a b] [c] [d] [e]
    assert plan_groups([True, True, False, False, True]) == [[0, 1], [2], [3], [4]]


def test_groups_hold_at_most_max_concurrency():
    assert plan_groups([True] * 23) == [list(range(10)), list(range(10, 20)), [20, 21, 22]]
    assert plan_groups([True] * 4, max_concurrency=3) == [[0, 1, 2], [3]]


async def test_scheduled_events_show_the_groups_of_a_real_batch():
    env, rec = make_env(SAFE_TOOL, UNSAFE_TOOL)
    calls = [ToolCall("a", "Look", {}), ToolCall("b", "Look", {}), ToolCall("c", "Change", {}),
             ToolCall("d", "Change", {}), ToolCall("e", "Look", {})]
    await run_batch(calls, env, TurnControl())
    scheduled = rec.of("ToolCallScheduled")
    assert [(e.call_id, e.group) for e in scheduled] == [("a", 0), ("b", 0), ("c", 1), ("d", 2), ("e", 3)]
    assert scheduled[0].groups == [["a", "b"], ["c"], ["d"], ["e"]]
    complete = rec.of("ToolBatchComplete")
    assert len(complete) == 1 and (complete[0].ok, complete[0].failed) == (5, 0)


async def test_calls_of_a_group_overlap():
    env, _ = make_env(SAFE_TOOL)
    calls = [ToolCall(str(i), "Look", {"delay_ms": 200}) for i in range(5)]
    loop = asyncio.get_running_loop()
    began = loop.time()
    await run_batch(calls, env, TurnControl())
    assert loop.time() - began < 0.6  # five 200 ms calls side by side, not one after another


async def test_results_are_committed_in_model_order_even_when_a_later_call_finishes_first():
    env, rec = make_env(SAFE_TOOL)
    calls = [ToolCall("slow", "Look", {"label": "slow", "delay_ms": 150}),
             ToolCall("fast", "Look", {"label": "fast"})]
    outcomes = await run_batch(calls, env, TurnControl())
    assert [o.call_id for o in outcomes] == ["slow", "fast"]
    finished = [e.call_id for e in rec.events if e.type == "ToolCallResult"]
    assert finished == ["fast", "slow"]  # the screen sees completion order, the model sees model order


async def test_a_stop_turn_result_cancels_every_later_group():
    env, rec = make_env(SAFE_TOOL, UNSAFE_TOOL)
    calls = [ToolCall("a", "Change", {"stop": True}), ToolCall("b", "Look", {}), ToolCall("c", "Change", {})]
    outcomes = await run_batch(calls, env, TurnControl())
    assert isinstance(outcomes[0], ToolCallResult) and outcomes[0].stop_turn
    for outcome in outcomes[1:]:
        assert isinstance(outcome, ToolCallError)
        assert (outcome.code, outcome.model_content) == ("turn_stopped", TURN_STOP_MESSAGE)
    assert "ToolCallStarted" not in [e.type for e in rec.events if e.call_id in ("b", "c")]


async def test_an_interrupt_settles_started_calls_as_cancelled_and_the_rest_as_aborted():
    env, rec = make_env(SAFE_TOOL, UNSAFE_TOOL)
    control = TurnControl()
    calls = [ToolCall("a", "Look", {"delay_ms": 5000}), ToolCall("b", "Look", {"delay_ms": 5000}),
             ToolCall("c", "Change", {}), ToolCall("d", "Look", {})]
    batch = asyncio.ensure_future(run_batch(calls, env, control))
    while len(rec.of("ToolCallStarted")) < 2:
        await asyncio.sleep(0.01)
    control.abort()
    outcomes = await batch
    assert [o.code for o in outcomes] == ["cancelled", "cancelled", "aborted_before_dispatch",
                                         "aborted_before_dispatch"]
    assert outcomes[2].model_content == ABORTED_BEFORE_DISPATCH_MESSAGE
    # aborted calls never started
    assert {e.call_id for e in rec.of("ToolCallStarted")} == {"a", "b"}


async def test_an_interrupt_reaches_a_call_waiting_for_approval():
    from tui_app.runtime.permissions.broker import ApprovalBroker

    asking = work_spec("Ask", SAFE.model_copy(update={"needs_approval": True, "read_only": False}))
    env, rec = make_env(asking, broker=ApprovalBroker(interactive=True))
    control = TurnControl()
    batch = asyncio.ensure_future(run_batch([ToolCall("a", "Ask", {})], env, control))
    while not rec.of("PermissionRequested"):
        await asyncio.sleep(0.01)
    control.abort()
    (outcome,) = await batch
    assert outcome.code == "cancelled" and env.broker.pending() == []


# ---- property: exactly one result per call id, always in model order --------------------------

call_strategy = st.tuples(
    st.sampled_from(["Look", "Change", "Nope", ""]),
    st.integers(min_value=0, max_value=6),  # delay ms
    st.sampled_from([None, None, None, "business", "crash"]),
    st.booleans(),  # asks to stop the turn
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(call_strategy, min_size=1, max_size=14),
       abort_after_ms=st.one_of(st.none(), st.integers(min_value=0, max_value=8)),
       max_concurrency=st.integers(min_value=1, max_value=10))
def test_every_call_gets_exactly_one_result_in_model_order(batch, abort_after_ms, max_concurrency):
    async def scenario():
        env, rec = make_env(SAFE_TOOL, UNSAFE_TOOL)
        control = TurnControl()
        calls = [ToolCall(f"c{i}", name, {"delay_ms": delay, "fail": fail, "stop": stop})
                 for i, (name, delay, fail, stop) in enumerate(batch)]
        task = asyncio.ensure_future(run_batch(calls, env, control, max_concurrency=max_concurrency))
        if abort_after_ms is not None:
            await asyncio.sleep(abort_after_ms / 1000)
            control.abort()
        outcomes = await task
        assert [o.call_id for o in outcomes] == [c.id for c in calls]
        emitted = [e.call_id for e in rec.events if e.type in ("ToolCallResult", "ToolCallError")]
        assert sorted(emitted) == sorted(c.id for c in calls)  # one event each, none twice
        started = {e.call_id for e in rec.of("ToolCallStarted")}
        for outcome in outcomes:
            if outcome.type == "ToolCallError" and outcome.code in ("aborted_before_dispatch", "turn_stopped"):
                assert outcome.call_id not in started
        return outcomes

    asyncio.run(scenario())
