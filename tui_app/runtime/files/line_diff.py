"""The line diff under `diffing`: which regions of two lists of lines differ.

1. Walk: follow the equal run from the top; at a difference, search the cheapest way over it in
   Myers' order of cost until `CONFIRM` equal lines line up again, diff that small box exactly
   (Myers), and walk on. An edit of a long file is a few such boxes, so the cost is one pass
   at C speed plus a little per changed place, whatever the lines look like.
2. A difference too large to step over (`LOCAL_COST`) is split on anchors: lines that occur
   exactly once on each side (patience diff), else windows of 4 or 16 lines unique to both
   (files whose lines repeat). The anchors' longest increasing chain leaves gaps that go back
   to step 1. A region with no line in common is a rewrite; one with no anchors goes to Myers.
3. Every Myers step is paid from `WORK_BUDGET`; once it is spent, what is left is shown as plain
   replacements (a correct diff, just not a minimal one) instead of making the dialog wait.

Equal runs are measured with slice comparisons found by galloping (C-speed compares of string
pointers), never line by line; bench/diff_speed.py compares the whole with `git diff`.
"""

from __future__ import annotations

import operator
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence

#: a region that differs: old lines [a_lo, a_hi) became new lines [b_lo, b_hi)
Change = tuple[int, int, int, int]

MAX_EDIT_COST = 256
#: how far the walk searches to step over one difference, and how many equal lines confirm it
LOCAL_COST = 48
CONFIRM = 6
#: diagonals Myers may visit in one diff before the rest is shown as plain replacements
WORK_BUDGET = 150_000
_WINDOWS = (4, 16)


# ---- equal runs, by galloping over slices -------------------------------------------------------

def _equal_run(a: Sequence[str], b: Sequence[str], i: int, j: int, limit: int) -> int:
    """How many items from a[i] and b[j] on are equal (at most `limit`)."""
    if limit <= 0 or a[i] != b[j]:
        return 0
    done, step = 1, 1
    while done < limit:
        end = min(limit, done + step)
        if a[i + done:i + end] == b[j + done:j + end]:
            done, step = end, step * 2
            continue
        lo, hi = done, end  # the first difference is in [lo, hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if a[i + lo:i + mid] == b[j + lo:j + mid]:
                lo = mid
            else:
                hi = mid
        return lo
    return done


def _equal_tail(a: Sequence[str], b: Sequence[str], i_end: int, j_end: int, limit: int) -> int:
    """How many items before a[i_end] and b[j_end] are equal (at most `limit`)."""
    if limit <= 0 or a[i_end - 1] != b[j_end - 1]:
        return 0
    done, step = 1, 1
    while done < limit:
        end = min(limit, done + step)
        if a[i_end - end:i_end - done] == b[j_end - end:j_end - done]:
            done, step = end, step * 2
            continue
        lo, hi = done, end
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if a[i_end - mid:i_end - lo] == b[j_end - mid:j_end - lo]:
                lo = mid
            else:
                hi = mid
        return lo
    return done


# ---- anchors -------------------------------------------------------------------------------------

def _unique_pairs(a_items: Sequence[object], b_items: Sequence[object], a_lo: int, b_lo: int) -> list[tuple[int, int]]:
    """(i, j) for every item that occurs exactly once in each list, in a's order."""
    count_a, count_b = Counter(a_items), Counter(b_items)
    common = {x for x, n in count_a.items() if n == 1}
    common.intersection_update(x for x, n in count_b.items() if n == 1)
    if not common:
        return []
    where_b = dict(zip(b_items, range(b_lo, b_lo + len(b_items)), strict=True))
    return [(i, where_b[x]) for i, x in enumerate(a_items, a_lo) if x in common]


def _increasing_chain(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest chain of pairs whose j increases too (pairs come sorted by i)."""
    js = [j for _, j in pairs]
    if all(map(operator.lt, js, js[1:])):
        return pairs  # the usual case: nothing moved, every anchor is in order
    tails: list[int] = []  # tails[n] = smallest j ending an increasing chain of length n + 1
    tail_at: list[int] = []
    back = [-1] * len(pairs)
    for index, j in enumerate(js):
        n = bisect_left(tails, j)
        if n == len(tails):
            tails.append(j)
            tail_at.append(index)
        else:
            tails[n] = j
            tail_at[n] = index
        back[index] = tail_at[n - 1] if n else -1
    chain = []
    index = tail_at[-1]
    while index >= 0:
        chain.append(pairs[index])
        index = back[index]
    chain.reverse()
    return chain


def _window_keys(lines: list[str], width: int) -> list[int]:
    """A hash per `width`-line window (width a power of two), built by doubling at C speed.
    Equal hashes are only candidates: runs found through them are checked line by line."""
    keys: list[object] = list(lines)
    size = 1
    while size < width:
        keys = list(map(hash, zip(keys, keys[size:], strict=False)))
        size *= 2
    return keys  # type: ignore[return-value]


def _anchor_runs(a: list[str], b: list[str], a_lo: int, a_hi: int, b_lo: int, b_hi: int,
                 width: int) -> list[tuple[int, int, int]]:
    """Runs (i, j, length) of equal lines, found through `width`-line windows unique to both."""
    if a_hi - a_lo < width or b_hi - b_lo < width:
        return []
    a_keys = _window_keys(a[a_lo:a_hi], width)
    b_keys = _window_keys(b[b_lo:b_hi], width)
    pairs = _increasing_chain(_unique_pairs(a_keys, b_keys, a_lo, b_lo))
    runs: list[tuple[int, int, int]] = []
    if not pairs:
        return runs
    start_i, start_j = last_i, last_j = pairs[0]
    for i, j in pairs[1:]:
        if i == last_i + 1 and j == last_j + 1:
            last_i, last_j = i, j  # the usual case: the next window of the same run
        elif i - j == start_i - start_j and i <= last_i + width:
            last_i, last_j = i, j
        elif i >= last_i + width and j >= last_j + width:
            runs.append((start_i, start_j, last_i + width - start_i))
            start_i, start_j = last_i, last_j = i, j
    runs.append((start_i, start_j, last_i + width - start_i))
    if width == 1:
        return runs
    return [(i, j, n) for i, j, n in runs if a[i:i + n] == b[j:j + n]]


# ---- Myers, and the walk that uses it ------------------------------------------------------------

class HardDiff(Exception):
    """A region this big has to be anchored (moved, shuffled or re-indented lines): the caller
    asked to be told rather than have it done in Python."""


class _Differ:
    """One diff. `work` counts the diagonals Myers may still visit: once it runs out, what is
    left is shown as plain replacements, so no input can make the dialog wait long."""

    def __init__(self, a: list[str], b: list[str], max_cost: int, work: int, hard_lines: int | None = None) -> None:
        self.a, self.b = a, b
        self.max_cost = max_cost
        self.work = work
        self.hard_lines = hard_lines
        self.changes: list[Change] = []

    def replace(self, a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> None:
        if a_lo < a_hi or b_lo < b_hi:
            self.changes.append((a_lo, a_hi, b_lo, b_hi))

    def exact(self, a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> None:
        """The shortest edit script of a region (Myers), or a plain replacement past the limits."""
        a, b = self.a, self.b
        n, m = a_hi - a_lo, b_hi - b_lo
        limit = min(n + m, self.max_cost)
        offset = limit + 1
        v = [0] * (2 * limit + 3)
        trace: list[list[int]] = []
        for d in range(limit + 1):
            self.work -= d + 1
            if self.work < 0:
                break
            trace.append(v[:])
            for k in range(-d, d + 1, 2):
                if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                    x = v[offset + k + 1]
                else:
                    x = v[offset + k - 1] + 1
                y = x - k
                if x < n and y < m and a[a_lo + x] == b[b_lo + y]:
                    x += _equal_run(a, b, a_lo + x, b_lo + y, min(n - x, m - y))
                v[offset + k] = x
                if x >= n and x - k >= m:
                    self.changes.extend(_backtrack(trace, offset, n, m, a_lo, b_lo))
                    return
        self.replace(a_lo, a_hi, b_lo, b_hi)

    def resync(self, i: int, j: int, a_hi: int, b_hi: int) -> tuple[int, int] | None:
        """From a mismatch at (i, j): the cheapest point where `CONFIRM` equal lines start (or
        both ends are reached), searched in Myers' order of cost. None past `LOCAL_COST`."""
        a, b = self.a, self.b
        n, m = a_hi - i, b_hi - j
        limit = min(LOCAL_COST, n + m)
        offset = limit + 1
        v = [0] * (2 * limit + 3)
        for d in range(1, limit + 1):
            self.work -= d + 1
            if self.work < 0:
                return None
            for k in range(-d, d + 1, 2):
                if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                    x = v[offset + k + 1]
                else:
                    x = v[offset + k - 1] + 1
                y = x - k
                if x > n or y > m:
                    v[offset + k] = x
                    continue
                run = _equal_run(a, b, i + x, j + y, min(n - x, m - y)) if x < n and y < m else 0
                if run >= CONFIRM or (x + run == n and y + run == m):
                    return i + x, j + y
                v[offset + k] = x + run
        return None

    def walk(self, a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> tuple[int, int] | None:
        """Follow equal runs from the top and step over each small difference on the spot (the
        usual edit: a few changed places in a long file). Returns where a difference too large
        to step over begins, or None when the region is done."""
        a, b = self.a, self.b
        i, j = a_lo, b_lo
        while True:
            run = _equal_run(a, b, i, j, min(a_hi - i, b_hi - j)) if i < a_hi and j < b_hi else 0
            i, j = i + run, j + run
            if i == a_hi or j == b_hi or (a_hi - i) + (b_hi - j) <= 2 * CONFIRM:
                self.exact(i, a_hi, j, b_hi)
                return None
            found = self.resync(i, j, a_hi, b_hi)
            if found is None:
                return i, j
            self.exact(i, found[0], j, found[1])
            i, j = found

    def split(self, a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> list[Change] | None:
        """Gaps between anchor runs, or None when the region has nothing to anchor on."""
        runs = _anchor_runs(self.a, self.b, a_lo, a_hi, b_lo, b_hi, 1)
        for width in _WINDOWS:
            if runs:
                break
            runs = _anchor_runs(self.a, self.b, a_lo, a_hi, b_lo, b_hi, width)
        if not runs:
            return None
        gaps = []
        at_a, at_b = a_lo, b_lo
        for i, j, length in runs:
            if i > at_a or j > at_b:
                gaps.append((at_a, i, at_b, j))
            at_a, at_b = i + length, j + length
        if at_a < a_hi or at_b < b_hi:
            gaps.append((at_a, a_hi, at_b, b_hi))
        return gaps

    def run(self) -> list[Change]:
        a, b = self.a, self.b
        stack = [(0, len(a), 0, len(b))]
        while stack:
            a_lo, a_hi, b_lo, b_hi = stack.pop()
            if self.work < 0:
                self.replace(a_lo, a_hi, b_lo, b_hi)
                continue
            rest = self.walk(a_lo, a_hi, b_lo, b_hi)
            if rest is None:
                continue
            a_lo, b_lo = rest
            tail = _equal_tail(a, b, a_hi, b_hi, min(a_hi - a_lo, b_hi - b_lo))
            a_hi, b_hi = a_hi - tail, b_hi - tail
            if set(a[a_lo:a_hi]).isdisjoint(b[b_lo:b_hi]):
                self.replace(a_lo, a_hi, b_lo, b_hi)  # nothing in common: a rewrite
                continue
            if self.hard_lines is not None and (a_hi - a_lo) + (b_hi - b_lo) >= self.hard_lines:
                raise HardDiff()
            gaps = self.split(a_lo, a_hi, b_lo, b_hi)
            if gaps is None:
                self.exact(a_lo, a_hi, b_lo, b_hi)
            else:
                stack.extend(reversed(gaps))
        self.changes.sort()
        return self.changes


def _backtrack(trace: list[list[int]], offset: int, n: int, m: int, a_lo: int, b_lo: int) -> list[Change]:
    moves: list[tuple[int, int, bool]] = []  # (x, y, is_insert), last move first
    x, y = n, m
    for d in range(len(trace) - 1, 0, -1):
        v = trace[d]
        k = x - y
        insert = k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1])
        prev_k = k + 1 if insert else k - 1
        prev_x = v[offset + prev_k]
        prev_y = prev_x - prev_k
        moves.append((prev_x, prev_y, insert))
        x, y = prev_x, prev_y
    changes: list[Change] = []
    for x, y, insert in reversed(moves):
        end_x, end_y = (x, y + 1) if insert else (x + 1, y)
        if changes and changes[-1][1] == a_lo + x and changes[-1][3] == b_lo + y:
            last = changes[-1]
            changes[-1] = (last[0], a_lo + end_x, last[2], b_lo + end_y)
        else:
            changes.append((a_lo + x, a_lo + end_x, b_lo + y, b_lo + end_y))
    return changes


def diff_lines(a: list[str], b: list[str], max_cost: int = MAX_EDIT_COST, work: int = WORK_BUDGET,
               hard_lines: int | None = None) -> list[Change]:
    """The regions where `a` and `b` differ, in order. With `hard_lines`, a region of that many
    lines that the walk cannot step over raises HardDiff instead of being anchored here."""
    return _Differ(a, b, max_cost, work, hard_lines).run()
