"""Flood benchmark of the tool table and the output view, alone (no runtime, no app wiring).

For DURATION seconds it writes 10,000 lines/s into the output view (100-line chunks every 10 ms,
with ANSI colours) and makes 200 row updates/s in a 1,000-row tool table, while a key is pressed
(via pilot) every 100 ms in the table. It reports, next to an idle run of the same screen:

* key → repaint latency (from the key press to the end of the first frame drawn after the key
  was handled), p50 / p99 / max;
* frame time (compositing and rendering to terminal text, which the headless driver would skip:
  this bench renders every frame to ANSI and drops it), p50 / p99, and frames per second;
* event-loop stalls: how late a 5 ms ticker wakes up, p99 / max;
* CPU (process time / wall time) and RSS growth.

The peer run puts Textual's DataTable (update_cell) and Log (write) through the same flood, in the
same process, and the last column prints our figures as ratios against it. Each flood runs twice:
as is, and with `gc.freeze()` after start-up (the long-lived objects of Textual and the app moved
out of the collector's way); full collections of a big heap are what the worst stalls are made of.

    python bench/widget_flood.py [--duration 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual import events
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Log

from tui_app.runtime.contract import ToolFlags
from tui_app.runtime.display import FileDiffDisplay
from tui_app.runtime.events import (
    ToolCallProgress,
    ToolCallRequested,
    ToolCallResult,
    ToolCallStarted,
)
from widgets.diff.view import DiffView
from widgets.output_view import OutputView
from widgets.tool_table import ToolTable

ROWS = 1000
LINES_PER_S = 10_000
ROW_UPDATES_PER_S = 200
TICK_S = 0.01
KEY_EVERY_S = 0.1
FLAGS = ToolFlags()


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Probe:
    """Timestamps collected while the app runs."""

    frames: list[float] = field(default_factory=list)
    frame_ends: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    lateness: list[float] = field(default_factory=list)
    key_sent: float | None = None
    key_handled: bool = False


PROBE = Probe()


def _install_frame_probe() -> None:
    original = Screen._compositor_refresh

    def timed(self: Screen) -> None:
        start = time.perf_counter()
        original(self)
        end = time.perf_counter()
        PROBE.frames.append(end - start)
        PROBE.frame_ends.append(end)
        if PROBE.key_sent is not None and PROBE.key_handled:
            PROBE.latencies.append(end - PROBE.key_sent)
            PROBE.key_sent = None
            PROBE.key_handled = False

    Screen._compositor_refresh = timed  # type: ignore[method-assign]


class ProbedToolTable(ToolTable):
    def action_cursor(self, delta: int) -> None:
        super().action_cursor(delta)
        PROBE.key_handled = True


class ProbedDataTable(DataTable):
    def action_cursor_down(self) -> None:
        super().action_cursor_down()
        PROBE.key_handled = True


class FloodApp(App[None]):
    CSS = "Horizontal > * { width: 1fr; height: 1fr; }"

    def __init__(self, peer: bool) -> None:
        super().__init__()
        self.peer = peer

    def compose(self) -> ComposeResult:
        with Horizontal():
            if self.peer:
                yield ProbedDataTable(cursor_type="row")
                yield Log(max_lines=50_000)
            else:
                yield ProbedToolTable(clock=time.time)
                yield OutputView(max_lines=50_000)

    def _display(self, screen: Screen, renderable: Any) -> None:
        # the headless driver skips turning frames into terminal text; a real terminal does not
        if renderable is not None and hasattr(renderable, "render_segments"):
            renderable.render_segments(self.console)


def prefill(app: FloodApp) -> None:
    if app.peer:
        table = app.query_one(DataTable)
        for name in ("#", "tool", "target", "state", "group", "time", "size"):
            table.add_column(name, key=name)
        for i in range(ROWS):
            table.add_row(str(i + 1), "Bash", f"make target-{i}", "running", "g1", "", "0 B", key=f"c{i}")
        table.focus()
        return
    table = app.query_one(ToolTable)
    events: list[Any] = []
    for i in range(ROWS):
        data = {"command": f"make target-{i}"}
        events.append(ToolCallRequested(call_id=f"c{i}", step=1, index=i, name="Bash", input=data))
        events.append(ToolCallStarted(call_id=f"c{i}", tool="Bash", input=data, target=data["command"], flags=FLAGS,
                                      ts=time.time()))
    table.apply_many(events)
    table.focus()


def colour_chunk(start: int, count: int) -> str:
    return "".join(f"\x1b[3{i % 7 + 1}m[{start + i:07d}]\x1b[0m compiling module_{i % 97}.c -O2 -Wall\n"
                   for i in range(count))


async def feed(app: FloodApp, duration: float) -> int:
    rng = random.Random(7)
    lines_per_tick = int(LINES_PER_S * TICK_S)
    updates_per_tick = max(1, int(ROW_UPDATES_PER_S * TICK_S))
    written = 0
    updates = 0
    deadline = time.perf_counter() + duration
    next_tick = time.perf_counter()
    while time.perf_counter() < deadline:
        chunk = colour_chunk(written, lines_per_tick)
        if app.peer:
            app.query_one(Log).write(chunk)
            table = app.query_one(DataTable)
            for _ in range(updates_per_tick):
                row = f"c{rng.randrange(ROWS)}"
                table.update_cell(row, "size", f"{rng.randrange(10**6)} B")
                table.update_cell(row, "time", f"{rng.random() * 10:.1f}s")
        else:
            app.query_one(OutputView).write(chunk)
            table = app.query_one(ToolTable)
            for _ in range(updates_per_tick):
                call_id = f"c{rng.randrange(ROWS)}"
                if rng.random() < 0.05:
                    table.apply(ToolCallResult(call_id=call_id, tool="Bash", model_content="ok",
                                               original_bytes=rng.randrange(10**6)))
                else:
                    table.apply(ToolCallProgress(call_id=call_id, kind="output", stream="stdout", text="x" * 80))
        written += lines_per_tick
        updates += updates_per_tick
        next_tick += TICK_S
        await asyncio.sleep(max(0.0, next_tick - time.perf_counter()))
    return written


async def ticker(stop: asyncio.Event) -> None:
    while not stop.is_set():
        before = time.perf_counter()
        await asyncio.sleep(0.005)
        PROBE.lateness.append(time.perf_counter() - before - 0.005)


async def presser(app: App[Any], duration: float) -> None:
    """Keys go in the way `pilot.press` sends them (a Key event through the driver), without
    pilot's wait for the app to be idle: under a flood it never is."""
    deadline = time.perf_counter() + duration
    while time.perf_counter() < deadline:
        PROBE.key_sent = time.perf_counter()
        PROBE.key_handled = False
        key = events.Key("down", None)
        key.set_sender(app)
        app._driver.send_message(key)
        await asyncio.sleep(KEY_EVERY_S)


async def run(peer: bool, flood: bool, duration: float, freeze: bool = False) -> dict[str, float]:
    global PROBE
    PROBE = Probe()
    app = FloodApp(peer)
    async with app.run_test(size=(160, 48)) as pilot:
        prefill(app)
        await pilot.pause(0.3)
        if freeze:
            gc.collect()
            gc.freeze()
        PROBE.frames.clear()
        PROBE.frame_ends.clear()
        rss0 = rss_mb()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        stop = asyncio.Event()
        tick_task = asyncio.create_task(ticker(stop))
        feed_task = asyncio.create_task(feed(app, duration)) if flood else None
        await presser(app, duration)
        lines = await feed_task if feed_task else 0
        stop.set()
        await tick_task
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        rss = rss_mb() - rss0
    gc.unfreeze()
    frames_ms = [f * 1000 for f in PROBE.frames]
    return {
        "key p50 ms": pct(PROBE.latencies, 0.5) * 1000,
        "key p99 ms": pct(PROBE.latencies, 0.99) * 1000,
        "key max ms": max(PROBE.latencies, default=float("nan")) * 1000,
        "keys measured": len(PROBE.latencies),
        "frame p50 ms": pct(frames_ms, 0.5),
        "frame p99 ms": pct(frames_ms, 0.99),
        "fps": len(PROBE.frames) / wall,
        "stall p99 ms": pct(PROBE.lateness, 0.99) * 1000,
        "stall max ms": max(PROBE.lateness, default=0.0) * 1000,
        "cpu %": 100 * cpu / wall,
        "rss growth MB": rss,
        "lines/s written": lines / wall,
    }


class DiffApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ProbedDiffView()


class ProbedDiffView(DiffView):
    def action_page_down(self) -> None:
        super().action_page_down()
        PROBE.key_handled = True


def big_diff(lines: int = 10_000) -> FileDiffDisplay:
    old = [f"def handler_{i}(request):  # route {i}" if i % 10 == 0 else f"    value_{i} = compute({i}, {i % 7})"
           for i in range(lines)]
    new = [line.replace("compute(", "compute_fast(") if i % 4 == 1 else line for i, line in enumerate(old)]
    return FileDiffDisplay(path="service/routes.py", old_text="\n".join(old) + "\n", new_text="\n".join(new) + "\n")


async def run_diff(split: bool, keys: int = 60) -> dict[str, float]:
    """A 10,000-line file with every fourth line changed (one 12,500-row hunk): load (in the
    worker), then page down through it."""
    global PROBE
    PROBE = Probe()
    app = DiffApp()
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.query_one(DiffView)
        view.split = split
        view.focus()
        start = time.perf_counter()
        view.load(big_diff())
        while view.model is None:
            await asyncio.sleep(0.005)
        shown = time.perf_counter() - start
        while not view.is_ready:
            await asyncio.sleep(0.005)
        ready = time.perf_counter() - start
        await pilot.pause()
        PROBE.frames.clear()
        for _ in range(keys):
            PROBE.key_sent = time.perf_counter()
            PROBE.key_handled = False
            key = events.Key("pagedown", None)
            key.set_sender(app)
            app._driver.send_message(key)
            await asyncio.sleep(0.05)
        rows = view.row_count
    return {"rows": rows, "shown ms": shown * 1000, "highlighted ms": ready * 1000,
            "key p50 ms": pct(PROBE.latencies, 0.5) * 1000,
            "key max ms": max(PROBE.latencies, default=float("nan")) * 1000,
            "frame p99 ms": pct([f * 1000 for f in PROBE.frames], 0.99)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=5.0)
    args = parser.parse_args()
    _install_frame_probe()
    d = args.duration
    runs = {
        "ours idle": asyncio.run(run(peer=False, flood=False, duration=d)),
        "ours flood": asyncio.run(run(peer=False, flood=True, duration=d)),
        "peer flood": asyncio.run(run(peer=True, flood=True, duration=d)),
        "ours fl+frz": asyncio.run(run(peer=False, flood=True, duration=d, freeze=True)),
        "peer fl+frz": asyncio.run(run(peer=True, flood=True, duration=d, freeze=True)),
    }
    names = list(runs)
    print(f"widget flood: {LINES_PER_S:,} lines/s into the output view, {ROW_UPDATES_PER_S} row updates/s "
          f"in a {ROWS:,}-row table, a key every {KEY_EVERY_S * 1000:.0f} ms, {d:g} s per run, 160x48")
    print("peer = Textual DataTable (update_cell) + Log (write), same flood; frz = gc.freeze() after start-up")
    print(f"{'':16}" + "".join(f"{n:>12}" for n in names) + f"{'ratio':>8}{'ratio frz':>10}")
    for metric in runs["ours idle"]:
        values = [runs[n][metric] for n in names]
        ratios = "".join(f"{_ratio(runs[a][metric], runs[b][metric]):>{w}}"
                         for a, b, w in (("ours flood", "peer flood", 8), ("ours fl+frz", "peer fl+frz", 10)))
        print(f"{metric:16}" + "".join(f"{v:>12.1f}" for v in values) + ratios)
    print("ratio = ours / peer in the same run (below 1 is better for times, CPU and stalls; above 1 for fps)")
    print()
    for split in (False, True):
        figures = asyncio.run(run_diff(split))
        print(f"diff view, 10,000-line file, every 4th line changed, {'side by side' if split else 'unified'}: "
              + ", ".join(f"{k} {v:.1f}" for k, v in figures.items()) + " (page down every 50 ms)")


def _ratio(ours: float, peer: float) -> str:
    if not peer or math.isnan(peer) or math.isnan(ours):
        return ""
    return f"{ours / peer:.2f}"


if __name__ == "__main__":
    main()
