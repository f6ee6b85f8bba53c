"""Per-call overhead of the tool runtime, next to pydantic-ai's, measured in the same run.

A no-op tool on the allow path, 200 calls as 20 model responses × 10 calls and as 200 × 1.
Vigil runs its whole turn loop: scripted model stream, pipeline, scheduler, executor, and an event
log written to disk. pydantic-ai runs an Agent with a FunctionModel that returns the same calls.

    .venv/bin/python bench/executor_overhead.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_app.agents.builtin import run_turn
from tui_app.providers.scripted import Script, ScriptedModel
from tui_app.runtime.contract import RawResult, StrictInput, ToolFlags, ToolSpec
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.session import Session

SHAPES = [(20, 10), (200, 1)]


class NoopInput(StrictInput):
    n: int


async def noop(args: NoopInput, ctx) -> RawResult:
    return RawResult(output="ok")


NOOP = ToolSpec(name="noop", description="does nothing", handler=noop, input_model=NoopInput,
                flags=ToolFlags(read_only=True, concurrency_safe=True, side_effect_scope="none",
                                needs_approval=False, risk="low"))


def script(responses: int, per: int) -> Script:
    steps = [{"tool_calls": [{"id": f"c{r}_{i}", "name": "noop", "input": {"n": i}} for i in range(per)]}
             for r in range(responses)]
    steps.append({"text": "done"})
    return Script.model_validate({"steps": steps})


async def vigil_run(responses: int, per: int, home: str) -> float:
    registry = ToolRegistry()
    registry.register(NOOP)
    session = Session(agent=run_turn, cwd=home, model=ScriptedModel(script(responses, per), chunk_chars=1 << 20),
                      registry=registry, log_path=Path(home) / f"{time.time_ns()}.jsonl", early_execution=False)
    await session.start()
    began = time.perf_counter()
    result = await session.run_turn("go")
    elapsed = time.perf_counter() - began
    await session.close()
    assert result.reason == "completed" and len(result.outcomes) == responses * per, result
    return elapsed


def pydantic_ai_run(responses: int, per: int) -> float:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import UsageLimits

    state = {"step": 0}

    def respond(messages, info):
        step = state["step"]
        state["step"] += 1
        if step < responses:
            return ModelResponse(parts=[ToolCallPart("noop", {"n": i}, tool_call_id=f"c{step}_{i}")
                                        for i in range(per)])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(respond))

    @agent.tool_plain
    def noop(n: int) -> str:
        return "ok"

    began = time.perf_counter()
    result = agent.run_sync("go", usage_limits=UsageLimits(request_limit=None))
    elapsed = time.perf_counter() - began
    assert result.output == "done"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"executor overhead: no-op tool, allow path, median of {args.repeat} runs (µs per call)")
    print(f"{'shape':>10} {'vigil':>10} {'pydantic-ai':>12} {'ratio':>8}")
    with tempfile.TemporaryDirectory() as home:
        os.environ["VIGIL_HOME"] = home
        for responses, per in SHAPES:
            calls = responses * per
            asyncio.run(vigil_run(responses, per, home))  # warm up imports and caches
            pydantic_ai_run(responses, per)
            ours = statistics.median(asyncio.run(vigil_run(responses, per, home)) for _ in range(args.repeat))
            theirs = statistics.median(pydantic_ai_run(responses, per) for _ in range(args.repeat))
            us, them = ours / calls * 1e6, theirs / calls * 1e6
            print(f"{responses:>4} × {per:<3} {us:>10.1f} {them:>12.1f} {them / us:>7.1f}×")
    print("goal: vigil ≤ 1/5 of pydantic-ai's time per call in both shapes (ratio ≥ 5×)")


if __name__ == "__main__":
    main()
