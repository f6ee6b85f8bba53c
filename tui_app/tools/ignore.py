"""gitignore-style rule sets, matched the way ripgrep matches them.

A pattern matches an entry itself, never through one of its parent directories: `build/` in a
.gitignore ignores the directory `build`, which the walk then never enters, but a search started
*inside* build (an explicit path) still sees its files. pathspec's patterns would also match
`build/x.txt`; the `ps_d` group they carry tells the two cases apart.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    #: True: the pattern ignores; False: a `!` pattern, which re-includes
    ignores: bool
    #: patterns that end in a directory mark (`ps_d`) must match the whole entry
    whole_entry: bool


def _compile(line: str) -> _Rule | None:
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern  # with the first .gitignore read

    pattern = GitIgnoreSpecPattern(line)
    if pattern.include is None or pattern.regex is None:
        return None  # blank line or comment
    regex = pattern.regex
    if "ps_d" in regex.groupindex:
        return _Rule(re.compile(f"(?:{regex.pattern})\\Z", regex.flags), pattern.include, True)
    return _Rule(regex, pattern.include, False)


class RuleSet:
    """The rules of one ignore file (or one list of globs), relative to the directory `base`."""

    def __init__(self, base: str, lines: Iterable[str]) -> None:
        self.base = base
        self.rules = [rule for line in lines if (rule := _compile(line.rstrip("\r\n"))) is not None]

    @classmethod
    def from_file(cls, path: str) -> RuleSet | None:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return cls(os.path.dirname(path), f.read().splitlines())
        except OSError:
            return None

    @property
    def has_whitelist(self) -> bool:
        return any(not rule.ignores for rule in self.rules)

    def match(self, path: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a `!` rule; None: no rule says anything.
        The last matching rule wins, as in git."""
        rel = os.path.relpath(path, self.base).replace(os.sep, "/")
        if rel.startswith("../") or rel == "..":
            return None
        for rule in reversed(self.rules):
            subject = rel + "/" if rule.whole_entry and is_dir else rel
            if rule.regex.search(subject) is not None:
                return rule.ignores
        return None
