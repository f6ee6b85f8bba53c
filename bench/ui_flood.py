"""The whole app under an output flood: key-press → screen-updated latency, flood vs idle.

The real app (VigilApp, headless under pilot, 160x48) runs a real session on its own thread; the
scripted model makes one Bash call that prints 10,000 coloured lines a second for DURATION
seconds (a Python script, in a real process group). Its output streams into the Output tab (the
detail pane follows the running call) and its row in the table updates (size, live time) while a
key is typed into the prompt box every 50 ms. Latency is from sending the key (a Key event through
the driver, as a terminal would) to the end of the first frame composed after the key was
handled. Every frame is rendered to terminal text, which the headless driver would skip.

Idle (the same app, no turn running) and flood are measured in the same run, for the app as
shipped and with each of its two latency measures turned off: `gc.freeze()` after start-up, and
drawing a key's frame at once instead of at the next tick of Textual's 60 Hz screen timer.

As shipped, the live stream of one command stops after 150 KB (the progress events are logged;
the artifact keeps everything), so a 10 s flood would reach the screen for a fraction of a second.
This bench lifts that budget so the whole flood reaches the Output tab: the worst case.

    python bench/ui_flood.py [--duration 10] [--presses 200]
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

LINES_PER_S = 10_000
KEY_EVERY_S = 0.05
FLOOD = """
import sys, time
duration = float(sys.argv[1])
out = sys.stdout
start = time.monotonic()
n = 0
while time.monotonic() - start < duration:
    out.write("".join(f"\\x1b[3{(n + i) % 7 + 1}m[{n + i:07d}]\\x1b[0m compiling module_{(n + i) % 97}.c -O2 -Wall\\n"
                      for i in range(100)))
    out.flush()
    n += 100
    time.sleep(max(0.0, start + n / LINES - time.monotonic()))
print(f"{n} lines", file=sys.stderr)
""".replace("LINES", str(LINES_PER_S))


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


async def run(duration: float, presses: int, variant: str, work: Path) -> dict[str, float]:
    freeze, key_frames = VARIANTS[variant]
    project = work / f"project-{variant.replace(' ', '-')}"
    project.mkdir()
    (project / "flood.py").write_text(FLOOD)
    script = work / f"script-{variant.replace(' ', '-')}.json"
    script.write_text(json.dumps({"steps": [
        {"tool_calls": [{"id": "flood", "name": "Bash",
                         "input": {"command": f"python3 flood.py {duration}", "timeout": 600_000}}]},
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
        shown = output.line_count + output.dropped_lines
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
        "lines on screen k": shown / 1000, "flood ran through": float(still_running),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of flood (default 10)")
    parser.add_argument("--presses", type=int, default=200, help="keys per phase (default 200)")
    args = parser.parse_args()
    install_probes()
    with tempfile.TemporaryDirectory(prefix="vigil-ui-flood-") as tmp:
        os.environ["VIGIL_HOME"] = str(Path(tmp) / "home")
        # the keys must fall inside the flood: it lasts longer than the presses take
        duration = max(args.duration, args.presses * KEY_EVERY_S + 3)
        runs = {name: asyncio.run(run(duration, args.presses, name, Path(tmp))) for name in VARIANTS}
    print(f"ui flood: the whole app, 160x48, a Bash call printing {LINES_PER_S:,} lines/s for {duration:g} s into "
          f"the Output tab; {args.presses} keys typed into the prompt, one every {KEY_EVERY_S * 1000:.0f} ms, "
          "while idle and while flooded")
    names = list(runs)
    print(f"{'':22}" + "".join(f"{n:>16}" for n in names))
    for metric in runs[names[0]]:
        print(f"{metric:22}" + "".join(f"{runs[n][metric]:>16.1f}" for n in names))
    for name, figures in runs.items():
        verdict = "met" if figures["flood p99 ms"] < 50 and figures["p99 flood/idle"] < 3 else "NOT met"
        print(f"goal (p99 under flood < 50 ms and < 3x idle), {name}: {verdict}")
    print("latency = key sent → end of the first frame composed after the key was handled; "
          f"median of idle p50s: {statistics.median(r['idle p50 ms'] for r in runs.values()):.1f} ms")


if __name__ == "__main__":
    main()
