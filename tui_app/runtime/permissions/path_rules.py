"""Paths as permission rules see them: normalised spellings, gitignore-style patterns, protected
paths and working directories.

A path is checked in every spelling that names the same file: the absolute path (with `~`
expanded, NFC, and each `..` taken after the symlinks before it, as the kernel takes it: never a
lexical normalisation) and, when a symlink is on the way, the real target. A deny that
matches either spelling denies; an allow must match both. `Read(./.env)` therefore also stops
`sub/../.env`, `./link-to-env` and the decomposed-accent spelling of a name.

Rule anchors (Claude Code's): `//path` filesystem root, `~/path` home, `/path` the settings
file's base (the project root for project files), `path` or `./path` the working directory. A
pattern with no slash (`.env`, `*.pem`) matches at any depth below the working directory.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from tui_app.runtime.files.realpath import kernel_absolute, real_path

if TYPE_CHECKING:
    import pathspec

PROTECTED_DIRS = frozenset({".git", ".vigil", ".claude"})
PROTECTED_FILES = frozenset({
    ".mcp.json", ".gitconfig", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
    ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc",
})
_GLOB_CHARS = "\\[]*?!#"


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _lexical(raw: str, cwd: str, home: str | None) -> str:
    path = raw
    if path == "~" or path.startswith("~/"):
        path = (home or os.path.expanduser("~")) + path[1:]
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    path = kernel_absolute(path)  # `link/..` is the link target's parent, as for the kernel
    return "/" + path.lstrip("/")  # POSIX keeps a leading "//"; it names the same root


def spellings(raw: str, cwd: str, home: str | None = None) -> tuple[str, ...]:
    """The link spelling, then the real target when a symlink makes them differ."""
    lexical = _lexical(raw, cwd, home)
    try:
        # resolved from the name as given: on disk a name may be stored decomposed (NFD)
        target = nfc(real_path(lexical))
    except (OSError, ValueError):
        target = nfc(lexical)
    link = nfc(lexical)
    return (link,) if target == link else (link, target)


def is_protected(path: str) -> bool:
    parts = path.split("/")
    if any(part in PROTECTED_DIRS for part in parts[:-1]):
        return True
    return parts[-1] in PROTECTED_FILES or parts[-1] in PROTECTED_DIRS


def literal_prefix(pattern: str) -> str:
    """The directory part of an anchored pattern before its first wildcard, unescaped
    (`/p/secret/**` → `/p/secret/`, `/p/**/.env` → `/p/`)."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(pattern[i + 1])
            i += 2
            continue
        if ch in "*?[":
            break
        out.append(ch)
        i += 1
    text = "".join(out)
    return text if i >= len(pattern) else text[: text.rfind("/") + 1]


def _escape(text: str) -> str:
    return "".join("\\" + ch if ch in _GLOB_CHARS else ch for ch in text)


def anchored_pattern(specifier: str, base_dir: str, cwd: str, home: str) -> str:
    """The rule's pattern as one gitignore line anchored at the filesystem root."""
    spec = nfc(specifier)
    if spec.startswith("//"):
        prefix, rest = "/", spec[2:]
    elif spec == "~" or spec.startswith("~/"):
        prefix, rest = home, spec[2:]
    elif spec.startswith("/"):
        prefix, rest = base_dir, spec[1:]
    else:
        rest = spec[2:] if spec.startswith("./") else spec
        if "/" not in spec.rstrip("/"):
            # a bare name matches at any depth (`./name` is anchored); as in git, `**.env` with no
            # slash is `*.env`, a bare name too
            rest = "**/" + rest
        prefix = cwd
    prefix = prefix.rstrip("/")
    head = "/" + _escape(prefix.lstrip("/")) if prefix else ""
    return f"{head}/{rest}" if rest else (head or "/**")


def pattern_error(specifier: str) -> str | None:
    """Why a Read/Edit specifier is no gitignore pattern (a lone trailing backslash), or None.
    Checked when the rule is made: such a rule would fail every decision it is asked about."""
    try:
        _compiled(anchored_pattern(specifier, "/", "/", "/"))
    except ValueError as exc:
        return f"not a gitignore pattern ({exc})"
    return None


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> pathspec.PathSpec:
    import pathspec  # with the first path rule matched: a session without one never loads it

    return pathspec.PathSpec.from_lines("gitignore", [pattern])


@dataclass(frozen=True)
class PathPattern:
    """One Read/Edit specifier, resolved against the directories it is relative to."""

    specifier: str
    base_dir: str
    cwd: str
    home: str

    @property
    def pattern(self) -> str:
        return anchored_pattern(self.specifier, self.base_dir, self.cwd, self.home)

    def matches(self, path: str) -> bool:
        """`path` is absolute and normalised. A directory also matches a pattern for its contents
        when given with a trailing slash (Grep over `secrets/` against `Read(./secrets/**)`)."""
        relative = path.lstrip("/")
        if not relative:
            return False
        spec = _compiled(self.pattern)
        return spec.match_file(relative) or (os.path.isdir(path) and spec.match_file(relative + "/"))


def rule_path(path: str, base_dir: str) -> str:
    """The exact rule specifier for one path: `/rel` inside the base, `//abs` outside."""
    escaped = _escape(path)
    base = base_dir.rstrip("/")
    if base and path.startswith(base + "/"):
        return _escape(path[len(base):])
    return "/" + escaped
