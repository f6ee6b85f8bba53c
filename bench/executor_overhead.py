"""Per-call overhead of the tool runtime, next to pydantic-ai's, measured in the same run.

A no-op tool on the allow path, as 20 model responses × 10 calls and as 200 × 1. Vigil runs its
whole turn loop: scripted model stream, pipeline, scheduler, executor, and an event log written to
disk. pydantic-ai runs an Agent with a FunctionModel that returns the same calls. Both timers take
in what a caller pays for one run: pydantic-ai's `run_sync` (its event loop included), Vigil's
session start, the turn and the session's close (its log synced to disk).

Then, for Vigil alone, 5,000 × 1 in a fresh process each: whether the last tenth of the calls
costs what the first tenth does (the time between consecutive results), and the peak memory of
the process at 500 and at 5,000 calls (what each further call keeps).

Every figure is the median (min–max) of --repeat runs.

    .venv/bin/python bench/executor_overhead.py [--repeat 5] [--long 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_app.agents.builtin_agent import BuiltinAgent
from tui_app.providers.scripted import Script, ScriptedModel
from tui_app.runtime.contract import RawResult, StrictInput, ToolFlags, ToolSpec
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.session import Session

SHAPES = [(20, 10), (200, 1)]
#: the CPU time of each run, in the order run (a loaded machine's waits are not in it)
CPU_TIMES: list[float] = []
GOAL_US = 100


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


def vigil_session(responses: int, per: int, home: str) -> Session:
    registry = ToolRegistry()
    registry.register(NOOP)
    agent = BuiltinAgent(ScriptedModel(script(responses, per), chunk_chars=1 << 20))
    return Session(agent=agent, cwd=home, registry=registry, log_path=Path(home) / f"{time.time_ns()}.jsonl",
                   early_execution=False)


async def vigil_run(responses: int, per: int, home: str, marks: list[float] | None = None,
                    session: Session | None = None) -> float:
    session = session or vigil_session(responses, per, home)
    if marks is not None:
        session.subscribe(lambda e: marks.append(time.perf_counter()) if e.type == "ToolCallResult" else None)
    began, cpu = time.perf_counter(), time.process_time()
    await session.start()
    result = await session.run_turn("go")
    await session.close()
    elapsed = time.perf_counter() - began
    CPU_TIMES.append(time.process_time() - cpu)
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

    began, cpu = time.perf_counter(), time.process_time()
    result = agent.run_sync("go", usage_limits=UsageLimits(request_limit=None))
    elapsed = time.perf_counter() - began
    CPU_TIMES.append(time.process_time() - cpu)
    assert result.output == "done"
    return elapsed


def rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def long_run_child(calls: int) -> None:
    """In a fresh process: one run of `calls` × 1 (after a warm-up run); prints the call gaps'
    first and last tenths and how much the process grew over the run."""
    with tempfile.TemporaryDirectory() as home:
        os.environ["VIGIL_HOME"] = home
        asyncio.run(vigil_run(50, 1, home))  # imports and first-use costs out of the way
        session = vigil_session(calls, 1, home)  # the script (the model's side) is not the runtime's
        gc.collect()
        before = rss_kb()
        marks: list[float] = []
        asyncio.run(vigil_run(calls, 1, home, marks, session))
        grown = rss_kb() - before
    gaps = [b - a for a, b in itertools.pairwise(marks)]
    tenth = max(1, len(gaps) // 10)
    first, last = statistics.mean(gaps[:tenth]), statistics.mean(gaps[-tenth:])
    print(json.dumps({"first_us": first * 1e6, "last_us": last * 1e6, "grown_kb": grown}))


def long_run(calls: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", str(calls)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def spread(values: list[float], fmt: str = "{:.1f}") -> str:
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--long", type=int, default=5000)
    parser.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        long_run_child(args.child)
        return
    print(f"executor overhead: no-op tool, allow path, µs per call, median (min–max) of {args.repeat} runs; "
          "both timers include the run's start and end")
    print(f"{'shape':>10} {'vigil':>22} {'pydantic-ai':>24} {'ratio':>8}")
    verdicts = []
    with tempfile.TemporaryDirectory() as home:
        os.environ["VIGIL_HOME"] = home
        for responses, per in SHAPES:
            calls = responses * per
            asyncio.run(vigil_run(responses, per, home))  # warm up imports and caches
            pydantic_ai_run(responses, per)
            ours, theirs, ours_cpu, theirs_cpu = [], [], [], []
            for _ in range(args.repeat):  # interleaved: a slow spell of the machine hits both
                ours.append(asyncio.run(vigil_run(responses, per, home)) / calls * 1e6)
                ours_cpu.append(CPU_TIMES[-1] / calls * 1e6)
                theirs.append(pydantic_ai_run(responses, per) / calls * 1e6)
                theirs_cpu.append(CPU_TIMES[-1] / calls * 1e6)
            ratio = statistics.median(theirs) / statistics.median(ours)
            print(f"{responses:>4} × {per:<3} {spread(ours):>22} {spread(theirs):>24} {ratio:>7.1f}×")
            print(f"{'  CPU time':10} {spread(ours_cpu):>22} {spread(theirs_cpu):>24} "
                  f"{statistics.median(theirs_cpu) / statistics.median(ours_cpu):>7.1f}×")
            verdicts.append((f"{responses} × {per}", statistics.median(ours)))
    small = max(1, args.long // 10)
    runs = [(long_run(small), long_run(args.long)) for _ in range(args.repeat)]
    growth = [(b["last_us"] / b["first_us"] - 1) * 100 for _, b in runs]
    per_call_kb = [(b["grown_kb"] - a["grown_kb"]) / (args.long - small) for a, b in runs]
    print(f"{args.long:,} × 1, fresh process each: the last tenth of the calls costs {spread(growth, '{:+.0f}')} % "
          f"more than the first; the process grew {spread([a['grown_kb'] / 1024 for a, _ in runs])} MB over "
          f"{small:,} calls, {spread([b['grown_kb'] / 1024 for _, b in runs])} MB over {args.long:,} "
          f"({spread(per_call_kb, '{:.2f}')} KB a further call: the conversation itself)")
    for name, us in verdicts:
        print(f"goal (≤ {GOAL_US} µs a call), {name}: {'met' if us <= GOAL_US else 'NOT met'} ({us:.1f} µs)")


if __name__ == "__main__":
    main()
