"""Throughput of the streaming ArtifactWriter, next to `cat file > /dev/null` and a plain Python
file copy, measured in the same run on the same file.

A log-like text file (1 GB by default) is written once, then read in chunks (64 KB, what a pipe
read gives a tool) and fed to:

* `cat FILE > /dev/null` — the floor: reading only;
* a plain Python copy — `read` / `write` in a loop into a new file, no fsync;
* the same copy with an fsync at the end — what durability costs on this disk;
* the ArtifactWriter — counts lines, checks UTF-8, fsyncs, renames into place, writes the index.

The goal is ≥ 50 % of the plain copy's throughput. The contenders run in interleaved rounds, with
the disk synced before each run, so that a slow moment of a shared disk hits them all alike; each
figure is the best and the median of `--repeat` runs.

    .venv/bin/python bench/artifact_write.py [--size-mb 1024] [--chunk-kb 64] [--repeat 3] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_app.runtime.results.artifacts import ArtifactStore

LEVELS = ("INFO", "DEBUG", "WARN", "INFO", "ERROR", "INFO")


def make_source(path: Path, size: int) -> None:
    """Log lines of varying length and content, so nothing compresses or repeats trivially."""
    block_lines = []
    for i in range(20_000):
        level = LEVELS[i % len(LEVELS)]
        block_lines.append(f"2025-01-01T12:{i // 600 % 60:02d}:{i // 10 % 60:02d}.{i % 1000:03d}Z {level:5} "
                           f"worker-{i % 17} request id={i * 7919 % 100003} took {i % 997} ms "
                           f"path=/api/v1/items/{i % 4099}{' retry' * (i % 3)}\n")
    block = "".join(block_lines).encode()
    written = 0
    with open(path, "wb") as f:
        n = 0
        while written < size:
            # vary each block a little: a counter line in front
            piece = f"--- block {n} ---\n".encode() + block
            piece = piece[: size - written]
            f.write(piece)
            written += len(piece)
            n += 1


def timed(run: Callable[[], None]) -> float:
    began = time.perf_counter()
    run()
    return time.perf_counter() - began


def cat(source: Path) -> Callable[[], None]:
    def run() -> None:
        with open(os.devnull, "wb") as null:
            subprocess.run(["cat", str(source)], stdout=null, check=True)
    return run


def plain_copy(source: Path, dest: Path, chunk: int, fsync: bool) -> Callable[[], None]:
    def run() -> None:
        with open(source, "rb") as src, open(dest, "wb") as out:
            while data := src.read(chunk):
                out.write(data)
            if fsync:
                out.flush()
                os.fsync(out.fileno())
    return run


def artifact(source: Path, directory: Path, chunk: int) -> Callable[[], None]:
    def run() -> None:
        store = ArtifactStore("bench", directory)
        writer = store.open_writer("toolu_bench", "Bash")
        with open(source, "rb") as src:
            while data := src.read(chunk):
                writer.write(data)
        writer.close()
    return run


def rounds(contenders: dict[str, Callable[[], None]], repeat: int, cleanup: Callable[[], None]) -> dict:
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, run in contenders.items():
            os.sync()  # the previous contender's dirty pages are not this one's bill
            times[name].append(timed(run))
            cleanup()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--chunk-kb", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the test file and copies go")
    parser.add_argument("--keep", action="store_true", help="keep the generated source file")
    args = parser.parse_args()

    size = args.size_mb * 1024 * 1024
    chunk = args.chunk_kb * 1024
    work = Path(tempfile.mkdtemp(prefix="vigil-bench-", dir=args.dir))
    source = work / "source.log"
    dest = work / "copy.log"
    artifacts = work / "artifacts"
    try:
        print(f"writing a {args.size_mb} MB log-like source in {work} …", flush=True)
        make_source(source, size)
        cat(source)()  # warm the page cache so every contender reads from memory

        def clean() -> None:
            dest.unlink(missing_ok=True)
            shutil.rmtree(artifacts, ignore_errors=True)

        times = rounds({
            "cat > /dev/null": cat(source),
            "python copy": plain_copy(source, dest, chunk, fsync=False),
            "python copy + fsync": plain_copy(source, dest, chunk, fsync=True),
            "ArtifactWriter": artifact(source, artifacts, chunk),
        }, args.repeat, clean)
        mb = size / (1024 * 1024)
        print(f"\n{args.size_mb} MB, {args.chunk_kb} KB chunks, {args.repeat} interleaved rounds")
        print(f"  {'':22} {'best':>10} {'median':>12}")
        for name, runs in times.items():
            print(f"  {name:22} {mb / min(runs):6.0f} MB/s {mb / statistics.median(runs):7.0f} MB/s")
        for peer in ("python copy", "python copy + fsync"):
            best = min(times[peer]) / min(times["ArtifactWriter"])
            median = statistics.median(times[peer]) / statistics.median(times["ArtifactWriter"])
            goal = "   (goal ≥ 50%)" if peer == "python copy" else ""
            print(f"  ArtifactWriter / {peer:20} {best:5.0%} best {median:6.0%} median{goal}")
    finally:
        if args.keep:
            print(f"kept {source}")
            shutil.rmtree(artifacts, ignore_errors=True)
            dest.unlink(missing_ok=True)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
