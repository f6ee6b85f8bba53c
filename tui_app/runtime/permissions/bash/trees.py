"""What a directory operand holds, for the Read deny rules: a directory read, copied, archived or
moved is every file below it read (`cat dir`, `tar c dir`, `cp -r dir x`, `mv dir x`).

    found = look_under(path, denied)   # Tree: the first denied path, a hard-linked file, complete?

The walk is bounded (`MAX_ENTRIES`): a tree too big to look through is reported as incomplete, and
the caller asks (fail closed). A `.git` folder is checked itself but not walked (what git stores is
for the git guard). Symbolic links inside are checked by their target as well (`cp -rL`
follows them) and a linked directory is looked through too. A regular file with more than one
name (a hard link) may be a denied file under another name: it is reported, since no path rule
can see it.
See docs/architecture.md §12.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass

MAX_ENTRIES = 5_000


@dataclass(frozen=True)
class Tree:
    #: the first path below (or at) the root that a deny rule covers
    denied: str | None = None
    #: the first regular file with other names (hard links)
    linked: str | None = None
    #: every entry was looked at
    complete: bool = True


def look_under(root: str, denied: Callable[[str], bool], limit: int | None = None) -> Tree:
    """Walk `root` (a directory, or a file: then only itself) without following links, except to
    check where each link points; at most `limit` entries (MAX_ENTRIES)."""
    limit = MAX_ENTRIES if limit is None else limit
    first_denied: str | None = None
    linked: str | None = None
    seen: set[tuple[int, int]] = set()
    stack = [root]
    count = 0
    while stack:
        directory = stack.pop()
        try:
            info = os.stat(directory)
        except OSError:
            continue
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            count += 1
            if count > limit:
                return Tree(first_denied, linked, complete=False)
            path = entry.path
            try:
                is_link = entry.is_symlink()
                target = os.path.realpath(path) if is_link else path
                if denied(path) or (is_link and denied(target)):
                    first_denied = first_denied or path
                    continue  # what is below a denied path is denied too
                if is_link:
                    if os.path.isdir(target):
                        stack.append(target)
                    continue
                mode = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(mode.st_mode):
                if entry.name != ".git":  # git's own store: what it holds is git's to show (and guarded)
                    stack.append(path)
            elif stat.S_ISREG(mode.st_mode) and mode.st_nlink > 1 and linked is None:
                linked = path
    return Tree(first_denied, linked)


def has_other_names(path: str) -> bool:
    """A regular file with more than one hard link."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink > 1
