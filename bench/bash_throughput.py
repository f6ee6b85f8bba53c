"""Bash tool throughput and memory, next to the shell writing the same output to a file.

`head -c 500M /dev/urandom | base64` (about 690 MB of output) runs
  1. through Vigil's Bash tool (whole pipeline, progress events to a null subscriber, the full
     output streamed into an artifact), and
  2. as the same command piped to a file by the shell itself,
in the same run, alternating when repeated. Prints MB/s for both, the ratio, and the process's
RSS before and its peak (VmHWM) during the tool runs, and the CPU time Vigil's own process spent.
Best and median are both shown: on a shared machine the shell's own rate varies a lot.

    .venv/bin/python bench/bash_throughput.py [--size 500M] [--repeat 1]

Goal: >= 200 MB/s, >= 50 % of the shell's rate, RSS growth < 50 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_app.runtime.hooks.runner import NoHooks
from tui_app.runtime.permissions.broker import ApprovalBroker
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.runtime.pipeline import CallEnv, ToolCall, run_call
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.results.artifacts import ArtifactStore
from tui_app.tools.bash.tool import BASH

MB = 1_000_000


def status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


class NullSubscriber:
    """Consumes every event the way a subscriber would, and keeps none."""

    def __init__(self) -> None:
        self.events = 0
        self.progress_bytes = 0

    def __call__(self, event: Any) -> Any:
        self.events += 1
        if event.type == "ToolCallProgress":
            self.progress_bytes += len(event.text)
        return event


async def through_tool(command: str, home: Path) -> tuple[float, int, NullSubscriber, float]:
    registry = ToolRegistry()
    registry.register(BASH)
    sink = NullSubscriber()
    env = CallEnv(session_id="bench", cwd=str(home), registry=registry, policy=ModePolicy(allow={"Bash"}),
                  hooks=NoHooks(), broker=ApprovalBroker(), emit=sink,
                  services={"artifacts": ArtifactStore("bench", home / "artifacts")})
    began, cpu = time.perf_counter(), time.process_time()
    outcome = await run_call(ToolCall("bench", "Bash", {"command": command, "timeout": 600_000}), env)
    elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
    if outcome.type != "ToolCallResult" or not outcome.artifacts:
        raise SystemExit(f"the tool run failed: {outcome.model_content[:500]}")
    path = Path(outcome.artifacts[0].path)
    size = path.stat().st_size
    path.unlink()
    return elapsed, size, sink, cpu


def through_shell(command: str, home: Path) -> tuple[float, int]:
    target = home / "shell.out"
    began = time.perf_counter()
    subprocess.run(["bash", "-c", f"{command} > {target}"], check=True)
    elapsed = time.perf_counter() - began
    size = target.stat().st_size
    target.unlink()
    return elapsed, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="500M", help="bytes of random input (head -c syntax)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    command = f"head -c {args.size} /dev/urandom | base64"
    tool_rates, shell_rates = [], []
    rss_before = status_kb("VmRSS")
    peak_before = status_kb("VmHWM")
    with tempfile.TemporaryDirectory(prefix="vigil-bench-") as tmp:
        home = Path(tmp)
        for _ in range(args.repeat):
            seconds, size = through_shell(command, home)
            shell_rates.append(size / MB / seconds)
            print(f"shell → file : {size / MB:8.1f} MB in {seconds:6.2f} s = {shell_rates[-1]:7.1f} MB/s")
            seconds, size, sink, cpu = asyncio.run(through_tool(command, home))
            tool_rates.append(size / MB / seconds)
            print(f"Bash tool    : {size / MB:8.1f} MB in {seconds:6.2f} s = {tool_rates[-1]:7.1f} MB/s "
                  f"(Vigil's CPU {cpu:.2f} s; {sink.events} events, {sink.progress_bytes / 1000:.0f} KB live text)")
    peak = status_kb("VmHWM")
    for label, pick in (("best", max), ("median", statistics.median)):
        tool, shell = pick(tool_rates), pick(shell_rates)
        print(f"{label} of {args.repeat}: Bash tool {tool:.1f} MB/s, shell {shell:.1f} MB/s, "
              f"ratio {tool / shell * 100:.0f} %")
    print(f"RSS before {rss_before / 1024:.1f} MB, peak {peak / 1024:.1f} MB "
          f"(growth {(peak - max(rss_before, peak_before)) / 1024:.1f} MB over the earlier peak)")
    print(f"cpus: {os.cpu_count()}")


if __name__ == "__main__":
    main()
