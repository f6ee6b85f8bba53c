"""Opening a 500 MB log in the artifact viewer, next to `wc -l` and `grep -c` on the same file.

Measures, on one generated log (numbered lines of varied length, 10 bytes to 14 KB, most of them
short; a rare string near the end), in the same run:
  * time to first screen: the index opened and the first screen of lines decoded (library), and
    the Textual viewer headless, from the app's start (the viewer opens the file when it is
    mounted) to the first screen's rows painted with the file's first lines;
  * the full line index (background thread) in MB/s, beside `wc -l`;
  * a rare-string search over the whole file in MB/s (count, and find of a needle near the end),
    beside `grep -c`.
The file is read once first so every contender sees a warm page cache.

Every figure is the median (and min–max) of --repeat runs.

    .venv/bin/python bench/artifact_browse.py [--size-mb 500] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from widgets.viewer.line_index import LineIndex
from widgets.viewer.line_search import Query, count, find

RARE = "NEEDLE-7f3a"
SCREEN_ROWS = 48


def write_log(path: Path, size: int) -> int:
    """Numbered lines of varied length (10 B to 14 KB, most of them short, a few long ones among
    them, in a fixed pseudo-random order), the rare string in a line near the end."""
    import random

    rng = random.Random(7)
    lengths = [rng.choice((10, 24, 40, 60, 80, 100, 120, 160, 240, 400, 1200, 4000, 14_000)) for _ in range(997)]
    pool = [b"x" * max(0, n - 9) for n in lengths]
    written = lines = 0
    with open(path, "wb") as handle:
        while written < size:
            chunk = b"".join(b"%08d" % (lines + i) + b" " + body[: max(0, len(body) - 1)] + b"\n"
                             for i, body in enumerate(pool))
            if written + len(chunk) >= size:
                chunk = chunk.replace(b"%08d " % (lines + 500), b"%08d " % (lines + 500) + RARE.encode() + b" ", 1)
            handle.write(chunk)
            written += len(chunk)
            lines += len(pool)
    return lines


def timed(action) -> float:
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def run(argv: list[str]) -> float:
    return timed(lambda: subprocess.run(argv, stdout=subprocess.DEVNULL, check=False))


def first_screen_library(path: Path) -> float:
    began = time.perf_counter()
    index = LineIndex(path).start()
    start: int | None = 0
    for _ in range(SCREEN_ROWS):
        if start is None:
            break
        index.decode(start)
        start = index.next_start(start)
    elapsed = time.perf_counter() - began
    index.close()
    return elapsed


def full_index(path: Path) -> float:
    done = threading.Event()
    began = time.perf_counter()
    finished: list[float] = []

    def progress(p) -> None:
        if p.complete and not done.is_set():
            finished.append(time.perf_counter())
            done.set()

    index = LineIndex(path, on_progress=progress).start()
    done.wait(600)
    index.close()
    return finished[0] - began


def search_count(path: Path) -> tuple[float, int]:
    index = LineIndex(path)
    buffer, size = index.snapshot()
    found: list[int | None] = []
    elapsed = timed(lambda: found.append(count(buffer, size, Query.parse(RARE))))
    index.close()
    return elapsed, found[0] or 0


def search_find(path: Path) -> float:
    index = LineIndex(path)
    buffer, size = index.snapshot()
    elapsed = timed(lambda: find(buffer, size, Query.parse(RARE), 0))
    index.close()
    return elapsed


async def first_screen_viewer(path: Path) -> float:
    """From the app's start to the moment its first screen of rows is painted with the file's first
    lines (the viewer opens the file on mount; the compositor asks for rows one by one and the last
    row of the screen closes the frame)."""
    from tests.viewer_harness import ViewerApp, screen_rows
    from widgets.viewer.artifact_lines import ArtifactLines

    painted: list[float] = []
    plain_render_line = ArtifactLines.render_line

    def timed_render_line(self: ArtifactLines, y: int):
        strip = plain_render_line(self, y)
        if (y == self.scrollable_content_region.height - 1 and not painted and self.index is not None
                and strip.text.strip()):
            painted.append(time.perf_counter())
        return strip

    class OpeningApp(ViewerApp):
        def on_mount(self) -> None:
            self.viewer.open(path)

    ArtifactLines.render_line = timed_render_line  # type: ignore[method-assign]
    try:
        began = time.perf_counter()
        app = OpeningApp()
        async with app.run_test(size=(160, SCREEN_ROWS + 2)):
            while not painted:
                await asyncio.sleep(0.001)
            rows = screen_rows(app.lines)
    finally:
        ArtifactLines.render_line = plain_render_line  # type: ignore[method-assign]
    assert rows[0].split()[0] == "1", rows[0][:80]
    return painted[0] - began


def app_start() -> float:
    """The same app with nothing to open, to its first frame: what any Textual app pays."""
    from tests.viewer_harness import ViewerApp

    async def go() -> float:
        began = time.perf_counter()
        app = ViewerApp()
        async with app.run_test(size=(160, SCREEN_ROWS + 2)) as pilot:
            await pilot.pause()
        return time.perf_counter() - began

    return asyncio.run(go())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vigil-bench-") as tmp:
        path = Path(tmp) / "test-output.log"
        lines = write_log(path, args.size_mb << 20)
        size = path.stat().st_size
        mb = size / 1e6
        run(["cat", str(path)])  # warm the page cache for everyone
        rows: dict[str, list[float]] = {k: [] for k in ("first", "viewer", "empty", "index", "wc", "count",
                                                        "find", "grep")}
        matches = 0
        for _ in range(args.repeat):
            rows["first"].append(first_screen_library(path))
            rows["viewer"].append(asyncio.run(first_screen_viewer(path)))
            rows["empty"].append(app_start())
            rows["index"].append(full_index(path))
            rows["wc"].append(run(["wc", "-l", str(path)]))
            elapsed, matches = search_count(path)
            rows["count"].append(elapsed)
            rows["find"].append(search_find(path))
            rows["grep"].append(run(["grep", "-c", RARE, str(path)]))
        med = {k: statistics.median(v) for k, v in rows.items()}

        def ms(key: str) -> str:
            return f"{med[key] * 1000:7.1f} ms ({min(rows[key]) * 1000:.1f}–{max(rows[key]) * 1000:.1f})"

        print(f"file: {mb:.0f} MB, {lines:,} lines of 10 B to 14 KB, {matches} match of {RARE!r}; "
              f"median (min–max) of {args.repeat}")
        print(f"time to first screen   library {ms('first')}")
        print(f"                       viewer, from app start {ms('viewer')}   goal ≤ 100 ms on every run "
              f"({'met' if max(rows['viewer']) <= 0.1 else 'NOT met'})")
        print(f"                       peer: the same app with nothing to open {ms('empty')}; "
              f"the file adds {(med['viewer'] - med['empty']) * 1000:.1f} ms")
        for label, ours, peer, peer_name in (("line index", "index", "wc", "wc -l"),
                                             ("rare string, count", "count", "grep", "grep -c"),
                                             ("rare string, find", "find", "grep", "grep -c")):
            rate, peer_rate = mb / med[ours], mb / med[peer]
            spread = f"{mb / max(rows[ours]):.0f}–{mb / min(rows[ours]):.0f}"
            print(f"{label:22s} {rate:8.0f} MB/s ({spread})   {peer_name:8s} {peer_rate:8.0f} MB/s"
                  f"   ratio {rate / peer_rate:5.2f}")
    if shutil.which("wc") is None or shutil.which("grep") is None:
        print("(wc or grep missing: their figures are process start-up only)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
