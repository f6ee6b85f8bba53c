"""1,000 random interleavings of user answers, PermissionRequest hook results and turn aborts on
the real broker and pipeline: every request resolves exactly once, every call gets one result,
nothing runs twice, nothing runs after a deny.

Timings are counted in event-loop ticks so a failing example replays exactly. The hooks here are
an in-process HookRunner with scripted delays (thousands of hook processes would only test the
operating system); the race with real hook processes is in test_approval_race.py.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fakes import make_env
from tests.perm_specs import MCP_READ, record
from tests.waiting import DEADLINE_S
from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.executor import TurnControl, run_batch
from tui_app.runtime.hooks.runner import HookCall, NoHooks, PermissionHookAnswer
from tui_app.runtime.permissions.broker import ApprovalAnswer, ApprovalBroker
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.pipeline import ToolCall

USER_ACTIONS = ("none", "allow", "deny", "always", "feedback", "wrong_hash")
HOOK_ACTIONS = ("none", "allow", "deny", "interrupt", "undecided", "broken")


@dataclass(frozen=True)
class Plan:
    user: str
    user_tick: int
    hook: str
    hook_tick: int


async def ticks(n: int) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


class ScriptedHooks(NoHooks):
    def __init__(self, plans: dict[str, Plan]) -> None:
        self.plans = plans
        self.asked: Counter[str] = Counter()

    def has_permission_request_hooks(self, tool_name: str) -> bool:
        return True

    async def permission_request(self, call: HookCall, suggestions: list[dict[str, Any]]
                                 ) -> PermissionHookAnswer | None:
        plan = self.plans[call.tool_use_id]
        self.asked[call.tool_use_id] += 1
        await ticks(plan.hook_tick)
        if plan.hook == "broken":
            raise RuntimeError("the hook runner broke")
        if plan.hook in ("none", "undecided"):
            return None
        if plan.hook == "interrupt":
            return PermissionHookAnswer("deny", message="stop", interrupt=True)
        return PermissionHookAnswer(plan.hook, message=f"hook says {plan.hook}")  # type: ignore[arg-type]


def user_answer(action: str, request) -> ApprovalAnswer:
    digest = request.input_sha256
    return {
        "allow": ApprovalAnswer("allow", input_sha256=digest),
        "deny": ApprovalAnswer("deny", input_sha256=digest),
        "always": ApprovalAnswer("allow", input_sha256=digest, always=True),
        "feedback": ApprovalAnswer("deny", input_sha256=digest, feedback="not now"),
        "wrong_hash": ApprovalAnswer("allow", input_sha256="f" * 64),
    }[action]


plans = st.builds(Plan, st.sampled_from(USER_ACTIONS), st.integers(0, 12), st.sampled_from(HOOK_ACTIONS),
                  st.integers(0, 12))
scenarios = st.tuples(st.lists(plans, min_size=1, max_size=4), st.booleans(), st.one_of(st.none(), st.integers(0, 30)),
                      st.booleans())


async def play(call_plans: list[Plan], interactive: bool, abort_at: int | None, parallel: bool) -> None:
    ran: Counter[str] = Counter()

    async def handler(args: Any, ctx) -> Any:
        ran[ctx.call_id] += 1
        return await record(args, ctx)

    flags = MCP_READ.flags if parallel else MCP_READ.flags.model_copy(update={"concurrency_safe": False})
    tool = ToolSpec(name=MCP_READ.name, description="t", handler=handler, source="mcp",
                    input_schema=MCP_READ.input_schema, flags=flags, permission=MCP_READ.permission)
    calls = [ToolCall(f"c{i}", tool.name, {"path": str(i)}) for i in range(len(call_plans))]
    by_call = dict(zip((c.id for c in calls), call_plans, strict=True))
    hooks = ScriptedHooks(by_call)
    broker = ApprovalBroker(interactive=interactive)
    env, rec = make_env(tool, policy=RulePolicy(cwd="/tmp"), hooks=hooks, broker=broker)
    control = TurnControl()
    accepted: Counter[str] = Counter()

    async def client(call_id: str, plan: Plan) -> None:
        if plan.user == "none":
            return
        for _ in range(400):
            request = next((r for r in broker.pending() if r.call_id == call_id), None)
            if request is not None or any(e.call_id == call_id for e in rec.of("ToolCallResult") + rec.of(
                    "ToolCallError")):
                break
            await ticks(1)
        if request is None:
            return
        await ticks(plan.user_tick)
        if broker.answer(request.request_id, user_answer(plan.user, request)):
            accepted[request.request_id] += 1

    async def aborter() -> None:
        # with no answer at all an interactive request waits forever (there is no approval timeout
        # by default): then the user gives up and interrupts the turn
        await ticks(abort_at if abort_at is not None else 3000)
        control.abort()

    clients = [asyncio.ensure_future(client(c.id, by_call[c.id])) for c in calls]
    abort_task = asyncio.ensure_future(aborter())
    outcomes = await run_batch(calls, env, control)
    abort_task.cancel()
    await asyncio.gather(*clients, abort_task, return_exceptions=True)

    requested = rec.of("PermissionRequested")
    # a call an earlier "always allow" rule now allows resolves without a request
    resolved = [e for e in rec.of("PermissionResolved") if e.request_id is not None]
    assert all(e.decided_by == "rule" for e in rec.of("PermissionResolved") if e.request_id is None)
    # every request resolves exactly once, and only requests that were made resolve
    assert Counter(e.request_id for e in resolved) == Counter({e.request_id: 1 for e in requested})
    # every call exactly one result
    results = rec.of("ToolCallResult") + rec.of("ToolCallError")
    assert sorted(e.call_id for e in results) == sorted(c.id for c in calls)
    assert [o.call_id for o in outcomes] == [c.id for c in calls]
    decision_of = {e.call_id: e for e in rec.of("PermissionResolved")}
    for call in calls:
        assert ran[call.id] <= 1  # nothing runs twice
        resolution = decision_of.get(call.id)
        if ran[call.id]:
            assert resolution is not None and resolution.decision == "allow"  # nothing runs without an allow
        if resolution is not None and resolution.decision == "deny":
            assert ran[call.id] == 0  # nothing runs after a deny
        if resolution is not None and resolution.decided_by == "user":
            assert accepted[resolution.request_id] == 1
        assert accepted[resolution.request_id if resolution else ""] <= 1
    for request_id, count in accepted.items():
        assert count == 1 and decision_of_request(resolved, request_id).decided_by in ("user", "turn")
    assert broker.pending() == []
    if not interactive:
        assert not accepted


def decision_of_request(resolved: list, request_id: str):
    return next(e for e in resolved if e.request_id == request_id)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios)
def test_random_interleavings_resolve_every_request_exactly_once(scenario):
    call_plans, interactive, abort_at, parallel = scenario
    asyncio.run(asyncio.wait_for(play(call_plans, interactive, abort_at, parallel), DEADLINE_S))
