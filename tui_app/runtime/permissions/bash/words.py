"""What a shell word can turn into, before deny rules and the working-directory check see it.

Bash expands a word in steps the rules know nothing about: `~` and `~+`, `$PWD`, braces
(`se{cret,x}`), then pathname expansion (`se*/key`, `[^x]ecret`), all relative to whatever
directory earlier `cd`s left it in. A path checked as written is not the path that is read.

So a word is resolved here, conservatively:

* `~`, `~/…` → home; `~+` and `$PWD` → every directory the line may be in; `$HOME` → home.
* Any other parameter, a substitution, `~user`, `~-` or a brace → unknown (None): a path that
  cannot be known is never auto-allowed.
* A word with live glob characters matches a *superset* of what bash would match: every glob
  segment is taken to match every entry of its directory (dotfiles too), so `[^x]ecret`,
  `s[e]cret` and `*` all reach `secret`. The word itself is kept too (bash leaves an unmatched
  pattern as it is). Over a few thousand matches the word is unknown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from tui_app.runtime.permissions.bash.parse import Word
from tui_app.runtime.permissions.path_rules import nfc

GLOB_CHARS = "*?["
MAX_MATCHES = 2000


@dataclass(frozen=True)
class Where:
    """Where a word is expanded: the directories the shell may be in, and home."""

    dirs: tuple[str, ...]
    home: str


@dataclass(frozen=True)
class Value:
    """One way a word can come out: its text, and the same text as a glob pattern (quoted
    characters escaped) when live glob characters remain."""

    text: str
    pattern: str | None = None


def _escape_glob(text: str) -> str:
    return "".join("\\" + ch if ch in GLOB_CHARS + "\\]" else ch for ch in text)


def word_values(word: Word, where: Where) -> list[Value] | None:
    """Every value the word may take after tilde and parameter expansion; None when unknown."""
    pieces = word.pieces
    if not pieces:
        return None if word.value is None else [Value(word.value)]
    heads: list[tuple[str, str, bool]] = [("", "", False)]  # (text, pattern, has live glob)
    for index, (kind, chunk) in enumerate(pieces):
        options: list[tuple[str, str, bool]]
        if kind == "raw":
            if "{" in chunk or "}" in chunk:
                return None
            if index == 0 and chunk.startswith("~"):
                prefix, sep, rest = chunk.partition("/")
                if prefix == "~":
                    bases = [where.home]
                elif prefix == "~+":
                    bases = list(where.dirs)
                else:
                    return None
                chunk_rest = sep + rest
                options = [(b + chunk_rest, _escape_glob(b) + chunk_rest, any(c in chunk_rest for c in GLOB_CHARS))
                           for b in bases]
            else:
                options = [(chunk, chunk, any(c in chunk for c in GLOB_CHARS))]
        elif kind == "lit":
            options = [(chunk, _escape_glob(chunk), False)]
        elif kind in ("var", "qvar"):
            if chunk == "PWD":
                values = list(where.dirs)
            elif chunk == "HOME":
                values = [where.home]
            else:
                return None
            if kind == "var" and any(c.isspace() or c in GLOB_CHARS for v in values for c in v):
                return None  # unquoted: split and globbed again
            options = [(v, _escape_glob(v), False) for v in values]
        else:
            return None
        heads = [(t + o, p + op, g or og) for t, p, g in heads for o, op, og in options]
    return [Value(t, p if g else None) for t, p, g in dict.fromkeys(heads)]


def word_text(word: Word) -> str | None:
    """The single value of a word in which nothing expands (quotes removed); else None."""
    if not word.pieces:
        return word.value
    out = []
    for index, (kind, chunk) in enumerate(word.pieces):
        if kind == "lit":
            out.append(chunk)
        elif kind == "raw":
            if any(c in chunk for c in GLOB_CHARS + "{}") or (index == 0 and chunk.startswith("~")):
                return None
            out.append(chunk)
        else:
            return None
    return "".join(out)


def expand_paths(word: Word, where: Where) -> list[str] | None:
    """The absolute paths a word may name (see the module docstring); None when unknown."""
    values = word_values(word, where)
    if values is None:
        return None
    found: list[str] = []
    for value in values:
        if value.text == "":
            continue
        if value.pattern is None:
            found += [_join(d, value.text) for d in _bases(value.text, where)]
            continue
        for base in _bases(value.text, where):
            matches = _superset(value.pattern, base)
            if matches is None:
                return None
            found += matches
        found += [_join(d, _unescape_glob(value.pattern)) for d in _bases(value.text, where)]
        if len(found) > MAX_MATCHES:
            return None
    return list(dict.fromkeys(found))


def glob_names(word: Word, where: Where) -> list[str] | None:
    """For a word with live glob characters: the names it may expand to, as bash would print
    them (relative when the word is); None when unknown; [] when nothing is live."""
    values = word_values(word, where)
    if values is None:
        return None
    names: list[str] = []
    for value in values:
        if value.pattern is None:
            continue
        for base in _bases(value.text, where):
            matches = _superset(value.pattern, base)
            if matches is None:
                return None
            names += [m if os.path.isabs(value.text) else os.path.relpath(m, base) for m in matches]
    return names


def _join(base: str, text: str) -> str:
    # tilde was expanded already (a quoted `~` is a name like any other)
    path = os.path.normpath(os.path.join(base, text))
    return nfc("/" + path.lstrip("/"))


def _bases(text: str, where: Where) -> tuple[str, ...]:
    return ("/",) if os.path.isabs(text) else where.dirs


def _unescape_glob(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(pattern[i + 1])
            i += 2
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


def _live(segment: str) -> bool:
    i = 0
    while i < len(segment):
        if segment[i] == "\\":
            i += 2
            continue
        if segment[i] in GLOB_CHARS:
            return True
        i += 1
    return False


def _superset(pattern: str, base: str) -> list[str] | None:
    """Every existing path a glob may reach: a live segment matches any entry."""
    absolute_pattern = pattern.startswith("/")
    current = ["/"] if absolute_pattern else [base]
    segments = [s for s in pattern.split("/") if s]
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        nxt: list[str] = []
        for directory in current:
            if not _live(segment):
                candidate = os.path.join(directory, _unescape_glob(segment))
                if last or os.path.isdir(candidate):
                    nxt.append(candidate)
                continue
            try:
                entries = os.listdir(directory)
            except (OSError, ValueError):
                continue
            for name in entries:
                candidate = os.path.join(directory, name)
                if last or os.path.isdir(candidate):
                    nxt.append(candidate)
            if len(nxt) > MAX_MATCHES:
                return None
        current = nxt
    return [_join('/', p) for p in current if os.path.lexists(p)]
