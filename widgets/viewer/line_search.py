"""Search a memory-mapped file of any size: regex or plain literal, forwards or backwards, in big
windows, cancellable, in a thread.

Matches are found within lines (as grep does): each window is searched up to the end of the line
it stops in, and only matches that *start* inside the window count, so nothing is found twice or
lost at a window edge. A pattern that spans lines may be missed where it crosses a window edge;
a line longer than `LONG_LINE_REACH` bytes is searched in pieces.

Plain literals are the common case (an error message, a test name) and the fast one. CPython has
two literal scanners with different worst cases: `bytes.find` (two-way / Horspool) and the regex
engine's literal-prefix scan (memchr on the first byte). Which one wins depends on the needle and
the text (1.8 GB/s against 0.8 GB/s either way round on the same log), so a scan times both on its
first window and keeps the faster.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

WINDOW = 4 << 20
LONG_LINE_REACH = 64 << 10
_REGEX_CHARS = frozenset(".^$*+?{}[]\\|()")

Cancelled = Callable[[], bool]


class SearchError(ValueError):
    """A query that cannot be searched for; the message is for the user."""


@dataclass(frozen=True)
class Query:
    text: str
    pattern: re.Pattern[bytes]
    #: the same pattern over decoded text, to highlight matches on screen
    display: re.Pattern[str]
    literal: bytes | None

    @classmethod
    def parse(cls, text: str) -> Query:
        if not text:
            raise SearchError("nothing to search for")
        try:
            pattern = re.compile(text.encode("utf-8", "surrogateescape"), re.MULTILINE)
            display = re.compile(text, re.MULTILINE)
        except (re.error, UnicodeEncodeError) as exc:
            raise SearchError(f"bad pattern: {exc}") from None
        if pattern.fullmatch(b"") is not None:
            raise SearchError("the pattern matches empty text")
        literal = None if _REGEX_CHARS & set(text) else text.encode("utf-8")
        return cls(text, pattern, display, literal)


@dataclass(frozen=True)
class Match:
    start: int
    end: int


class _Scanner:
    """Finds, last-finds and counts matches of one query inside [a, b) of a buffer."""

    def __init__(self, buffer: Any, size: int, query: Query) -> None:
        self.buffer = buffer
        self.size = size
        self.query = query
        self._fast_find: str | None = None if query.literal else "re"
        self._fast_count: str | None = None if query.literal else "re"

    def reach(self, b: int) -> int:
        """How far past b a match starting before b may extend."""
        if b >= self.size:
            return self.size
        literal = self.query.literal
        if literal is not None:
            return min(self.size, b + len(literal) - 1)
        found = self.buffer.find(b"\n", b, min(self.size, b + LONG_LINE_REACH))
        return min(self.size, b + LONG_LINE_REACH) if found == -1 else found

    def first(self, a: int, b: int) -> Match | None:
        ext = self.reach(b)
        if self._fast_find is None:
            self._fast_find = _faster(lambda: self._find_literal(a, ext), lambda: self._find_re(a, ext))
        match = self._find_literal(a, ext) if self._fast_find == "find" else self._find_re(a, ext)
        return match if match is not None and match.start < b else None

    def last(self, a: int, b: int) -> Match | None:
        ext = self.reach(b)
        literal = self.query.literal
        if literal is not None:
            found = self.buffer.rfind(literal, a, ext)
            return None if found == -1 else Match(found, found + len(literal))
        pattern, best = self.query.pattern, None
        for m in pattern.finditer(self.buffer, a, ext):
            if m.start() >= b:
                break
            best = m
        # finditer skips matches that overlap the one before; the last *position* that matches is
        # what "previous match" means, so step on from the last one found
        while best is not None:
            later = pattern.search(self.buffer, best.start() + 1, ext)
            if later is None or later.start() >= b:
                break
            best = later
        return None if best is None else Match(best.start(), best.end())

    def count(self, a: int, b: int) -> tuple[int, int]:
        """Matches starting in [a, b), and where the next window should start."""
        ext = self.reach(b)
        if self._fast_count is None:
            self._fast_count = _faster(lambda: self._count_literal(a, ext), lambda: self._count_re(a, ext, b))
        if self._fast_count == "find":
            return self._count_literal(a, ext), b
        return self._count_re(a, ext, b)

    def _find_literal(self, a: int, ext: int) -> Match | None:
        literal = self.query.literal
        assert literal is not None
        found = self.buffer.find(literal, a, ext)
        return None if found == -1 else Match(found, found + len(literal))

    def _find_re(self, a: int, ext: int) -> Match | None:
        m = self.query.pattern.search(self.buffer, a, ext)
        return None if m is None else Match(m.start(), m.end())

    def _count_literal(self, a: int, ext: int) -> int:
        literal = self.query.literal
        assert literal is not None
        return self.buffer[a:ext].count(literal)

    def _count_re(self, a: int, ext: int, b: int) -> tuple[int, int]:
        count, resume = 0, b
        for m in self.query.pattern.finditer(self.buffer, a, ext):
            if m.start() >= b:
                break
            count += 1
            resume = max(b, m.end())
        return count, resume


def _faster(literal: Callable[[], object], regex: Callable[[], object]) -> str:
    began = time.perf_counter()
    literal()
    middle = time.perf_counter()
    regex()
    return "find" if middle - began <= time.perf_counter() - middle else "re"


def find(buffer: Any, size: int, query: Query, origin: int, forward: bool = True,
         cancelled: Cancelled | None = None, window: int = WINDOW, limit: int | None = None) -> Match | None:
    """The first match starting in [origin, limit) (forward, limit defaults to EOF), or the last
    one starting in [limit, origin) (backward, limit defaults to 0). None when there is none, or
    when cancelled."""
    if buffer is None or size == 0:
        return None
    scanner = _Scanner(buffer, size, query)
    if forward:
        a, stop = max(0, origin), size if limit is None else min(size, limit)
        while a < stop:
            if cancelled is not None and cancelled():
                return None
            b = min(stop, a + window)
            match = scanner.first(a, b)
            if match is not None:
                return match
            a = b
        return None
    b, stop = min(origin, size), max(0, limit or 0)
    while b > stop:
        if cancelled is not None and cancelled():
            return None
        a = max(stop, b - window)
        match = scanner.last(a, b)
        if match is not None:
            return match
        b = a
    return None


def find_wrapping(buffer: Any, size: int, query: Query, origin: int, forward: bool = True,
                  cancelled: Cancelled | None = None) -> tuple[Match | None, bool]:
    """Like `find`, continuing from the other end of the file; says whether it wrapped."""
    match = find(buffer, size, query, origin, forward, cancelled)
    if match is not None or (cancelled is not None and cancelled()):
        return match, False
    match = find(buffer, size, query, 0 if forward else size, forward, cancelled, limit=origin)
    return match, match is not None


def count(buffer: Any, size: int, query: Query, on_progress: Callable[[int, int], None] | None = None,
          cancelled: Cancelled | None = None, window: int = WINDOW, interval: float = 0.05) -> int | None:
    """All matches in the file; `on_progress(count, scanned_bytes)` as the scan runs. None when
    cancelled."""
    if buffer is None or size == 0:
        return 0
    scanner = _Scanner(buffer, size, query)
    total, a, last = 0, 0, time.monotonic()
    while a < size:
        if cancelled is not None and cancelled():
            return None
        found, a = scanner.count(a, min(size, a + window))
        total += found
        if on_progress is not None and time.monotonic() - last >= interval:
            last = time.monotonic()
            on_progress(total, a)
    if on_progress is not None:
        on_progress(total, size)
    return total


class SearchRun:
    """One search from the user: find the match to jump to, then count all of them.

    Runs in its own thread; `on_found(match, wrapped)` comes first, then `on_count(count,
    scanned, done)` repeatedly. `cancel()` stops it at the next window.
    """

    def __init__(self, buffer: Any, size: int, query: Query, origin: int, forward: bool,
                 on_found: Callable[[Match | None, bool], None],
                 on_count: Callable[[int, int, bool], None] | None = None,
                 still_readable: Callable[[], bool] | None = None) -> None:
        self.buffer = buffer
        self.size = size
        self.query = query
        self.origin = origin
        self.forward = forward
        self.on_found = on_found
        self.on_count = on_count
        self._cancel = threading.Event()
        # a mapped file truncated under the search must not be read again (SIGBUS): stop instead
        self._still_readable = still_readable or (lambda: True)
        self._thread = threading.Thread(target=self._run, name="line-search", daemon=True)

    def start(self) -> SearchRun:
        self._thread.start()
        return self

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _stopped(self) -> bool:
        if not self._cancel.is_set() and not self._still_readable():
            self._cancel.set()
        return self._cancel.is_set()

    def _run(self) -> None:
        match, wrapped = find_wrapping(self.buffer, self.size, self.query, self.origin, self.forward,
                                       self._stopped)
        if self._cancel.is_set():
            return
        self.on_found(match, wrapped)
        if self.on_count is None:
            return
        on_count = self.on_count
        total = count(self.buffer, self.size, self.query, lambda n, scanned: on_count(n, scanned, False),
                      self._stopped)
        if total is not None and not self._cancel.is_set():
            on_count(total, self.size, True)
