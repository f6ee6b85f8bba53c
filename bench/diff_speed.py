"""Diff speed: Vigil's structured patch next to `git diff --no-index` and `diff -u`, same run.

Files of 10,000 lines, each with 50 scattered edits (replacements, insertions and deletions of
1–3 lines, from a fixed seed):

* real — Python source: the standard library's own modules, concatenated;
* synthetic — lines drawn from a vocabulary of 150, so every line repeats ~65 times, just under
  difflib's "popular line" cut-off (the case where `difflib` takes a fifth of a second and
  unique-line anchoring finds nothing);
* periodic — a block of 7 lines repeated (every shifted copy matches; the worst case for Myers).

Then shapes that are not scattered edits, to show the work budget bounds the worst case: a
rewrite (no line in common), the real file shuffled, and every other line re-indented.

Each tool's time is the median (and min–max) of `--repeat` runs and includes what a caller pays:
Vigil's splitting, diffing and hunk building (git's histogram diff when the walk cannot step over
a big region: shuffled, re-indented, moved lines); the peers' process start, file reads and
output. Vigil's hunks are applied back to the old text to check them. `difflib.unified_diff` is
shown for scale.

Last, the diff view (headless, 160x48) on the real file re-indented (every other line changed, a
10,000-line diff): from `load()` to the first screen painted with its rows highlighted, and to the
whole diff highlighted.

    .venv/bin/python bench/diff_speed.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import os
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_app.runtime.files.diffing import apply_hunks, structured_patch

LINES = 10_000
EDITS = 50


def real_source() -> list[str]:
    lines: list[str] = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        if len(lines) >= LINES:
            break
    return lines[:LINES]


def synthetic(rng: random.Random) -> list[str]:
    vocabulary = [f"    value_{i} = compute({i % 7}, {i % 3})\n" for i in range(150)]
    return [rng.choice(vocabulary) for _ in range(LINES)]


def periodic() -> list[str]:
    block = ["{\n", '  "id": 1,\n', '  "name": "x",\n', '  "tags": [],\n', '  "ok": true\n', "},\n", "\n"]
    return [block[i % len(block)] for i in range(LINES)]


def scatter_edits(lines: list[str], rng: random.Random, new_line: Callable[[int], str]) -> list[str]:
    out = list(lines)
    spots = sorted(rng.sample(range(10, len(lines) - 10), EDITS), reverse=True)
    for n, spot in enumerate(spots):
        kind = rng.choice(("replace", "replace", "insert", "delete"))
        if kind == "replace":
            out[spot:spot + rng.randint(1, 3)] = [new_line(n * 10 + k) for k in range(rng.randint(1, 3))]
        elif kind == "insert":
            out[spot:spot] = [new_line(n * 10 + k) for k in range(rng.randint(1, 2))]
        else:
            del out[spot:spot + rng.randint(1, 2)]
    return out


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    return timed_ms(fn, repeat)[0]


def timed_ms(fn: Callable[[], object], repeat: int) -> tuple[float, float, float]:
    """Median, min and max of `repeat` runs (after a warm-up run: imports, page cache)."""
    fn()
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times), min(times), max(times)


def run_process(argv: list[str]) -> None:
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def measure(name: str, old_lines: list[str], new_lines: list[str], repeat: int, tmp: Path) -> float | None:
    old, new = "".join(old_lines), "".join(new_lines)
    old_path, new_path = tmp / f"{name}.old", tmp / f"{name}.new"
    old_path.write_text(old, encoding="utf-8")
    new_path.write_text(new, encoding="utf-8")
    patch = structured_patch(old, new)
    assert apply_hunks(old, patch.hunks) == new, "Vigil's hunks do not rebuild the new text"
    ours, low, high = timed_ms(lambda: structured_patch(old, new), repeat)
    row = [f"{name:<10}", f"vigil {ours:7.1f} ms ({low:.1f}–{high:.1f})"]
    peers = {}
    if shutil.which("git"):
        peers["git diff"] = timed_ms(lambda: run_process(
            ["git", "diff", "--no-index", "--no-color", str(old_path), str(new_path)]), repeat)
    if shutil.which("diff"):
        peers["diff -u"] = timed_ms(lambda: run_process(["diff", "-u", str(old_path), str(new_path)]), repeat)
    for peer, (ms, low, high) in peers.items():
        row.append(f"{peer} {ms:6.1f} ms ({low:.1f}–{high:.1f}; vigil/{peer.split()[0]} {ours / ms:4.2f}×)")
    difflib_ms = median_ms(lambda: list(difflib.unified_diff(old_lines, new_lines)), max(3, repeat // 5))
    row.append(f"difflib {difflib_ms:6.1f} ms")
    row.append(f"[{len(patch.hunks)} hunks, +{patch.added} -{patch.removed}]")
    print("  ".join(row))
    ratio = ours / peers["git diff"][0] if "git diff" in peers else None
    return ratio


async def view_highlight(old: str, new: str) -> tuple[float, float, float]:
    """Seconds from `load()` to the first screen painted highlighted; from the start of the frame
    that paints the first rows to its end (what highlighting them costs); from `load()` to the
    whole diff highlighted. The real DiffView, headless."""
    from textual.app import App

    from tui_app.runtime.display import FileDiffDisplay
    from widgets.diff.view import DiffView

    marks: dict[str, float] = {}
    plain_render_line = DiffView.render_line

    def render_line(self: DiffView, y: int):  # type: ignore[no-untyped-def]
        began = time.perf_counter()
        strip = plain_render_line(self, y)
        if self.model is not None and y == 1 and "rows" not in marks:
            marks["rows"] = began  # the frame that paints the first rows starts
        highlighted = self._new_hl is not None or self._window_hl["new"] or self._window_hl["old"]
        if y == self.scrollable_content_region.height - 1 and highlighted and "first" not in marks:
            marks["first"] = time.perf_counter()
        return strip

    class ViewApp(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield DiffView(id="diff")

    app = ViewApp()
    DiffView.render_line = render_line  # type: ignore[method-assign]
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            view = app.query_one(DiffView)
            display = FileDiffDisplay(path="/src/module.py", hunks=[], old_text=old, new_text=new)
            began = time.perf_counter()
            view.load(display)  # as the app does: a big diff is built in a thread
            while "first" not in marks or not view.is_ready:
                await asyncio.sleep(0.002)
            whole = time.perf_counter()
    finally:
        DiffView.render_line = plain_render_line  # type: ignore[method-assign]
    return marks["first"] - began, marks["first"] - marks["rows"], whole - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    rng = random.Random(20240601)
    real = real_source()
    cases = {
        "real": (real, scatter_edits(real, rng, lambda n: f"    changed_{n} = True  # edited\n")),
    }
    syn = synthetic(rng)
    vocab_rng = random.Random(7)
    cases["synthetic"] = (syn, scatter_edits(syn, rng, lambda n: vocab_rng.choice(syn)))
    per = periodic()
    cases["periodic"] = (per, scatter_edits(per, rng, lambda n: f'  "extra": {n},\n'))
    shuffled = list(real)
    random.Random(3).shuffle(shuffled)
    shapes = {
        "rewrite": (real, [f"new line {i}\n" for i in range(LINES)]),
        "shuffled": (real, shuffled),
        "reindent": (real, ["    " + line if i % 2 else line for i, line in enumerate(real)]),
    }
    print(f"{LINES} lines, {EDITS} scattered edits, median (min–max) of {args.repeat} runs, "
          f"cpu count {os.cpu_count()}")
    ratios = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (old_lines, new_lines) in cases.items():
            ratios[name] = measure(name, old_lines, new_lines, args.repeat, Path(tmp))
        print("other shapes:")
        for name, (old_lines, new_lines) in shapes.items():
            ratios[name] = measure(name, old_lines, new_lines, max(5, args.repeat // 3), Path(tmp))
    worst = max((r for r in ratios.values() if r is not None), default=None)
    if worst is not None:
        print(f"goal (≤ 1.5× git diff on every shape): {'met' if worst <= 1.5 else 'NOT met'} (worst {worst:.2f}×)")
    old, new = "".join(real), "".join(shapes["reindent"][1])
    runs = [asyncio.run(view_highlight(old, new)) for _ in range(5)]
    first, frame, whole = ([r[i] * 1000 for r in runs] for i in range(3))

    def spread(values: list[float]) -> str:
        return f"{statistics.median(values):.1f} ms ({min(values):.1f}–{max(values):.1f})"

    print("diff view, a 10,000-line diff (re-indented), median (min–max) of 5:")
    print(f"  load() → first screen painted, highlighted   {spread(first)}  (the diff built in a thread first)")
    print(f"  the frame that paints it, highlighting incl.  {spread(frame)}")
    print(f"  load() → whole diff highlighted             {spread(whole)}")
    print(f"goal (first screen highlighted ≤ 50 ms, once its rows are there): "
          f"{'met' if statistics.median(frame) <= 50 else 'NOT met'}")


if __name__ == "__main__":
    main()
