"""The replay's timeline on a long recorded session: how long each move takes to show.

A synthetic log of real event models (TURNS turns, each: a prompt, text, CALLS Bash calls with output,
a closing answer) is replayed in the real app (ReplayApp, headless under pilot, 160x48). Timed from
the key's action to the screen showing the new position (`synced`):

  * open at the end (the first screen a user sees)
  * one step back at the end, as shipped (the models folded again, the chat's last lines dropped)
    against its peer: a new screen fed the log up to that position (what a rebuild costs)
  * one step forward; a jump to the middle, to the start, back to the end

and, on its own, the chat given the whole log (a virtual chat: entries are plain objects and only
the screen's lines are rendered) one event at a time and in one batch.

Every figure is the median (min–max) of --rounds rounds (default 5).

    python bench/replay_timeline.py [--turns 100] [--calls 8]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.app import App

from tui_app.app.replay_app import ReplayApp
from tui_app.app.screens.replay import ReplayScreen
from tui_app.runtime import events as ev
from tui_app.runtime.contract import ToolFlags
from widgets.chat import ChatView

SESSION = "bench-replay"
FLAGS = ToolFlags(side_effect_scope="system", risk="high")


def long_log(turns: int, calls: int) -> list[Any]:
    out: list[Any] = [ev.SessionStarted(session_id=SESSION, ts=1.7e9, cwd="/home/dev/proj", provider="anthropic",
                                        model="claude-sonnet-4-5", permission_mode="default")]
    ts = 1.7e9

    def add(cls: Any, turn: str, **fields: Any) -> None:
        nonlocal ts
        ts += 0.05
        out.append(cls(session_id=SESSION, ts=ts, turn_id=turn, **fields))

    for t in range(turns):
        turn = f"t{t}"
        add(ev.TurnStarted, turn, prompt=f"Step {t}: run the checks and fix what fails.")
        add(ev.AssistantText, turn, step=1, index=0, text=f"Running **{calls}** checks for step {t}.")
        ids = [f"c{t}-{i}" for i in range(calls)]
        for i, call_id in enumerate(ids):
            add(ev.ToolCallRequested, turn, call_id=call_id, step=1, index=i, name="Bash",
                input={"command": f"make check-{i}"})
        for i, call_id in enumerate(ids):
            add(ev.ToolCallScheduled, turn, call_id=call_id, batch=0, group=i, groups=[[c] for c in ids])
        for i, call_id in enumerate(ids):
            add(ev.ToolCallStarted, turn, call_id=call_id, tool="Bash", input={"command": f"make check-{i}"},
                target=f"make check-{i}", flags=FLAGS, group=i)
            for chunk in range(2):
                add(ev.ToolCallProgress, turn, call_id=call_id, kind="output", stream="stdout",
                    text=f"check {i}: part {chunk} ok\n" * 5)
            add(ev.ToolCallResult, turn, call_id=call_id, tool="Bash", model_content="ok",
                metrics=ev.CallMetrics(total_ms=120, exec_ms=110, bytes_out=200))
        add(ev.AssistantText, turn, step=2, index=0, text="All checks pass.\n\n- one\n- two\n\n`done`")
        add(ev.ModelStepEnded, turn, step=2, stop_reason="end_turn", usage={"input_tokens": 900, "output_tokens": 40})
        add(ev.TurnEnded, turn, reason="completed", steps=2)
    return [e.model_copy(update={"seq": seq}) for seq, e in enumerate(out, 1)]


async def until_synced(screen: ReplayScreen) -> None:
    while not (screen.is_mounted and screen.synced):
        await asyncio.sleep(0.001)


async def timed_move(screen: ReplayScreen, position: int) -> float:
    start = time.perf_counter()
    screen.go(position)
    await until_synced(screen)
    return time.perf_counter() - start


async def replay_figures(events: list[Any], rounds: int) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {}

    def note(name: str, seconds: float) -> None:
        figures.setdefault(name, []).append(seconds)

    for _ in range(rounds):
        start = time.perf_counter()
        screen = ReplayScreen(SESSION, events)
        app = ReplayApp(screen)
        async with app.run_test(size=(160, 48)) as pilot:
            await until_synced(screen)
            note("open at the end", time.perf_counter() - start)
            end = len(events)
            note("step back one (rewind, as shipped)", await timed_move(screen, end - 1))
            await pilot.pause()
            peer_start = time.perf_counter()
            fresh = ReplayScreen(SESSION, events, position=end - 1)
            await app.push_screen(fresh)
            await until_synced(fresh)
            note("step back one (peer: a new screen fed that far)", time.perf_counter() - peer_start)
            await app.pop_screen()
            await pilot.pause()
            note("step forward one", await timed_move(screen, end))
            note("jump to the middle", await timed_move(screen, end // 2))
            note("jump to the start", await timed_move(screen, 0))
            note("jump back to the end", await timed_move(screen, end))
    return figures


class ChatApp(App[None]):
    def compose(self):  # type: ignore[no-untyped-def]
        yield ChatView(id="chat")


async def chat_figures(events: list[Any]) -> tuple[int, float, float]:
    """The chat given the whole log: one event at a time (each laid out), then in one batch."""
    results = []
    entries = 0
    for together in (False, True):
        app = ChatApp()
        async with app.run_test(size=(100, 40)) as pilot:
            chat = app.query_one(ChatView)
            start = time.perf_counter()
            if together:
                async with chat.mounting_together():
                    for event in events:
                        await chat.apply(event)
            else:
                for event in events:
                    await chat.apply(event)
            await pilot.pause()
            results.append(time.perf_counter() - start)
            entries = len(chat.entries)
    return entries, results[0], results[1]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    events = long_log(args.turns, args.calls)
    print(f"replay of {len(events):,} events ({args.turns} turns, {args.turns * args.calls} calls), 160x48, "
          f"median (min–max) of {args.rounds} rounds")
    figures = await replay_figures(events, args.rounds)
    for name, values in figures.items():
        print(f"  {name:<50} {statistics.median(values) * 1000:8.1f} ms "
              f"({min(values) * 1000:.1f}–{max(values) * 1000:.1f})")
    ours = statistics.median(figures["step back one (rewind, as shipped)"])
    peer = statistics.median(figures["step back one (peer: a new screen fed that far)"])
    print(f"  step back: the peer takes {peer / ours:.1f}x as long as the rewind")
    entries, one_by_one, together = await chat_figures(events)
    print(f"chat: {entries:,} entries, the log applied one event at a time {one_by_one * 1000:.0f} ms, "
          f"in one batch {together * 1000:.0f} ms")
    for name, goal in (("open at the end", 0.3), ("jump to the middle", 0.1)):
        median = statistics.median(figures[name])
        verdict = "met" if median <= goal else "NOT met"
        print(f"goal ({name} ≤ {goal * 1000:.0f} ms): {verdict} ({median * 1000:.0f} ms)")


if __name__ == "__main__":
    asyncio.run(main())
