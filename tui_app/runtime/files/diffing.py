"""Line diffs: the structured patch of an Edit or Write, for the result card, the diff view and
the approval dialog (which waits on it, so it has to be fast: see `line_diff` for how).

Lines are split on "\\n" only and keep it. Hunks follow the unified format: body lines start
with ' ', '-' or '+' and drop their line ending; a line with no final newline is followed by
`\\ No newline at end of file`, so applying the hunks to the old text gives the new text byte for
byte (`apply_hunks`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from tui_app.runtime.display import DiffHunk, FileDiffDisplay
from tui_app.runtime.files.git_diff import HARD_LINES, git_changes, git_program
from tui_app.runtime.files.line_diff import Change, HardDiff, diff_lines

CONTEXT_LINES = 3
CARD_MAX_HUNKS = 8
CARD_MAX_LINES = 160
#: old_text / new_text ride along for the full viewer only below this size (UTF-8 bytes)
VIEWER_TEXT_LIMIT = 2_000_000
NO_NEWLINE = "\\ No newline at end of file"


# ---- lines ---------------------------------------------------------------------------------------

def split_lines(text: str) -> list[str]:
    """Lines split on "\\n" only, each keeping it (the last one may have none). Unlike
    `str.splitlines`, a form feed or U+2028 inside a line does not split it."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


# ---- hunks ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Patch:
    hunks: list[DiffHunk]
    added: int
    removed: int

    @property
    def body_lines(self) -> int:
        return sum(len(h.lines) for h in self.hunks)


def _bodies(prefix: str, lines: list[str]) -> list[str]:
    """Body lines of a run of lines (only the very last line of a text can lack its newline)."""
    if not lines:
        return []
    if lines[-1].endswith("\n"):
        return [prefix + line[:-1] for line in lines]
    return [*(prefix + line[:-1] for line in lines[:-1]), prefix + lines[-1], NO_NEWLINE]


def _range_start(start: int, length: int) -> int:
    # unified format: an empty range names the line *before* it (0 at the top of the file)
    return start + 1 if length else start


def hunks_of(a: list[str], b: list[str], changes: list[Change], context: int = CONTEXT_LINES) -> list[DiffHunk]:
    hunks: list[DiffHunk] = []
    group: list[Change] = []

    def close() -> None:
        first, last = group[0], group[-1]
        lead = min(context, first[0])
        a_start, b_start = first[0] - lead, first[2] - lead
        trail = min(context, len(a) - last[1])
        a_end, b_end = last[1] + trail, last[3] + trail
        lines: list[str] = []
        at = a_start
        for a_lo, a_hi, b_lo, b_hi in group:
            lines += _bodies(" ", a[at:a_lo])
            lines += _bodies("-", a[a_lo:a_hi])
            lines += _bodies("+", b[b_lo:b_hi])
            at = a_hi
        lines += _bodies(" ", a[at:a_end])
        hunks.append(DiffHunk(old_start=_range_start(a_start, a_end - a_start), old_lines=a_end - a_start,
                              new_start=_range_start(b_start, b_end - b_start), new_lines=b_end - b_start,
                              lines=lines))

    for change in changes:
        if group and change[0] - group[-1][1] > 2 * context:
            close()
            group = []
        group.append(change)
    if group:
        close()
    return hunks


def _changes(old: str, new: str, a: list[str], b: list[str]) -> list[Change]:
    if git_program() is not None:
        # the usual edit (a few changed places, or a rewrite) is quicker here than a process; a
        # big region of moved, shuffled or re-indented lines goes to git, at C speed
        try:
            return diff_lines(a, b, hard_lines=HARD_LINES)
        except HardDiff:
            changes = git_changes(old, new)
            if changes is not None:
                return changes
    return diff_lines(a, b)


def structured_patch(old: str, new: str, context: int = CONTEXT_LINES) -> Patch:
    """The line diff of two texts. Only the lines between the first and the last difference (and
    their context) are split and diffed: an edit of one line in a 50 MB file costs a few
    comparisons of its text, not a list of a million lines for each side. Where repeated lines
    let the line diff place a change nearer an edge of that region than its context (the text's
    ends and the lines' alignment need not agree), the region grows and the diff is redone."""
    margin = context
    while True:
        start, old_end, new_end = differing_region(old, new, margin)
        a, b = split_lines(old[start:old_end]), split_lines(new[start:new_end])
        changes = _changes(old[start:old_end], new[start:new_end], a, b)
        cramped_top = start > 0 and changes and changes[0][0] < context
        cramped_end = old_end < len(old) and changes and len(a) - changes[-1][1] < context
        if not (cramped_top or cramped_end):
            break
        margin *= 4
    offset = old.count("\n", 0, start)
    removed = sum(c[1] - c[0] for c in changes)
    added = sum(c[3] - c[2] for c in changes)
    hunks = hunks_of(a, b, changes, context)
    if offset:
        hunks = [h.model_copy(update={"old_start": h.old_start + offset, "new_start": h.new_start + offset})
                 for h in hunks]
    return Patch(hunks, added=added, removed=removed)


#: how much text one comparison looks at while measuring the common ends
_CHUNK = 1 << 16


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters `a` and `b` share: compared a chunk at a time (C speed, small
    copies), halving the chunk to find the first difference."""
    limit = min(len(a), len(b))
    at, step = 0, _CHUNK
    while at < limit:
        size = min(step, limit - at)
        if a[at:at + size] == b[at:at + size]:
            at += size
        elif size == 1:
            return at
        else:
            step = size // 2
    return limit


def _common_suffix(a: str, b: str, limit: int) -> int:
    """How many trailing characters `a` and `b` share (at most `limit`)."""
    done, step = 0, _CHUNK
    la, lb = len(a), len(b)
    while done < limit:
        size = min(step, limit - done)
        if a[la - done - size:la - done] == b[lb - done - size:lb - done]:
            done += size
        elif size == 1:
            return done
        else:
            step = size // 2
    return limit


def differing_region(old: str, new: str, context: int = CONTEXT_LINES) -> tuple[int, int, int]:
    """(start, old_end, new_end): whole lines, from `context` lines before the first difference to
    `context` lines after the last one; the text before `start` and after the ends is the same in
    both (the ends are the same distance from each text's end)."""
    if old == new:
        return 0, 0, 0
    prefix = _common_prefix(old, new)
    start = old.rfind("\n", 0, prefix) + 1  # the start of the first line that differs
    suffix = _common_suffix(old, new, min(len(old), len(new)) - start)
    # out to a line end inside the common tail, so it ends a line in both texts alike
    newline = old.find("\n", len(old) - suffix)
    tail = len(old) if newline < 0 else newline + 1
    for _ in range(context):
        if tail >= len(old):
            break
        newline = old.find("\n", tail)
        tail = len(old) if newline < 0 else newline + 1
    for _ in range(context):
        if start == 0:
            break
        start = old.rfind("\n", 0, start - 1) + 1
    return start, tail, len(new) - (len(old) - tail)


def unified_diff_text(path: str, patch: Patch, operation: str = "update") -> str:
    """The whole patch as unified-diff text (what the approval dialog shows, scrollable)."""
    old_name = "/dev/null" if operation == "create" else f"a{path}" if path.startswith("/") else f"a/{path}"
    new_name = "/dev/null" if operation == "delete" else f"b{path}" if path.startswith("/") else f"b/{path}"
    out = [f"--- {old_name}", f"+++ {new_name}"]
    for hunk in patch.hunks:
        out.append(f"@@ -{hunk.old_start},{hunk.old_lines} +{hunk.new_start},{hunk.new_lines} @@")
        out.extend(hunk.lines)
    return "\n".join(out) + "\n"


def apply_hunks(old: str, hunks: Sequence[DiffHunk]) -> str:
    """Apply complete hunks to `old` (strictly: every context and removed line must match)."""
    a = split_lines(old)
    out: list[str] = []
    at = 0
    for hunk in hunks:
        start = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        if start < at:
            raise ValueError("hunks overlap or are out of order")
        out.extend(a[at:start])
        at = start
        for index, line in enumerate(hunk.lines):
            if line == NO_NEWLINE:
                continue
            ends = not (index + 1 < len(hunk.lines) and hunk.lines[index + 1] == NO_NEWLINE)
            text = line[1:] + ("\n" if ends else "")
            if line[0] in " -":
                if at >= len(a) or a[at] != text:
                    raise ValueError(f"hunk does not apply at old line {at + 1}")
                at += 1
            if line[0] in " +":
                out.append(text)
    out.extend(a[at:])
    return "".join(out)


# ---- the screen's card ---------------------------------------------------------------------------

def _viewer_text(text: str) -> str | None:
    if len(text) > VIEWER_TEXT_LIMIT or len(text.encode("utf-8", "surrogatepass")) > VIEWER_TEXT_LIMIT:
        return None
    return text


_SURROGATE = re.compile("[\ud800-\udfff]")


def display_safe(text: str) -> str:
    """Text decoded with `surrogateescape` (bytes that are not UTF-8) made JSON-safe for events.
    Looked at without a copy: the text can be a whole file."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def bound_card(hunks: list[DiffHunk], max_hunks: int = CARD_MAX_HUNKS,
               max_lines: int = CARD_MAX_LINES) -> tuple[list[DiffHunk], int, int]:
    """At most `max_hunks` hunks and `max_lines` body lines; the last hunk kept may be cut (its
    header still gives the full hunk's ranges). Returns (kept, hunks not shown at all, body lines
    not shown, the cut part included)."""
    kept: list[DiffHunk] = []
    room = max_lines
    for hunk in hunks[:max_hunks]:
        if room <= 0:
            break
        if len(hunk.lines) <= room:
            kept.append(hunk)
            room -= len(hunk.lines)
        else:
            kept.append(hunk.model_copy(update={"lines": hunk.lines[:room]}))
            room = 0
    total_lines = sum(len(h.lines) for h in hunks)
    shown_lines = sum(len(h.lines) for h in kept)
    return kept, len(hunks) - len(kept), total_lines - shown_lines


def file_diff_display(path: str, old: str, new: str,
                      operation: Literal["create", "update", "delete"] = "update",
                      patch: Patch | None = None) -> FileDiffDisplay:
    safe_old, safe_new = display_safe(old), display_safe(new)
    if patch is None or safe_old is not old or safe_new is not new:
        patch = structured_patch(safe_old, safe_new)  # hunks must be JSON-safe too
    old, new = safe_old, safe_new
    kept, omitted_hunks, omitted_lines = bound_card(patch.hunks)
    return FileDiffDisplay(
        path=display_safe(path), operation=operation, hunks=kept, added=patch.added, removed=patch.removed,
        omitted_hunks=omitted_hunks, omitted_lines=omitted_lines,
        old_text=_viewer_text(old), new_text=_viewer_text(new),
    )
