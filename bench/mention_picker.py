"""The `@` picker on a project of 100,000 files: listing the files and matching a query.

A tree of `--files` files (100 per directory, names like a source tree) plus a `build/` tree of
20,000 more that .gitignore hides, so the listing has ignore work to do.

* listing — `rg --files` (the bundled ripgrep, Vigil's way) against the Python walk that stands
  in without rg (the same gitignore rules), same run, interleaved;
* matching — PathIndex.search (regular expressions over one joined string, tiers) against
  Textual's own fuzzy Matcher scoring every path (what a palette does), for a few queries: one
  letter, a file name, a fuzzy abbreviation, a miss. The Matcher runs on a tenth of the paths
  and is scaled up (it is linear), or the bench would take minutes.

Each figure is the median of `--repeat` runs (≥5) with its spread (min–max).

    .venv/bin/python bench/mention_picker.py [--files 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_app.app.prompt.path_matcher import PathIndex
from tui_app.tools.project_files import list_project_files, with_directories

WORDS = ("core", "util", "models", "views", "handlers", "api", "auth", "db", "cache", "tests", "widgets", "io")


def make_tree(root: Path, files: int) -> None:
    (root / ".gitignore").write_text("build/\n*.pyc\n")
    per_dir = 100
    for d in range(files // per_dir):
        directory = root / "src" / WORDS[d % len(WORDS)] / f"pkg{d:04d}"
        directory.mkdir(parents=True, exist_ok=True)
        for f in range(per_dir):
            (directory / f"{WORDS[(d + f) % len(WORDS)]}_{f:03d}.py").touch()
    for d in range(200):
        directory = root / "build" / f"out{d:03d}"
        directory.mkdir(parents=True, exist_ok=True)
        for f in range(100):
            (directory / f"gen_{f:03d}.py").touch()


def timed(fn: Callable[[], object], repeat: int) -> tuple[list[float], object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - started) * 1000)
    return times, result


def line(label: str, times: list[float], extra: str = "") -> str:
    return (f"  {label:<44} median {statistics.median(times):8.1f} ms   spread {min(times):7.1f}–{max(times):7.1f}"
            f"{extra}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    repeat = max(5, args.repeat)
    with tempfile.TemporaryDirectory(prefix="vigil-bench-mention-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        make_tree(root, args.files)
        print(f"tree: {args.files:,} files + 20,000 ignored, made in {time.perf_counter() - started:.1f} s")

        rg_times: list[float] = []
        walk_times: list[float] = []
        listed = walked = None
        for _ in range(repeat):  # interleaved: the page cache and the machine's load hit both alike
            t, listed = timed(lambda: list_project_files(str(root)), 1)
            rg_times += t
            t, walked = timed(lambda: list_project_files(str(root), rg=""), 1)
            walk_times += t
        assert listed is not None and walked is not None
        assert listed.paths == walked.paths, "both listings agree"
        print(f"listing ({len(listed.paths):,} files; build/ left out: "
              f"{not any(p.startswith('build/') for p in listed.paths)})")
        print(line("rg --files (bundled ripgrep)", rg_times))
        print(line("Python walk (the fallback)", walk_times,
                   f"   rg is {statistics.median(walk_times) / statistics.median(rg_times):.1f}× faster"))

        paths = with_directories(listed.paths)
        t, index = timed(lambda: PathIndex(paths), repeat)
        print(f"index of {len(paths):,} paths (files and directories)")
        print(line("PathIndex(paths)", t))

        from textual.fuzzy import Matcher

        sample = paths[:: 10]
        print("matching (top 50)")
        for query in ("u", "handlers_042", "tsmd", "no_such_file_zz"):
            ours, found = timed(lambda q=query: index.search(q), repeat)  # type: ignore[union-attr]

            def textual_scan(q: str = query) -> int:
                matcher = Matcher(q)
                return sum(1 for p in sample if matcher.match(p) > 0)

            theirs, _ = timed(textual_scan, repeat)
            theirs = [x * 10 for x in theirs]  # a tenth of the paths, scaled up
            ratio = statistics.median(theirs) / max(statistics.median(ours), 1e-6)
            shown = found[0].path if found else "—"  # type: ignore[index]
            print(line(f"{query!r} (PathIndex.search)", ours, f"   first: {shown}"))
            print(line(f"{query!r} (textual.fuzzy.Matcher, scaled)", theirs, f"   PathIndex is {ratio:.0f}× faster"))
        print(f"cpu count {os.cpu_count()}; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
