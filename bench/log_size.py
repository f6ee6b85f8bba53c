"""The session log's size next to what was said and done, for the same headless run.

Each shape is a real `vigil -p … --output-format stream-json` run (a subprocess, a scripted model,
real tools on real files). Every file read has content of its own, except in the shape that reads
20 files again and again (where the log stores each output once and stream-json repeats it).
"Said and done" is measured two ways: that run's stream-json (Claude Code's record of the same
session, whose lines carry ids, usage and costs around the text, the calls and the results), and
the conversation itself as the model is sent it (its messages' JSON: the text, the calls, the
results, nothing around them). Beside the log as written, the same events in the
format before compact lines (each line the event's own JSON, which is what the log held until
then) show what the format saves. Every shape runs --repeat times; sizes are medians with their
spread (they vary only with timestamps and ids).

    .venv/bin/python bench/log_size.py [--repeat 5] [--calls 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tui_app.runtime.log.conversation import rebuild_conversation  # noqa: E402
from tui_app.runtime.log.eventlog import read_events  # noqa: E402

GOAL = 1.1


def small_files(project: Path, count: int) -> list[str]:
    """Short files of about 360 bytes (the size behind the issue's 1.68 MB of stream-json), each
    with its own content."""
    names = []
    for i in range(count):
        name = f"notes_{i:04d}.txt"
        (project / name).write_text("".join(f"entry {i}.{j}: ok\n" for j in range(24)))
        names.append(name)
    return names


def source_files(project: Path, count: int) -> list[str]:
    """Vigil's own modules (what an agent reads most), each copy with a line of its own on top."""
    sources = sorted(p for p in (ROOT / "tui_app").rglob("*.py") if p.stat().st_size > 2000)
    names = []
    for i in range(count):
        name = f"src_{i:04d}.py"
        (project / name).write_bytes(b"# copy %d\n" % i + sources[i % len(sources)].read_bytes())
        names.append(name)
    return names


def reads(names: list[str], calls: int, per_step: int) -> list[dict]:
    steps = []
    for s in range(calls // per_step):
        steps.append({"tool_calls": [{"id": f"r{s}_{i}", "name": "Read",
                                      "input": {"file_path": names[(s * per_step + i) % len(names)]}}
                                     for i in range(per_step)]})
    return steps


def writes(calls: int) -> list[dict]:
    """A Write of a new file, an Edit of it, and a Read of it back, over and over."""
    steps = []
    for s in range(calls // 3):
        body = "".join(f"def handler_{s}_{j}(event):\n    return event.get('value', {j})\n\n" for j in range(30))
        name = f"gen_{s:04d}.py"
        steps.append({"tool_calls": [{"id": f"w{s}", "name": "Write", "input": {"file_path": name, "content": body}}]})
        steps.append({"tool_calls": [{"id": f"e{s}", "name": "Edit", "input": {
            "file_path": name, "old_string": f"def handler_{s}_7(", "new_string": f"def renamed_{s}_7("}}]})
        steps.append({"tool_calls": [{"id": f"v{s}", "name": "Read", "input": {"file_path": name}}]})
    return steps


SHAPES = {
    "Reads of small files, 1 a step": lambda p, n: reads(small_files(p, n), n, 1),
    "Reads of small files, 10 a step": lambda p, n: reads(small_files(p, n), n, 10),
    "Reads of 20 small files, again": lambda p, n: reads(small_files(p, 20), n, 1),
    "Reads of source files, 1 a step": lambda p, n: reads(source_files(p, n), n, 1),
    "Write, Edit, Read of new files": lambda p, n: writes(n),
}


def run_shape(shape: str, calls: int, parent: Path) -> tuple[int, int, int, int]:
    work = Path(tempfile.mkdtemp(dir=parent))
    project = work / "project"
    project.mkdir()
    steps = [*SHAPES[shape](project, calls), {"text": "Done."}]
    script = work / "script.json"
    script.write_text(json.dumps({"steps": steps}))
    home = work / "home"
    env = {**os.environ, "VIGIL_HOME": str(home)}
    out = subprocess.run([sys.executable, "-m", "tui_app", "-p", "go", "--script", str(script), "--output-format",
                          "stream-json", "--permission-mode", "acceptEdits", "--no-claude-settings", "--cwd",
                          str(project)], env=env, capture_output=True, check=True)
    said = len(out.stdout)
    (log,) = (home / "sessions").glob("*/events.jsonl")
    read = read_events(log)
    assert not read.warnings, read.warnings[:3]
    before = sum(len(e.model_dump_json().encode()) + 1 for e in read.events)
    conversation = sum(len(m.model_dump_json().encode()) for m in rebuild_conversation(read.events))
    return log.stat().st_size, before, said, conversation


def spread(values: list[float], fmt: str = "{:,.0f}") -> str:
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    print(f"log size: events.jsonl next to the run's stream-json, {args.calls:,} calls a shape, "
          f"median (min–max) of {args.repeat} runs")
    print(f"{'shape':34} {'stream-json':>12} {'conversation':>13} {'log as written':>24} {'÷ stream-json':>14} "
          f"{'÷ conversation':>15} {'format before':>14} {'÷ conv.':>8}")
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="vigil-log-size-") as tmp:
        for shape in SHAPES:
            runs = [run_shape(shape, args.calls, Path(tmp)) for _ in range(args.repeat)]
            logs, befores, saids, convs = ([r[i] for r in runs] for i in range(4))
            to_said = [log / said for log, _, said, _ in runs]
            to_conv = [log / conv for log, _, _, conv in runs]
            before_conv = statistics.median(b / c for b, c in zip(befores, convs, strict=True))
            print(f"{shape:34} {statistics.median(saids):>12,.0f} {statistics.median(convs):>13,.0f} "
                  f"{spread(logs):>24} {spread(to_said, '{:.2f}'):>14} {spread(to_conv, '{:.2f}'):>15} "
                  f"{statistics.median(befores):>14,.0f} {before_conv:>7.2f}×")
            verdicts.append((shape, statistics.median(to_said), statistics.median(to_conv)))
    for shape, said, conv in verdicts:
        print(f"goal (log ≤ {GOAL}× what was said and done), {shape}: "
              f"{'met' if said <= GOAL else 'NOT met'} against stream-json ({said:.2f}×), "
              f"{'met' if conv <= GOAL else 'NOT met'} against the conversation ({conv:.2f}×)")


if __name__ == "__main__":
    main()
