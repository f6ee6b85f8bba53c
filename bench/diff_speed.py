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

Each tool's time is the median of `--repeat` runs and includes what a caller pays: Vigil's
splitting, diffing and hunk building; the peers' process start, file reads and output. Vigil's
hunks are applied back to the old text to check them. `difflib.unified_diff` is shown for scale.

    .venv/bin/python bench/diff_speed.py [--repeat 15]
"""

from __future__ import annotations

import argparse
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
    fn()  # warm up (imports, page cache)
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def run_process(argv: list[str]) -> None:
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def measure(name: str, old_lines: list[str], new_lines: list[str], repeat: int, tmp: Path) -> None:
    old, new = "".join(old_lines), "".join(new_lines)
    old_path, new_path = tmp / f"{name}.old", tmp / f"{name}.new"
    old_path.write_text(old, encoding="utf-8")
    new_path.write_text(new, encoding="utf-8")
    patch = structured_patch(old, new)
    assert apply_hunks(old, patch.hunks) == new, "Vigil's hunks do not rebuild the new text"
    ours = median_ms(lambda: structured_patch(old, new), repeat)
    row = [f"{name:<10}", f"vigil {ours:7.1f} ms"]
    peers = {}
    if shutil.which("git"):
        peers["git diff"] = median_ms(lambda: run_process(
            ["git", "diff", "--no-index", "--no-color", str(old_path), str(new_path)]), repeat)
    if shutil.which("diff"):
        peers["diff -u"] = median_ms(lambda: run_process(["diff", "-u", str(old_path), str(new_path)]), repeat)
    for peer, ms in peers.items():
        row.append(f"{peer} {ms:6.1f} ms (vigil/{peer.split()[0]} {ours / ms:4.2f}×)")
    difflib_ms = median_ms(lambda: list(difflib.unified_diff(old_lines, new_lines)), max(3, repeat // 5))
    row.append(f"difflib {difflib_ms:6.1f} ms")
    row.append(f"[{len(patch.hunks)} hunks, +{patch.added} -{patch.removed}]")
    print("  ".join(row))


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
    print(f"{LINES} lines, {EDITS} scattered edits, median of {args.repeat} runs, cpu count {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (old_lines, new_lines) in cases.items():
            measure(name, old_lines, new_lines, args.repeat, Path(tmp))
        print("other shapes (no target; the work budget bounds them):")
        for name, (old_lines, new_lines) in shapes.items():
            measure(name, old_lines, new_lines, max(3, args.repeat // 3), Path(tmp))


if __name__ == "__main__":
    main()
