"""The whole app under an output flood: key-press → screen-updated latency, flood vs idle.

The real app (VigilApp, headless under pilot, 160x48) runs a real session on its own thread; the
scripted model makes one Bash call that prints RATE coloured lines a second until the keys of the
flooded phase have all been typed (a Python script, in a real process group, paced by the clock:
a variant whose process falls behind gets its lines faster, never fewer, so every variant gets the
same flood for as long as it types). Its
output streams into the Output tab (the detail pane follows the running call) and its row in the
table updates (size, live time) while a key is typed into the prompt box every 50 ms. Latency is
from sending the key (a Key event through the driver, as a terminal would) to the end of the
first frame composed after the key was handled. Every frame is rendered to terminal text, which
the headless driver would skip.

Idle (the same app, no turn running) and flood are measured in the same run, for the app as
shipped and with each of its two latency measures turned off: `gc.freeze()` after start-up, and
drawing a key's frame at once instead of at the next tick of Textual's 60 Hz screen timer.

As shipped, the live stream of one command stops after 150 KB (the progress events are logged;
the artifact keeps everything), so a 10 s flood would reach the screen for a fraction of a second.
This bench lifts that budget so the whole flood reaches the Output tab: the worst case.

Each variant runs --repeat times at each rate (10,000 and 20,000 lines a second by default);
figures are medians with their spread.

    python bench/ui_flood.py [--presses 200] [--rates 10000,20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual import events
from textual.screen import Screen

import tui_app.tools.bash.output as bash_output
from tui_app.app.vigil_app import VigilApp
from tui_app.assemble import SessionOptions, build_session
from tui_app.tools.bash.live_output import LiveOutput
from widgets.output_view import OutputView
from widgets.prompt_input import PromptInput

KEY_EVERY_S = 0.05
FLOOD = """
import os, sys, time
rate, stop = int(sys.argv[1]), sys.argv[2]
cap = rate * 300
out = sys.stdout
start = time.monotonic()
n = 0
while n < cap and not (n % (rate // 10 or 1) == 0 and os.path.exists(stop)):
    out.write("".join(f"\\x1b[3{(n + i) % 7 + 1}m[{n + i:07d}]\\x1b[0m compiling module_{(n + i) % 97}.c -O2 -Wall\\n"
                      for i in range(100)))
    out.flush()
    n += 100
    time.sleep(max(0.0, start + n / rate - time.monotonic()))
print(f"{n} lines in {time.monotonic() - start:.1f} s", file=sys.stderr)
"""


class WholeFloodLive(LiveOutput):
    """The live stream without its 150 KB log budget (see the module docstring)."""

    def __init__(self, sink: Any, *, budget: int, **options: Any) -> None:
        super().__init__(sink, budget=10**12, **options)


@dataclass
class Probe:
    frames: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    key_sent: float | None = None
    key_handled: bool = False


PROBE = Probe()


def install_probes() -> None:
    compose = Screen._compositor_refresh

    def timed(self: Screen) -> None:
        start = time.perf_counter()
        compose(self)
        end = time.perf_counter()
        PROBE.frames.append(end - start)
        if PROBE.key_sent is not None and PROBE.key_handled:
            PROBE.latencies.append(end - PROBE.key_sent)
            PROBE.key_sent = None
            PROBE.key_handled = False

    Screen._compositor_refresh = timed  # type: ignore[method-assign]
    on_key = PromptInput._on_key

    async def handled(self: PromptInput, event: events.Key) -> None:
        await on_key(self, event)
        PROBE.key_handled = True

    PromptInput._on_key = handled  # type: ignore[method-assign]
    bash_output.LiveOutput = WholeFloodLive  # type: ignore[misc]


class BenchApp(VigilApp):
    def _display(self, screen: Screen, renderable: Any) -> None:
        # the headless driver skips turning frames into terminal text; a real terminal does not
        if renderable is not None and hasattr(renderable, "render_segments"):
            renderable.render_segments(self.console)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else float("nan")


async def press_keys(app: VigilApp, count: int) -> list[float]:
    """`count` keys into the prompt, one every KEY_EVERY_S; returns their latencies (s)."""
    PROBE.latencies.clear()
    for i in range(count):
        PROBE.key_sent = time.perf_counter()
        PROBE.key_handled = False
        key = events.Key("x", "x") if i % 2 == 0 else events.Key("backspace", None)
        key.set_sender(app)
        app._driver.send_message(key)  # type: ignore[union-attr]
        await asyncio.sleep(KEY_EVERY_S)
    return list(PROBE.latencies)


VARIANTS = {"as shipped": (True, True), "no gc.freeze": (False, True), "frame on tick": (True, False)}


async def run(presses: int, variant: str, work: Path, rate: int) -> dict[str, float]:
    freeze, key_frames = VARIANTS[variant]
    work = Path(tempfile.mkdtemp(dir=work))
    project = work / "project"
    project.mkdir()
    (project / "flood.py").write_text(FLOOD)
    script = work / "script.json"
    script.write_text(json.dumps({"steps": [
        {"tool_calls": [{"id": "flood", "name": "Bash",
                         "input": {"command": f"python3 flood.py {rate} {work / 'stop'}", "timeout": 600_000}}]},
        {"text": "Done."}]}))
    session = build_session(SessionOptions(cwd=str(project), script=str(script), interactive=True,
                                           permission_mode="bypassPermissions"))
    app = BenchApp(session, freeze_gc=freeze)
    app.draw_keys_at_once = key_frames
    async with app.run_test(size=(160, 48)) as pilot:
        while not app.ready:
            await pilot.pause(0.05)
        await pilot.pause(0.5)
        app.main.prompt.focus()
        PROBE.frames.clear()
        idle = await press_keys(app, presses)
        idle_frames = list(PROBE.frames)
        assert app.controls is not None and app.controls.submit("flood")
        output = app.main.detail.query_one("#detail-output", OutputView)
        while app.main.table.rows.get("flood") is None or output.line_count < 1000:
            await pilot.pause(0.02)
        PROBE.frames.clear()
        batches0, wall0, cpu0 = app.batches, time.perf_counter(), time.process_time()
        flood = await press_keys(app, presses)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        flood_frames = list(PROBE.frames)
        still_running = app.main.table.rows.get("flood").state == "running"  # type: ignore[union-attr]
        shown = output.line_count + output.dropped_lines  # streamed so far (the result's card replaces it)
        (work / "stop").write_text("")  # the keys are typed: the flood ends
        batches = app.batches - batches0
        while session.busy:
            await pilot.pause(0.1)
    return {
        "idle p50 ms": pct(idle, 0.5), "idle p99 ms": pct(idle, 0.99),
        "flood p50 ms": pct(flood, 0.5), "flood p99 ms": pct(flood, 0.99), "flood max ms": pct(flood, 1.0),
        "p99 flood/idle": pct(flood, 0.99) / pct(idle, 0.99),
        "keys measured": float(min(len(idle), len(flood))),
        "frame p99 ms idle": pct(idle_frames, 0.99), "frame p99 ms flood": pct(flood_frames, 0.99),
        "fps flood": len(flood_frames) / wall, "UI batches/s": batches / wall, "cpu % flood": 100 * cpu / wall,
        "lines streamed to view k": shown / 1000, "flood ran through": float(still_running),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presses", type=int, default=200, help="keys per phase (default 200)")
    parser.add_argument("--rates", default="10000,20000", help="lines a second, comma separated")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each variant at each rate")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="which variants, comma separated")
    args = parser.parse_args()
    install_probes()
    names = [n for n in args.variants.split(",") if n in VARIANTS]
    for rate in (int(r) for r in args.rates.split(",")):
        with tempfile.TemporaryDirectory(prefix="vigil-ui-flood-") as tmp:
            os.environ["VIGIL_HOME"] = str(Path(tmp) / "home")
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
            for _ in range(args.repeat):
                for name in names:  # interleaved: a slow spell of the machine hits every variant
                    runs[name].append(asyncio.run(run(args.presses, name, Path(tmp), rate)))
        print(f"\nui flood: the whole app, 160x48, a Bash call printing {rate:,} lines/s into the Output tab for as "
              f"long as the keys take; {args.presses} keys typed into the prompt, one every "
              f"{KEY_EVERY_S * 1000:.0f} ms, idle and flooded; median (min–max) of {args.repeat} runs")
        print(f"{'':24}" + "".join(f"{n:>24}" for n in names))
        for metric in runs[names[0]][0]:
            cells = []
            for name in names:
                values = [r[metric] for r in runs[name]]
                cells.append(f"{statistics.median(values):.1f} ({min(values):.1f}–{max(values):.1f})")
            print(f"{metric:24}" + "".join(f"{c:>24}" for c in cells))
        for name in names:
            p99 = statistics.median(r["flood p99 ms"] for r in runs[name])
            ratio = statistics.median(r["p99 flood/idle"] for r in runs[name])
            verdict = "met" if p99 < 30 and ratio < 3 else "NOT met"
            print(f"goal (p99 under flood < 30 ms and < 3x idle) at {rate:,} lines/s, {name}: {verdict} "
                  f"({p99:.1f} ms, {ratio:.1f}x)")


if __name__ == "__main__":
    main()
