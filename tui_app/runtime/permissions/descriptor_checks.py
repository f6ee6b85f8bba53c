"""The second look a file tool takes, at what it really opened (docs/architecture.md, one open per
access).

The decision was made on a path's spellings (the link, the real target). The tool then opens the
file once and asks the kernel what it got: the real path of the descriptor, its device, inode and
link count. That is what these checks judge:

* a Read deny rule (Edit's too, for a write) on the real path refuses, whatever the decision said;
* a regular file with more than one name (a hard link) is refused when its inode is that of a
  file a Read deny rule covers (or, for a write, of a protected file), and when the files the
  rules cover could not all be looked at (fail closed);
* a real path the decision never saw (a link flipped in between) must pass on its own, with no
  question: inside the working directories, no ask rule, and for a write not protected and
  allowed by a rule or by acceptEdits. Otherwise the tool refuses; the model may try again and
  then the new target is what gets decided.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tui_app.runtime.permissions.path_rules import PathPattern, literal_prefix, nfc
from tui_app.runtime.permissions.rule_checks import READERS

if TYPE_CHECKING:
    from tui_app.runtime.files.opened import Identity
    from tui_app.runtime.permissions.rule_checks import RuleView

#: entries looked at to find the inodes of the files Read deny rules cover (past it: fail closed)
HARD_LINK_WALK_LIMIT = 20_000


def opened_refusal(view: RuleView, tool: str, kind: str, who: Identity, checked: tuple[str, ...] | None
                   ) -> str | None:
    real = nfc(who.real)
    if not real:
        return "the file has no path any more (it was deleted or moved while the call ran)"
    paths = (real,)
    writes = kind == "edit"
    names = frozenset({tool, "Edit"}) if writes else frozenset({tool}) | READERS
    deny = view.path_hit("deny", names, paths) or view.path_hit("deny", READERS, paths)
    if deny is not None:
        return f"{real} is denied by the rule {deny.text} ({deny.source})"
    if who.regular and who.links > 1:
        reason = hard_link_refusal(view, writes, who)
        if reason is not None:
            return reason
    if checked is None or real in checked or view.mode == "bypassPermissions":
        return None
    # a real path the decision never saw: it must pass on its own, without a question
    ask = view.path_hit("ask", names, paths)
    if ask is not None:
        return f"{real} must be confirmed (rule {ask.text}), and the call was not decided for it"
    if not writes:
        if view.dirs.may_read(paths) or view.path_allowed(names, paths) is not None:
            return None
        return f"{real} is outside the working directories ({view.dirs.describe()})"
    if view.protects(paths):
        return f"{real} is a protected path"
    if view.path_allowed(names, paths) is not None:
        return None
    if view.accepts_edit(paths):
        return None
    if not view.dirs.contains(paths):
        return f"{real} is outside the working directories ({view.dirs.describe()})"
    return f"writing {real} was never approved"


def hard_link_refusal(view: RuleView, writes: bool, who: Identity) -> str | None:
    key = (who.device, who.inode)
    what = f"{who.real} has {who.links} names (hard links)"
    if writes and key in _inodes(view.protected):
        return f"{what}, and one of them is a protected file"
    patterns = [view.pattern(rule) for rule in view.of("deny", READERS)]
    if not patterns:
        return None
    denied = denied_inodes(patterns)
    if denied is None:
        return f"{what}, and the files Read deny rules cover are too many to check against it"
    if key in denied:
        return f"{what}, and one of them is a file a Read deny rule covers"
    return None


def _inodes(paths: frozenset[str] | set[str]) -> set[tuple[int, int]]:
    found = set()
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue
        found.add((info.st_dev, info.st_ino))
    return found


def denied_inodes(patterns: list[PathPattern], limit: int | None = None) -> set[tuple[int, int]] | None:
    """(device, inode) of every file the patterns cover; None when more than `limit` entries
    (HARD_LINK_WALK_LIMIT) would have to be looked at."""
    roots: list[str] = []
    found: set[tuple[int, int]] = set()
    for pattern in patterns:
        prefix = literal_prefix(pattern.pattern)
        if not prefix.endswith("/"):  # a literal path: that file itself (a directory is walked too)
            found |= _inodes({prefix})
        roots.append(prefix.rstrip("/") or "/")
    budget = [HARD_LINK_WALK_LIMIT if limit is None else limit]
    for root in _outermost(roots):
        if not _walk(root, patterns, found, budget):
            return None
    return found


def _outermost(roots: list[str]) -> list[str]:
    """Each directory once: one below another is walked with it."""
    kept: list[str] = []
    for root in sorted(set(roots), key=len):
        if not any(root.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(root)
    return kept


def _walk(root: str, patterns: list[PathPattern], found: set[tuple[int, int]], budget: list[int]) -> bool:
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            entries = []  # not there, not a directory, unreadable: nothing in it is read through a link
        budget[0] -= len(entries)
        if budget[0] < 0:
            return False
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif any(p.matches(nfc(entry.path)) for p in patterns):
                    info = entry.stat(follow_symlinks=True)
                    found.add((info.st_dev, info.st_ino))
            except OSError:
                pass  # gone meanwhile, or a dangling link: no file to be linked to
    return True
