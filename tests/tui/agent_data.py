"""Session events of the built-in agent's features for widget tests and snapshots: two subagents
started by one response, a compaction, a plan — the models a real session emits, with fixed ids
and times so snapshots are stable."""

from __future__ import annotations

from typing import Any

from tests.tui.session_data import CWD, READ, SHELL, T0
from tui_app.runtime.events import (
    AssistantText,
    CallMetrics,
    ConversationCompacted,
    ModelStepStarted,
    PlanApprovalAsked,
    SubagentEnded,
    SubagentStarted,
    ToolCallRequested,
    ToolCallResult,
    ToolCallScheduled,
    ToolCallStarted,
    TurnStarted,
)

PLAN = """# Fix `add()` and cover it

1. In `calc/ops.py`, make `add()` return `a + b` (it subtracts today).
2. Add `tests/test_ops.py::test_add` for positive, negative and zero.
3. Run `python -m pytest -q` and fix what fails.

Risks: `double()` depends on `add()`, so its tests change too."""

SUMMARY = ("The user asked to fix add() in calc/ops.py, which subtracted. Read calc/ops.py and "
           "tests/test_ops.py; changed `return a - b` to `return a + b`; the test run (python -m pytest -q) "
           "passed, 12 tests. The full test output is in vigil-artifact://s/toolu_04-1a2b3c4d. Next: nothing "
           "pending.")


def _stamp(events: list[Any]) -> list[Any]:
    for number, event in enumerate(events, 1):
        event.__dict__.update(seq=number, session_id="20260101-000000-abcdef", ts=T0 + number * 0.25)
    return events


def _call(call_id: str, name: str, data: dict[str, Any], *, agent: str | None = None, step: int = 1,
          index: int = 0, flags: Any = READ, target: str = "", ms: int = 12, output: str = "ok") -> list[Any]:
    return [
        ToolCallRequested(turn_id="turn-1", call_id=call_id, agent_id=agent, step=step, index=index, name=name,
                          input=data),
        ToolCallScheduled(turn_id="turn-1", call_id=call_id, agent_id=agent, batch=step, group=0,
                          groups=[[call_id]]),
        ToolCallStarted(turn_id="turn-1", call_id=call_id, agent_id=agent, tool=name, input=data,
                        target=target, flags=flags),
        ToolCallResult(turn_id="turn-1", call_id=call_id, agent_id=agent, tool=name, model_content=output,
                       metrics=CallMetrics(exec_ms=ms, total_ms=ms + 2, bytes_out=len(output)),
                       original_bytes=len(output)),
    ]


def subagent_events(*, finished: bool = True) -> list[Any]:
    """A prompt, one response with two Agent calls, and what their subagents did."""
    events: list[Any] = [TurnStarted(turn_id="turn-1", prompt="Who calls add(), and what does the config set?"),
                         AssistantText(turn_id="turn-1", step=1, index=0,
                                       text="Two questions at once: I hand each to a subagent.")]
    agents = [("toolu_a", "agent-1", "Explore", "find callers of add()"),
              ("toolu_b", "agent-2", "Explore", "read the config")]
    for index, (call_id, _, kind, description) in enumerate(agents, 1):
        data = {"description": description, "prompt": description, "subagent_type": kind}
        events += [ToolCallRequested(turn_id="turn-1", call_id=call_id, step=1, index=index, name="Agent",
                                     input=data),
                   ToolCallScheduled(turn_id="turn-1", call_id=call_id, batch=1, group=0,
                                     groups=[["toolu_a", "toolu_b"]]),
                   ToolCallStarted(turn_id="turn-1", call_id=call_id, tool="Agent", input=data, target=description,
                                   flags=READ)]
    for call_id, agent_id, kind, description in agents:
        events.append(SubagentStarted(turn_id="turn-1", call_id=call_id, agent_id=agent_id, description=description,
                                      subagent_type=kind, prompt=description, tools=["Read", "Glob", "Grep"]))
    events.append(ModelStepStarted(turn_id="turn-1", agent_id="agent-1", step=2, model="scripted"))
    events += _call("agent-1_t1", "Grep", {"pattern": "add\\(", "path": "calc"}, agent="agent-1", step=2,
                    target="add\\(", output="calc/ops.py:9:    return add(x, x)")
    events.append(ModelStepStarted(turn_id="turn-1", agent_id="agent-2", step=3, model="scripted"))
    events += _call("agent-2_t1", "Read", {"file_path": f"{CWD}/config.toml"}, agent="agent-2", step=3,
                    target=f"{CWD}/config.toml", output="debug = true")
    events.append(ModelStepStarted(turn_id="turn-1", agent_id="agent-1", step=4, model="scripted"))
    events += _call("agent-1_t2", "Read", {"file_path": f"{CWD}/calc/ops.py"}, agent="agent-1", step=4,
                    target=f"{CWD}/calc/ops.py", output="def add(a, b): ...")
    events += _call("agent-1_t3", "Bash", {"command": "git log --oneline -3 -- calc/ops.py"}, agent="agent-1",
                    step=4, index=1, flags=SHELL, target="git log --oneline -3 -- calc/ops.py", ms=41)
    if not finished:
        return _stamp(events)
    answers = {"agent-1": "add() is called once: by double() in calc/ops.py:9.\nNo other module calls it.",
               "agent-2": "config.toml sets debug = true."}
    for call_id, agent_id, _, _ in agents:
        events += [SubagentEnded(turn_id="turn-1", call_id=call_id, agent_id=agent_id, reason="completed",
                                 steps=2 if agent_id == "agent-1" else 1, calls=3 if agent_id == "agent-1" else 1,
                                 result=answers[agent_id], duration_ms=2300 if agent_id == "agent-1" else 900),
                   ToolCallResult(turn_id="turn-1", call_id=call_id, tool="Agent", model_content=answers[agent_id],
                                  metrics=CallMetrics(exec_ms=2300, total_ms=2310, bytes_out=60), original_bytes=60)]
    return _stamp(events)


def compaction_events() -> list[Any]:
    return _stamp([
        TurnStarted(turn_id="turn-1", prompt="Fix add() and run the tests"),
        AssistantText(turn_id="turn-1", step=1, index=0, text="Fixed: `add()` now adds, and the 12 tests pass."),
        ConversationCompacted(summary=SUMMARY, boundary_seq=2, trigger="auto", tokens_before=163_402,
                              tokens_after=96, usage={"input_tokens": 163_402, "output_tokens": 96}),
        TurnStarted(turn_id="turn-2", prompt="Now make double() handle strings"),
        AssistantText(turn_id="turn-2", step=3, index=0, text="Going on from the summary: reading calc/ops.py."),
    ])


def plan_request() -> PlanApprovalAsked:
    return _stamp([PlanApprovalAsked(call_id="toolu_plan", request_id="perm-7", plan=PLAN)])[0]
