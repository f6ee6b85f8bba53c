"""A headless run of many Read calls: what one more call costs.

`vigil -p … --output-format stream-json` (a subprocess, the scripted model, the real Read tool on
twenty real files, one call a model step, the log written), with --small and --large calls; the
marginal cost of a call is the difference of the two wall times over the difference of the calls,
so start-up and shutdown cancel out. Each size runs --repeat times, interleaved; medians with their
spread.

    .venv/bin/python bench/headless_reads.py [--repeat 5] [--small 200] [--large 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_MS = 0.15


def make_project(work: Path) -> Path:
    project = work / "project"
    project.mkdir()
    for i in range(20):
        (project / f"f{i:02d}.txt").write_text("".join(f"line {j} of file {i}: some text\n" for j in range(40)))
    return project


def make_script(work: Path, calls: int) -> Path:
    steps = [{"tool_calls": [{"id": f"r{s}", "name": "Read", "input": {"file_path": f"f{s % 20:02d}.txt"}}]}
             for s in range(calls)]
    path = work / f"reads-{calls}.json"
    path.write_text(json.dumps({"steps": [*steps, {"text": "done"}]}))
    return path


CPU: dict[float, float] = {}


def run(project: Path, script: Path, home: Path) -> float:
    """Wall seconds of one run (its CPU seconds, user and system, are kept in CPU under the same key)."""
    began = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "tui_app", "-p", "go", "--script", str(script), "--output-format",
                    "stream-json", "--no-claude-settings", "--cwd", str(project)],
                   env={**os.environ, "VIGIL_HOME": str(home)}, stdout=subprocess.DEVNULL, check=True, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter() - began
    CPU[wall] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--large", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vigil-headless-reads-") as tmp:
        work = Path(tmp)
        project = make_project(work)
        scripts = {n: make_script(work, n) for n in (args.small, args.large)}
        run(project, scripts[args.small], work / "home")  # warm: bytecode and page cache
        times: dict[int, list[float]] = {args.small: [], args.large: []}
        for _ in range(args.repeat):
            for n, script in scripts.items():
                times[n].append(run(project, script, work / "home"))
    small, large = (statistics.median(times[n]) for n in (args.small, args.large))
    marginal = [(b - a) / (args.large - args.small) * 1000 for a in times[args.small] for b in times[args.large]]
    print(f"headless Reads: `vigil -p` with stream-json, one Read a model step, median (min–max) of {args.repeat} runs")
    for n in (args.small, args.large):
        print(f"  {n:>6,} calls: {statistics.median(times[n]):.2f} s ({min(times[n]):.2f}–{max(times[n]):.2f})")
    print(f"  marginal cost of a call: {(large - small) / (args.large - args.small) * 1000:.3f} ms "
          f"(pairs {min(marginal):.3f}–{max(marginal):.3f})")
    cpu_small, cpu_large = (statistics.median(CPU[t] for t in times[n]) for n in (args.small, args.large))
    print(f"  CPU time (user + system) of a call: {(cpu_large - cpu_small) / (args.large - args.small) * 1000:.3f} ms "
          "(what a loaded machine's waits leave out)")
    verdict = "met" if (large - small) / (args.large - args.small) * 1000 <= GOAL_MS else "NOT met"
    print(f"goal (≤ {GOAL_MS} ms a call): {verdict}")


if __name__ == "__main__":
    main()
