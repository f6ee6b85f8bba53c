"""Fuzzy matching of what follows an `@` against every path of a project, fast enough for a
keystroke on 100k files (bench/mention_picker.py).

The paths are joined into one string, and the scan over every path runs in C (a literal search,
then a possessive regular expression): a file whose name starts with the query beats one whose
name contains it, which beats a path that contains it, which beats a path that has its letters
in order. Within a tier, shorter paths come first. Case is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_RESULTS = 50


@dataclass(frozen=True)
class PathMatch:
    path: str
    #: positions of the matched characters in `path` (for highlighting)
    positions: tuple[int, ...]


class PathIndex:
    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self._blob = "\n".join(paths) + "\n"
        self._lower = self._blob.lower()
        self._by_depth: list[str] | None = None

    def __len__(self) -> int:
        return len(self.paths)

    def search(self, query: str, limit: int = MAX_RESULTS) -> list[PathMatch]:
        query = query.lower().replace("\n", "")
        if not query:
            return [PathMatch(p, ()) for p in self._shallow()[:limit]]
        ranked = self._containing(query)
        if len(ranked) < limit:
            seen = {span for _, _, span in ranked}
            fuzzy = [(3, end - start, (start, end)) for m in _in_order(query).finditer(self._lower)
                     if (start := m.start(), end := m.end()) and (start, end) not in seen]
            fuzzy.sort()
            ranked += fuzzy[:limit - len(ranked)]
        paths = (self._blob[start:end] for _, _, (start, end) in ranked)
        if query.endswith("/"):  # a directory typed whole: what is in it, not itself
            paths = (path for path in paths if path.lower() != query)
        return [PathMatch(path, _positions(path, query)) for _, path in zip(range(limit), paths, strict=False)]

    def _containing(self, query: str) -> list[tuple[int, int, tuple[int, int]]]:
        """Every path that contains `query`, ranked: (tier, length, span). The literal search
        runs in C; Python only visits the lines it found."""
        lower = self._lower
        find, rfind = lower.find, lower.rfind
        ranked = []
        at = find(query)
        while at >= 0:
            start = rfind("\n", 0, at) + 1
            end = find("\n", at)
            line = lower[start:end]
            name_at = line.rstrip("/").rfind("/") + 1
            in_name = line.find(query, name_at)
            tier = 0 if in_name == name_at else 1 if in_name > 0 else 2
            ranked.append((tier, end - start, (start, end)))
            at = find(query, end)
        ranked.sort()
        return ranked

    def _shallow(self) -> list[str]:
        """With nothing typed yet: the top of the tree first."""
        if self._by_depth is None:
            self._by_depth = sorted(self.paths, key=lambda p: (p.rstrip("/").count("/"), len(p), p))
        return self._by_depth


def _in_order(query: str) -> re.Pattern[str]:
    """Lines with the query's letters in order: each letter taken at its first occurrence after
    the previous one (possessive, so no line is ever backtracked over)."""
    steps = "".join(f"[^{re.escape(ch)}\\n]*+{re.escape(ch)}" for ch in query)
    return re.compile(f"(?m)^{steps}[^\\n]*")


def _positions(path: str, query: str) -> tuple[int, ...]:
    lower = path.lower()
    name_at = lower.rstrip("/").rfind("/") + 1
    at = lower.find(query, name_at)
    if at < 0:
        at = lower.rfind(query)
    if at >= 0:
        return tuple(range(at, at + len(query)))
    positions: list[int] = []
    start = 0
    for ch in query:
        start = lower.find(ch, start)
        if start < 0:
            return tuple(positions)
        positions.append(start)
        start += 1
    return tuple(positions)
