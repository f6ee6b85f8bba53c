"""A FileDiffDisplay turned into rows for a diff viewer. Plain Python, no Textual.

Every line keeps the number it has in the old and/or new file and the index of its text in the
old or new "source" (the lines the highlighter sees), so highlighting can run once per side, off
the UI thread, and each row just looks its highlighted line up.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Literal

from tui_app.runtime.display import FileDiffDisplay
from tui_app.runtime.files.diffing import structured_patch
from widgets.text.formatting import plural, short_path
from widgets.text.untrusted import clean

#: "file": the header of one file in a diff of several
LineKind = Literal["hunk", "context", "removed", "added", "note", "file"]
_WORD = re.compile(r"\w+|\s+|[^\w\s]")
#: word emphasis is skipped on lines longer than this (SequenceMatcher is quadratic)
MAX_WORD_DIFF_CHARS = 2000


@dataclass(slots=True)
class DiffLine:
    kind: LineKind
    text: str
    hunk: int
    old_no: int | None = None
    new_no: int | None = None
    #: index of this line's text in the old (removed) or new (context, added) source
    src: int = -1
    #: for a removed/added line that replaces another: the index (in `lines`) of its partner
    pair: int | None = None


@dataclass(frozen=True, slots=True)
class FileSection:
    """Where one file's part starts in a diff of several files."""

    path: str
    operation: str
    added: int
    removed: int
    #: index in `lines` of its header, index in `hunk_starts` of its first hunk
    header: int
    first_hunk: int
    #: where its lines start in the old and new sources (highlighted with its own language)
    old_src: int
    new_src: int


@dataclass
class DiffModel:
    path: str
    operation: str
    lines: list[DiffLine] = field(default_factory=list)
    #: index in `lines` of each hunk header
    hunk_starts: list[int] = field(default_factory=list)
    #: side-by-side rows: (left line index, right line index); a hunk header or note fills both
    split_rows: list[tuple[int | None, int | None]] = field(default_factory=list)
    old_source: list[str] = field(default_factory=list)
    new_source: list[str] = field(default_factory=list)
    added: int = 0
    removed: int = 0
    #: the largest line number shown (sizes the gutter)
    max_line_no: int = 0
    #: row index, in `split_rows`, of each hunk header
    split_hunk_rows: list[int] = field(default_factory=list)
    #: a diff of several files: each one's part (empty for one file)
    sections: list[FileSection] = field(default_factory=list)

    def section_of_hunk(self, hunk: int) -> tuple[int, FileSection] | None:
        """The file hunk number `hunk` belongs to (a file with no hunks never has the current one)."""
        found = (0, self.sections[0]) if self.sections else None
        for number, section in enumerate(self.sections):
            if section.first_hunk <= hunk:
                found = (number, section)
        return found

    def finish(self) -> DiffModel:
        """Compute what rendering asks for on every line, once."""
        self.max_line_no = max((max(line.old_no or 0, line.new_no or 0) for line in self.lines), default=0)
        starts = set(self.hunk_starts)
        self.split_hunk_rows = [i for i, (left, _) in enumerate(self.split_rows) if left in starts]
        return self


def _clean_line(text: str) -> str:
    return clean(text.rstrip("\r\n"))


#: what `clean` would change: control characters and lone surrogates (tab included: it expands)
_NEEDS_CLEANING = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _plain_line(text: str) -> str:
    return text.rstrip("\r\n")


def unified_hunks(old: str, new: str, context: int = 3) -> list[tuple[int, int, int, int, list[str]]]:
    """(old_start, old_lines, new_start, new_lines, body) for each hunk of old → new, from the
    runtime's line diff (a few ms on a 10,000-line file, where difflib took seconds)."""
    patch = structured_patch(old, new, context)
    return [(h.old_start, h.old_lines, h.new_start, h.new_lines, h.lines) for h in patch.hunks]


def build_diff(display: FileDiffDisplay, context: int = 3) -> DiffModel:
    """Rows for `display`: from the full texts when the display carries them, else from its
    (bounded) hunks, with a note saying what the card left out."""
    model = DiffModel(path=display.path, operation=display.operation)
    if display.old_text is not None or display.new_text is not None:
        hunks = unified_hunks(display.old_text or "", display.new_text or "", context)
        omitted = None
    else:
        hunks = [(h.old_start, h.old_lines, h.new_start, h.new_lines, h.lines) for h in display.hunks]
        omitted = (display.omitted_hunks, display.omitted_lines)
    for number, (old_start, old_count, new_start, new_count, body) in enumerate(hunks):
        _add_hunk(model, number, old_start, old_count, new_start, new_count, body)
    if omitted and (omitted[0] or omitted[1]):
        text = f"… {omitted[0]} more hunks, {omitted[1]} more lines not carried by this preview"
        model.split_rows.append((len(model.lines), len(model.lines)))
        model.lines.append(DiffLine("note", text, len(hunks)))
    if not hunks:
        model.split_rows.append((len(model.lines), len(model.lines)))
        model.lines.append(DiffLine("note", "(no changes)", 0))
    return model.finish()


def build_diffs(displays: list[FileDiffDisplay], context: int = 3, cwd: str | None = None) -> DiffModel:
    """One model for several files: each file's header, then its hunks; hunks are numbered
    across the files, so hunk navigation walks all of them."""
    model = DiffModel(path=displays[0].path if displays else "", operation="update")
    for display in displays:
        part = build_diff(display, context)
        header = len(model.lines)
        model.split_rows.append((header, header))
        text = f"{short_path(display.path, cwd)} ({display.operation})  +{part.added} −{part.removed}"
        model.lines.append(DiffLine("file", text, -1))
        base_line, base_hunk = len(model.lines), len(model.hunk_starts)
        base_old, base_new = len(model.old_source), len(model.new_source)
        model.sections.append(FileSection(display.path, display.operation, part.added, part.removed, header,
                                          base_hunk, base_old, base_new))
        for line in part.lines:
            src = line.src + (base_old if line.kind == "removed" else base_new) if line.src >= 0 else -1
            model.lines.append(DiffLine(line.kind, line.text, line.hunk + base_hunk if line.kind != "note" else -1,
                                        line.old_no, line.new_no, src,
                                        line.pair + base_line if line.pair is not None else None))
        model.hunk_starts += [h + base_line for h in part.hunk_starts]
        model.split_rows += [(left + base_line if left is not None else None,
                              right + base_line if right is not None else None) for left, right in part.split_rows]
        model.old_source += part.old_source
        model.new_source += part.new_source
        model.added += part.added
        model.removed += part.removed
    return model.finish()


def _add_hunk(model: DiffModel, number: int, old_start: int, old_count: int, new_start: int, new_count: int,
              body: list[str]) -> None:
    lines = model.lines
    header = f"@@ -{old_start},{old_count} +{new_start},{new_count} @@"
    model.hunk_starts.append(len(lines))
    model.split_rows.append((len(lines), len(lines)))
    lines.append(DiffLine("hunk", header, number))
    old_no, new_no = old_start, new_start
    removed_run: list[int] = []
    added_run: list[int] = []
    # one search over the hunk instead of one per line: source code rarely needs cleaning
    cleaned = _clean_line if _NEEDS_CLEANING.search("".join(body)) else _plain_line

    def flush() -> None:
        for k in range(max(len(removed_run), len(added_run))):
            left = removed_run[k] if k < len(removed_run) else None
            right = added_run[k] if k < len(added_run) else None
            if left is not None and right is not None:
                lines[left].pair = right
                lines[right].pair = left
            model.split_rows.append((left, right))
        removed_run.clear()
        added_run.clear()

    for raw in body:
        sign, text = (raw[:1], cleaned(raw[1:])) if raw else (" ", "")
        if sign == "\\":  # "\ No newline at end of file"
            continue
        if sign == "-":
            if added_run:
                flush()
            removed_run.append(len(lines))
            lines.append(DiffLine("removed", text, number, old_no=old_no, src=len(model.old_source)))
            model.old_source.append(text)
            old_no += 1
            model.removed += 1
        elif sign == "+":
            added_run.append(len(lines))
            lines.append(DiffLine("added", text, number, new_no=new_no, src=len(model.new_source)))
            model.new_source.append(text)
            new_no += 1
            model.added += 1
        else:
            flush()
            model.split_rows.append((len(lines), len(lines)))
            lines.append(DiffLine("context", text, number, old_no=old_no, new_no=new_no, src=len(model.new_source)))
            model.old_source.append(text)
            model.new_source.append(text)
            old_no += 1
            new_no += 1
    flush()
    # keep the two sources aligned hunk by hunk, so a construct cut by a hunk boundary cannot
    # colour the next hunk's first lines
    model.old_source.append("")
    model.new_source.append("")


def changed_spans(old: str, new: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character ranges that differ between a removed line and the added line replacing it,
    compared word by word."""
    if len(old) > MAX_WORD_DIFF_CHARS or len(new) > MAX_WORD_DIFF_CHARS:
        return [], []
    a, b = _WORD.findall(old), _WORD.findall(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    same = sum(len(t) for block in matcher.get_matching_blocks()
               for t in a[block.a: block.a + block.size] if not t.isspace())
    if same < 0.3 * max(len(old.strip()), len(new.strip()), 1):
        # mostly rewritten: emphasising every word would only add noise
        return [], []
    a_pos = _positions(a)
    b_pos = _positions(b)
    old_spans: list[tuple[int, int]] = []
    new_spans: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old_spans.append((a_pos[i1], a_pos[i2]))
        if j2 > j1:
            new_spans.append((b_pos[j1], b_pos[j2]))
    return old_spans, new_spans


def _positions(tokens: list[str]) -> list[int]:
    positions = [0]
    for token in tokens:
        positions.append(positions[-1] + len(token))
    return positions


def describe_change(added: int, removed: int, operation: str = "update") -> str:
    if operation == "create":
        return f"new file, {plural(added, 'line')}"
    if operation == "delete":
        return f"file deleted, {plural(removed, 'line')}"
    if added == removed and added:
        return f"{plural(added, 'line')} replaced"
    parts = []
    if added:
        parts.append(f"{plural(added, 'line')} added")
    if removed:
        parts.append(f"{plural(removed, 'line')} removed")
    return ", ".join(parts) or "no changes"
