"""Glob patterns as regular expressions over `/`-separated relative paths.

`*` and `?` stay within one path segment, `**` spans segments (`a/**/b` also matches `a/b`),
`[...]` is a character class (`[!x]` negates) and `{a,b}` an alternation. Dotfiles match like any
other name: a model asking for `**/*.env` means `.env` too.
"""

from __future__ import annotations

import re

_GLOB_CHARS = set("*?[{")


def has_magic(segment: str) -> bool:
    return any(c in _GLOB_CHARS for c in segment)


def split_literal_prefix(pattern: str) -> tuple[str, str]:
    """(`src/app`, `**/*.py`) from `src/app/**/*.py`: the directories to start the walk in, and the
    part that must be matched."""
    segments = pattern.split("/")
    literal: list[str] = []
    while len(segments) > 1 and not has_magic(segments[0]):
        literal.append(segments.pop(0))
    return "/".join(literal), "/".join(segments)


def max_depth(pattern: str) -> int | None:
    """How many directory levels a pattern can reach; None when `**` makes it unbounded."""
    if "**" in pattern:
        return None
    return pattern.count("/")


def _class(pattern: str, i: int) -> tuple[str, int] | None:
    """The regex for a `[...]` starting at pattern[i], and the index after it; None if unclosed."""
    j = i + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 1
    if j >= len(pattern):
        return None
    body = pattern[i + 1 : j]
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    # escape what Python's re would read as syntax (or warn about) inside a class
    body = re.sub(r"([\\\[&~|])", r"\\\1", body)
    # a class never matches the separator, negated or not
    return ("[^/" + body + "]" if negate else "[" + body + "]"), j + 1


def _alternatives(pattern: str, i: int) -> tuple[list[str], int] | None:
    """The comma-separated parts of a `{...}` starting at pattern[i] (nesting respected)."""
    depth, j, parts, current = 0, i + 1, [], ""
    while j < len(pattern):
        c = pattern[j]
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                parts.append(current)
                return parts, j + 1
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(current)
            current = ""
            j += 1
            continue
        current += c
        j += 1
    return None


def translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i) and (i == 0 or pattern[i - 1] == "/") and i + 2 == len(pattern):
            out.append(".*")
            i += 2
        elif c == "*":
            while i < len(pattern) and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (found := _class(pattern, i)) is not None:
            out.append(found[0])
            i = found[1]
        elif c == "{" and (alts := _alternatives(pattern, i)) is not None:
            out.append("(?:" + "|".join(translate(a) for a in alts[0]) + ")")
            i = alts[1]
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def compile_glob(pattern: str) -> re.Pattern[str]:
    return re.compile(translate(pattern) + r"\Z", re.DOTALL)


def expand_braces(pattern: str) -> list[str]:
    """`*.{ts,tsx}` → [`*.ts`, `*.tsx`], for matchers (gitignore-style) that have no alternation."""
    start = pattern.find("{")
    while start != -1:
        alts = _alternatives(pattern, start)
        if alts is not None:
            head, tail = pattern[:start], pattern[alts[1] :]
            return [out for alt in alts[0] for out in expand_braces(head + alt + tail)]
        start = pattern.find("{", start + 1)
    return [pattern]
