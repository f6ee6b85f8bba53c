"""The approval race under load: 10,000 calls that need approval, on the real pipeline and broker.

Each call is asked; a client thread (what the TUI does) answers after a random delay, while a
PermissionRequest hook answers after another random delay (allow, deny, or no decision). Calls run
50 at a time. Printed: races per second, how many requests resolved exactly once (must be all),
who won, and the latency from the winning answer to `PermissionResolved` (p50 / p99), separately
for answers from the client thread and from hooks on the loop.

The hook here is in-process (spawning 10,000 processes would measure fork, not the broker).

    .venv/bin/python bench/approval_race.py [--races 10000] [--concurrency 50] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_app.runtime.contract import PermissionSpec, RawResult, ToolFlags, ToolSpec
from tui_app.runtime.hooks.runner import HookCall, NoHooks, PermissionHookAnswer
from tui_app.runtime.permissions.broker import ApprovalAnswer, ApprovalBroker
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.pipeline import CallEnv, ToolCall, run_call
from tui_app.runtime.registry import ToolRegistry

MAX_DELAY_S = 0.002


async def deploy(args: Any, ctx: Any) -> RawResult:
    return RawResult(output="deployed")


DEPLOY = ToolSpec(name="Deploy", description="needs approval", handler=deploy,
                  input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
                  flags=ToolFlags(needs_approval=True), permission=PermissionSpec(kind="other"))


class RacingHook(NoHooks):
    def __init__(self, rng: random.Random, answered_at: dict[str, tuple[str, float]]) -> None:
        self.rng = rng
        self.answered_at = answered_at

    def has_permission_request_hooks(self, tool_name: str) -> bool:
        return True

    async def permission_request(self, call: HookCall, suggestions: list[dict[str, Any]]
                                 ) -> PermissionHookAnswer | None:
        await asyncio.sleep(self.rng.uniform(0, MAX_DELAY_S))
        word = self.rng.choice(("allow", "deny", None))
        if word is None:
            return None
        self.answered_at.setdefault(call.tool_use_id, ("hook", time.perf_counter()))
        return PermissionHookAnswer(word)  # type: ignore[arg-type]


class Client(threading.Thread):
    """Answers every pending request after a random delay, from its own thread."""

    def __init__(self, broker: ApprovalBroker, rng: random.Random, answered_at: dict[str, tuple[str, float]]) -> None:
        super().__init__(daemon=True)
        self.broker, self.rng, self.answered_at = broker, rng, answered_at
        self.stop = threading.Event()
        self.accepted = 0
        self.refused = 0

    def run(self) -> None:
        due: dict[str, float] = {}
        while not self.stop.is_set():
            now = time.perf_counter()
            for request in self.broker.pending():
                if request.request_id not in due:
                    due[request.request_id] = now + self.rng.uniform(0, MAX_DELAY_S)
                elif due[request.request_id] <= now:
                    del due[request.request_id]
                    due[request.request_id + "/done"] = float("inf")
                    word = self.rng.choice(("allow", "deny"))
                    at = time.perf_counter()
                    if self.broker.answer(request.request_id, ApprovalAnswer(word, input_sha256=request.input_sha256)):
                        self.accepted += 1
                        self.answered_at[request.call_id] = ("user", at)
                    else:
                        self.refused += 1
            time.sleep(0.0001)


async def run(races: int, concurrency: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    answered_at: dict[str, tuple[str, float]] = {}
    resolved_at: dict[str, float] = {}
    resolutions: Counter[str] = Counter()
    requests: set[str] = set()
    winners: Counter[str] = Counter()

    def emit(event: Any) -> Any:
        if event.type == "PermissionRequested":
            requests.add(event.request_id)
        elif event.type == "PermissionResolved" and event.request_id:
            resolved_at[event.call_id] = time.perf_counter()
            resolutions[event.request_id] += 1
            winners[event.decided_by] += 1
        return event

    registry = ToolRegistry()
    registry.register(DEPLOY)
    broker = ApprovalBroker(interactive=True)
    env = CallEnv(session_id="bench", cwd="/tmp", registry=registry, policy=RulePolicy(cwd="/tmp"),
                  hooks=RacingHook(rng, answered_at), broker=broker, emit=emit)
    client = Client(broker, random.Random(seed + 1), answered_at)
    client.start()
    began = time.perf_counter()
    for start in range(0, races, concurrency):
        batch = [ToolCall(f"c{i}", "Deploy", {"n": i}) for i in range(start, min(races, start + concurrency))]
        await asyncio.gather(*(run_call(call, env) for call in batch))
    elapsed = time.perf_counter() - began
    client.stop.set()
    client.join()
    latency: dict[str, list[float]] = {"user": [], "hook": []}
    for call_id, (who, at) in answered_at.items():
        if call_id in resolved_at and resolved_at[call_id] >= at:
            latency[who].append((resolved_at[call_id] - at) * 1000)
    return {"elapsed": elapsed, "requests": len(requests), "exactly_once": sum(1 for r in requests
                                                                               if resolutions[r] == 1),
            "winners": winners, "latency": latency, "refused": client.refused}


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--races", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    result = asyncio.run(run(args.races, args.concurrency, args.seed))
    print(f"approval races: {args.races} calls, {args.concurrency} at a time, answers and hooks after "
          f"0–{MAX_DELAY_S * 1000:.0f} ms")
    print(f"  races/s                 {result['requests'] / result['elapsed']:,.0f}  ({result['elapsed']:.2f} s)")
    print(f"  resolved exactly once   {result['exactly_once']} of {result['requests']}")
    print(f"  decided by              {dict(result['winners'])}; late client answers refused: {result['refused']}")
    for who in ("user", "hook"):
        values = result["latency"][who]
        mean = statistics.fmean(values) if values else float("nan")
        print(f"  answer → PermissionResolved ({who:4}, n={len(values)}): p50 {percentile(values, 0.5):.3f} ms, "
              f"p99 {percentile(values, 0.99):.3f} ms, mean {mean:.3f} ms")
    ok = result["exactly_once"] == result["requests"] == args.races
    if not ok:
        print("FAIL: not every request resolved exactly once")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
