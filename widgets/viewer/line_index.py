"""A line index over a file of any size, built in a background thread, that never holds the file.

The file is memory-mapped. A scanner thread counts newlines block by block (`bytes.count` on
256 KiB slices runs at memory speed) and keeps one number per block: how many newlines come
before it. That sparse index is 8 bytes per 256 KiB — 16 KB for a 500 MB file — and line N is
found by bisecting the blocks, then splitting that one block on demand (a small LRU of per-block
line starts). Storing every offset, as log viewers usually do, would cost ~50 MB for 6 M lines.

Counting holds the GIL (`bytes.count`, and `mmap.find` too), and a thread that counts for long
takes the GIL from the UI thread in 5 ms slices: the first screen of a big file waited for the
whole scan. So the bulk of a big file is counted by a child process (a few lines of Python reading
the inherited descriptor with `pread`), while this thread only waits on its pipe with the GIL
released; what is left (the last partial block, a file that grows) is counted here, yielding the
GIL after every block. Without a child process (none can be started) everything is counted here.

While the scan runs, the first lines are readable at once (walking forward from offset 0 needs no
index) and so are the last ones (`tail_starts` walks backwards from EOF). After the scan the
thread keeps polling the size: a file that grows (a Bash command still writing its artifact) is
remapped and indexed further; one that shrinks is indexed again from scratch.

Lines are decoded on demand with `errors="replace"` and at most `max_line_bytes` bytes each, so a
10 MB line without a newline costs one bounded read, not 10 MB of text.
"""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
import threading
import time
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

BLOCK_SIZE = 1 << 18
MAX_LINE_BYTES = 10_000
_BLOCK_CACHE = 64
_LINE_CACHE = 4096
#: unscanned bytes from which a child process counts the full blocks
CHILD_SCAN_BYTES = 32 << 20
#: the child: newline counts of whole blocks read from an inherited descriptor, 8 bytes each
_CHILD = """
import os, sys
fd, block, pos, stop = map(int, sys.argv[1:5])
out = sys.stdout.buffer
counts = []
while pos < stop:
    data = os.pread(fd, block, pos)
    if len(data) < block:
        break
    counts.append(data.count(b"\\n").to_bytes(8, "little"))
    pos += block
    if len(counts) >= 32:
        out.write(b"".join(counts))
        out.flush()
        counts = []
out.write(b"".join(counts))
"""


@dataclass(frozen=True)
class IndexProgress:
    """What the scanner knows, as one consistent snapshot."""

    size: int
    scanned: int
    newlines: int
    complete: bool
    generation: int

    @property
    def fraction(self) -> float:
        return 1.0 if self.size == 0 else min(1.0, self.scanned / self.size)


@dataclass(frozen=True)
class DecodedLine:
    """One line as text: at most `max_line_bytes` of it, and how many bytes were left out."""

    start: int
    end: int
    text: str
    more_bytes: int


class LineIndex:
    """Sparse newline index of one file. Thread-safe; `on_progress` is called from the scanner."""

    def __init__(self, path: str | os.PathLike[str], *, block_size: int = BLOCK_SIZE,
                 max_line_bytes: int = MAX_LINE_BYTES, poll_interval: float = 0.25,
                 progress_interval: float = 0.05,
                 on_progress: Callable[[IndexProgress], None] | None = None) -> None:
        self.path = os.fspath(path)
        self.block_size = block_size
        self.max_line_bytes = max_line_bytes
        self.poll_interval = poll_interval
        self.progress_interval = progress_interval
        self.on_progress = on_progress
        self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._wake = threading.Event()  # the scanner, idle between size polls, has work again
        self._running = threading.Event()
        self._running.set()
        self._thread: threading.Thread | None = None
        self._mm: mmap.mmap | None = None
        self._size = 0
        self._generation = 0
        #: count big files in a child process (off when one cannot be started)
        self._use_child = True
        self._child: subprocess.Popen[bytes] | None = None
        self._reset_scan()
        self._map(os.fstat(self._fd).st_size)

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> LineIndex:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"line-index:{self.path}", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        child = self._child
        if child is not None and child.poll() is None:
            child.kill()  # the scanner thread, waiting on its pipe, wakes at once
        self._wake.set()
        self._running.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        try:
            os.close(self._fd)
        except OSError:
            pass

    def pause(self) -> None:
        """Hold the scanner between blocks (reading lines keeps working)."""
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def wait_complete(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.progress().complete:
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    # ----------------------------------------------------------------- state

    def progress(self) -> IndexProgress:
        with self._lock:
            return IndexProgress(self._size, self._scanned, self._newlines, self._scanned >= self._size,
                                 self._generation)

    @property
    def size(self) -> int:
        return self._size

    def snapshot(self) -> tuple[mmap.mmap | None, int]:
        """The current mapping and its size, for readers in other threads (search): check
        `covers(size)` between windows, as a file truncated under a mapping cannot be read."""
        with self._lock:
            return self._mm, self._size

    def covers(self, size: int) -> bool:
        """Whether the file still holds at least `size` bytes."""
        try:
            return os.fstat(self._fd).st_size >= size
        except OSError:
            return False

    @property
    def line_count(self) -> int | None:
        """Exact number of lines once the scan has reached the end; None before."""
        self._mapping()
        with self._lock:
            if self._scanned < self._size:
                return None
            return self._newlines + (1 if self._size and not self._ends_with_newline() else 0)

    @property
    def average_line_bytes(self) -> float:
        with self._lock:
            if self._newlines:
                return self._scanned / self._newlines
            return float(max(self._scanned, 80))

    # ----------------------------------------------------------------- lines

    def line_start(self, number: int) -> int | None:
        """Byte offset where line `number` (0-based) starts, or None when the scan has not reached
        it yet (or it does not exist)."""
        self._mapping()
        with self._lock:
            if number < 0 or number > self._newlines:
                return None
            if number == 0:
                return 0 if self._size else None
            mm, size, cum = self._mm, self._size, self._cum
            partial_from = (len(cum) - 1) * self.block_size
            if number > cum[-1]:
                # the newline is in the partly scanned last block
                block, before, base = len(cum) - 1, cum[-1], partial_from
            else:
                block = bisect_left(cum, number) - 1
                before, base = cum[block], block * self.block_size
        starts = self._block_starts(mm, block, base, size)
        start = starts[number - before - 1]
        return start if start < size else None

    def line_end(self, start: int) -> int:
        """Offset of the newline that ends the line starting at `start` (or EOF)."""
        mm, size = self._mapping()
        if mm is None or start >= size:
            return start
        found = mm.find(b"\n", start)
        return size if found == -1 else found

    def next_start(self, start: int) -> int | None:
        end = self.line_end(start)
        return end + 1 if end + 1 < self._size else None

    def start_at_or_after(self, offset: int) -> int | None:
        """The first line start at or after `offset` (used for estimated positions)."""
        mm, size = self._mapping()
        if mm is None or offset >= size:
            return None
        if offset <= 0:
            return 0
        found = mm.find(b"\n", offset - 1)
        return None if found == -1 or found + 1 >= size else found + 1

    def start_of_line_at(self, offset: int) -> int:
        mm, _size = self._mapping()
        if mm is None or offset <= 0:
            return 0
        return mm.rfind(b"\n", 0, offset) + 1

    def tail_starts(self, count: int) -> list[int]:
        """Starts of the last `count` lines (ascending), found backwards from EOF without the index."""
        mm, size = self._mapping()
        if mm is None or count <= 0:
            return []
        position = size - 1 if mm[size - 1:size] == b"\n" else size
        starts: list[int] = []
        while len(starts) < count:
            found = mm.rfind(b"\n", 0, position)
            starts.append(found + 1)
            if found == -1:
                break
            position = found
        starts.reverse()
        return starts

    def line_of_offset(self, offset: int) -> int | None:
        """The line number containing byte `offset`, when the scan has passed it."""
        self._mapping()
        with self._lock:
            if offset >= self._scanned:
                return None
            mm, cum = self._mm, self._cum
            block = min(offset // self.block_size, len(cum) - 1)
            before = cum[block]
        if mm is None:
            return 0
        return before + mm[block * self.block_size:offset].count(b"\n")

    def decode(self, start: int) -> DecodedLine:
        """The line starting at `start`, decoded with replacement, cut at `max_line_bytes`."""
        cached = self._line_cache.get(start)
        if cached is not None:
            line, size_then = cached
            # a line that ended at EOF may have grown since
            if line.end < size_then or size_then == self._size:
                self._line_cache.move_to_end(start)
                return line
        mm, size = self._mapping()
        if mm is None or start >= size:
            return DecodedLine(start, start, "", 0)
        end = self.line_end(start)
        cut = min(end, start + self.max_line_bytes)
        text = mm[start:cut].decode("utf-8", errors="replace")
        line = DecodedLine(start, end, text, end - cut)
        self._line_cache[start] = (line, size)
        if len(self._line_cache) > _LINE_CACHE:
            self._line_cache.popitem(last=False)
        return line

    def read(self, start: int, end: int) -> bytes:
        mm, size = self._mapping()
        if mm is None:
            return b""
        return mm[max(0, start):min(end, size)]

    # ----------------------------------------------------------------- internals

    def _reset_scan(self) -> None:
        self._cum = array("q", [0])  # newlines before block i
        self._scanned = 0
        self._newlines = 0
        self._partial = 0  # newlines in the partly scanned last block
        self._blocks: OrderedDict[int, array] = OrderedDict()
        self._line_cache: OrderedDict[int, tuple[DecodedLine, int]] = OrderedDict()

    def _mapping(self) -> tuple[mmap.mmap | None, int]:
        """The mapping to read from, once the file is known not to have shrunk under it. Touching a
        mapped page past the end of a truncated file kills the process (SIGBUS), so every read
        checks the size first and a shrunk file is re-mapped before it is read. (Checking only every
        few milliseconds left a window that crashed the process under load; since the bulk count
        runs in a child process the scanner thread rarely holds the GIL, so the fstat is cheap.)"""
        try:
            actual = os.fstat(self._fd).st_size
        except OSError:
            actual = self._size
        if actual < self._size:
            self._resize(actual)
        return self.snapshot()

    def _resize(self, size: int) -> bool:
        with self._lock:
            if size == self._size:
                return False
            if size < self._size:
                self._generation += 1
                self._reset_scan()
            self._map(size)
        self._wake.set()
        return True

    def _map(self, size: int) -> None:
        self._mm = mmap.mmap(self._fd, size, access=mmap.ACCESS_READ) if size else None
        self._size = size

    def _ends_with_newline(self) -> bool:
        mm = self._mm
        return mm is not None and mm[self._size - 1:self._size] == b"\n"

    def _block_starts(self, mm: mmap.mmap | None, block: int, base: int, size: int) -> array:
        """Line starts that follow a newline inside one block. Only fully scanned blocks are
        cached: the last one may still grow."""
        with self._lock:
            cached = self._blocks.get(block)
            if cached is not None:
                self._blocks.move_to_end(block)
                return cached
            cacheable = block < len(self._cum) - 1
        data = mm[base:min(base + self.block_size, size)] if mm is not None else b""
        parts = data.split(b"\n")
        parts.pop()  # the text after the last newline is not a line start found in this block
        starts = array("q", accumulate((len(p) + 1 for p in parts), initial=base))
        starts.pop(0)
        if cacheable:
            with self._lock:
                self._blocks[block] = starts
                if len(self._blocks) > _BLOCK_CACHE:
                    self._blocks.popitem(last=False)
        return starts

    def _report(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.progress())

    def _run(self) -> None:
        last_report = 0.0
        while not self._stop.is_set():
            self._running.wait()
            if self._stop.is_set():
                break
            mm, size = self._mapping()
            with self._lock:
                scanned = self._scanned
            if scanned < size and mm is not None:
                if size - scanned >= CHILD_SCAN_BYTES and scanned % self.block_size == 0 and self._use_child:
                    self._scan_in_child(scanned, size)
                    continue
                self._scan_block(mm, size, scanned)
                now = time.monotonic()
                if now - last_report >= self.progress_interval or self._scanned >= self._size:
                    last_report = now
                    self._report()
                time.sleep(0)  # give the GIL back now, not when the UI thread has waited 5 ms for it
                continue
            self._wake.wait(self.poll_interval)
            self._wake.clear()
            if self._stop.is_set():
                break  # closed: the descriptor may already belong to another file
            self._check_size()

    def _scan_in_child(self, scanned: int, size: int) -> None:
        """Count the whole blocks from `scanned` in a child process; this thread waits on its pipe
        (the GIL released) and folds the counts in as they come."""
        stop = size - size % self.block_size
        with self._lock:
            generation = self._generation
        try:
            child = subprocess.Popen(
                [sys.executable, "-S", "-E", "-c", _CHILD, str(self._fd), str(self.block_size), str(scanned),
                 str(stop)],
                stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(self._fd,), close_fds=True)
        except (OSError, ValueError):
            self._use_child = False
            return
        assert child.stdout is not None
        self._child = child
        last_report = 0.0
        pending = b""
        try:
            while not self._stop.is_set():
                self._running.wait()
                chunk = os.read(child.stdout.fileno(), 65536)
                if not chunk:
                    break
                pending += chunk
                whole = len(pending) - len(pending) % 8
                counts = array("q")
                counts.frombytes(pending[:whole])
                pending = pending[whole:]
                with self._lock:
                    if self._generation != generation or self._scanned % self.block_size:
                        break  # shrunk and re-indexed meanwhile: these counts are of another file
                    for count in counts:
                        self._cum.append(self._cum[-1] + count)
                    self._newlines += sum(counts)
                    self._scanned += len(counts) * self.block_size
                now = time.monotonic()
                if now - last_report >= self.progress_interval:
                    last_report = now
                    self._report()
        finally:
            self._child = None
            if child.poll() is None:
                child.kill()
            child.wait()
            child.stdout.close()
        if child.returncode not in (0, -9) and self._scanned < stop:
            self._use_child = False  # it failed: count here from now on

    def _scan_block(self, mm: mmap.mmap, size: int, scanned: int) -> None:
        block_base = (len(self._cum) - 1) * self.block_size
        block_end = min(block_base + self.block_size, size)
        count = mm[scanned:block_end].count(b"\n")
        with self._lock:
            if self._mm is not mm:
                return  # remapped meanwhile; the next round starts from the new mapping
            self._partial += count
            self._newlines += count
            self._scanned = block_end
            if block_end == block_base + self.block_size:
                self._cum.append(self._cum[-1] + self._partial)
                self._partial = 0

    def _check_size(self) -> None:
        try:
            size = os.fstat(self._fd).st_size
        except OSError:
            return
        if self._resize(size):
            self._report()
