"""Opening a 500 MB log in the artifact viewer, next to `wc -l` and `grep -c` on the same file.

Measures, on one generated log (numbered lines, a rare string near the end), in the same run:
  * time to first screen: the index opened and the first screen of lines decoded (library), and
    the Textual viewer headless from `open()` to a rendered screen of rows;
  * the full line index (background thread) in MB/s, beside `wc -l`;
  * a rare-string search over the whole file in MB/s (count, and find of a needle near the end),
    beside `grep -c`.
The file is read once first so every contender sees a warm page cache.

    .venv/bin/python bench/artifact_browse.py [--size-mb 500] [--repeat 3]
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
    template = b"".join(b"KKKKK%04d the quick brown fox jumps over the lazy dog; status=ok elapsed=12ms\n" % j
                        for j in range(10_000))
    blocks = max(1, size // len(template))
    with open(path, "wb") as handle:
        for k in range(blocks):
            block = template.replace(b"KKKKK", b"%05d" % k)
            if k == blocks - 1:
                block = block.replace(b"%05d9990 the quick" % k, b"%05d9990 " % k + RARE.encode() + b" !")
            handle.write(block)
    return blocks * 10_000


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
    """From `open()` to the moment the viewer has rendered every row of its first screen (the
    compositor asks for rows one by one; the last row of the screen closes the frame)."""
    from tests.viewer_harness import ViewerApp, screen_rows
    from widgets.viewer.artifact_lines import ArtifactLines

    painted: list[float] = []
    plain_render_line = ArtifactLines.render_line

    def timed_render_line(self: ArtifactLines, y: int):
        strip = plain_render_line(self, y)
        if y == self.scrollable_content_region.height - 1 and not painted:
            painted.append(time.perf_counter())
        return strip

    app = ViewerApp()
    async with app.run_test(size=(160, SCREEN_ROWS + 2)) as pilot:
        await pilot.pause()
        ArtifactLines.render_line = timed_render_line  # type: ignore[method-assign]
        try:
            began = time.perf_counter()
            app.viewer.open(path)
            while not painted:
                await asyncio.sleep(0.001)
        finally:
            ArtifactLines.render_line = plain_render_line  # type: ignore[method-assign]
        assert screen_rows(app.lines)[0].split()[0] == "1"
    return painted[0] - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vigil-bench-") as tmp:
        path = Path(tmp) / "test-output.log"
        lines = write_log(path, args.size_mb << 20)
        size = path.stat().st_size
        mb = size / 1e6
        run(["cat", str(path)])  # warm the page cache for everyone
        rows: dict[str, list[float]] = {k: [] for k in ("first", "viewer", "index", "wc", "count", "find", "grep")}
        matches = 0
        for _ in range(args.repeat):
            rows["first"].append(first_screen_library(path))
            rows["viewer"].append(asyncio.run(first_screen_viewer(path)))
            rows["index"].append(full_index(path))
            rows["wc"].append(run(["wc", "-l", str(path)]))
            elapsed, matches = search_count(path)
            rows["count"].append(elapsed)
            rows["find"].append(search_find(path))
            rows["grep"].append(run(["grep", "-c", RARE, str(path)]))
        best = {k: min(v) for k, v in rows.items()}
        med = {k: statistics.median(v) for k, v in rows.items()}

        print(f"file: {mb:.0f} MB, {lines:,} lines, {matches} match of {RARE!r}; best (median) of {args.repeat}")
        print(f"time to first screen   library {best['first'] * 1000:7.2f} ms ({med['first'] * 1000:.2f})"
              f"   viewer {best['viewer'] * 1000:7.2f} ms ({med['viewer'] * 1000:.2f})   goal < 150 ms")
        for label, ours, peer, peer_name in (("line index", "index", "wc", "wc -l"),
                                             ("rare string, count", "count", "grep", "grep -c"),
                                             ("rare string, find", "find", "grep", "grep -c")):
            rate, peer_rate = mb / best[ours], mb / best[peer]
            print(f"{label:22s} {rate:8.0f} MB/s ({mb / med[ours]:.0f})   {peer_name:8s} {peer_rate:8.0f} MB/s"
                  f"   ratio {rate / peer_rate:5.2f}   goal >= 1000 MB/s")
    if shutil.which("wc") is None or shutil.which("grep") is None:
        print("(wc or grep missing: their figures are process start-up only)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
