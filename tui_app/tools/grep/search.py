"""What both Grep backends (ripgrep, pure Python) share: the query, the hits, the words for
failures, and the one formatter that turns hits into text, so both give the same output."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Literal

OutputMode = Literal["content", "files_with_matches", "count"]

NO_FILES = "No files found"
NO_MATCHES = "No matches found"
GROUP_SEPARATOR = "--"
#: UTF-16 text announced by a byte-order mark is searched (transcoded), not skipped as binary
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass(frozen=True)
class GrepQuery:
    pattern: str
    #: absolute path of the directory (or the one file) to search
    root: str
    mode: OutputMode = "files_with_matches"
    globs: tuple[str, ...] = ()
    file_type: str | None = None
    ignore_case: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0


@dataclass(frozen=True)
class Line:
    number: int
    text: str
    is_match: bool


@dataclass
class FileHits:
    path: str
    #: occurrences of the pattern (count mode)
    count: int = 0
    #: matching lines and their context, in line order (content mode)
    lines: list[Line] = field(default_factory=list)


class SearchFailed(Exception):
    """A failure of the search itself (bad pattern, unknown type), worded for the model."""


def split_globs(glob: str | None) -> tuple[str, ...]:
    """`*.ts *.tsx`, `*.ts,*.tsx` and `*.{ts,tsx}` all mean two globs; commas inside braces stay."""
    if not glob:
        return ()
    out: list[str] = []
    for word in glob.split():
        depth, current = 0, ""
        for c in word:
            depth += c == "{"
            depth -= c == "}" and depth > 0
            if c == "," and depth == 0:
                out.append(current)
                current = ""
            else:
                current += c
        out.append(current)
    return tuple(g for g in out if g)


def invalid_regex_message(pattern: str, detail: str) -> str:
    return f"Invalid regular expression {pattern!r}: {detail}"


NEWLINE_MESSAGE = ("The pattern can match a line break, which only works with multiline: true "
                   "(without it, each line is searched on its own).")


def unknown_type_message(name: str) -> str:
    return f"Unknown file type: {name!r}. Use glob instead (e.g. glob: \"*.ext\")."


def strip_line_end(text: str) -> str:
    return text[:-1] if text.endswith("\r") else text


def newest_first(hits: list[FileHits]) -> list[FileHits]:
    """Most recently modified first, ties by path: the order the model sees, for both backends."""

    def key(hit: FileHits) -> tuple[int, str]:
        try:
            return -os.stat(hit.path).st_mtime_ns, hit.path
        except OSError:
            return 0, hit.path

    return sorted(hits, key=key)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


@dataclass(frozen=True)
class Formatted:
    text: str
    num_files: int
    num_lines: int = 0
    num_matches: int = 0
    filenames: list[str] = field(default_factory=list)
    limited: bool = False


def format_hits(query: GrepQuery, hits: list[FileHits], head_limit: int | None,
                line_numbers: bool = True) -> Formatted:
    ordered = newest_first([h for h in hits if h.count or h.lines or query.mode == "files_with_matches"])
    limit = head_limit or None  # 0 means no limit
    if query.mode == "files_with_matches":
        return _files(ordered, limit)
    if query.mode == "count":
        return _counts(ordered, limit)
    return _content(query, ordered, limit, line_numbers)


def _files(hits: list[FileHits], limit: int | None) -> Formatted:
    if not hits:
        return Formatted(NO_FILES, 0)
    shown = [h.path for h in hits[:limit]]
    header = f"Found {plural(len(hits), 'file')}"
    if len(shown) < len(hits):
        header += f" (showing the first {len(shown)})"
    return Formatted("\n".join([header, *shown]), len(hits), filenames=shown, limited=len(shown) < len(hits))


def _counts(hits: list[FileHits], limit: int | None) -> Formatted:
    if not hits:
        return Formatted(NO_MATCHES, 0)
    shown = hits[:limit]
    total = sum(h.count for h in hits)
    lines = [f"{h.path}:{h.count}" for h in shown]
    summary = f"Found {plural(total, 'total occurrence')} across {plural(len(hits), 'file')}."
    if len(shown) < len(hits):
        summary += f" (Showing the first {plural(len(shown), 'file')}.)"
    return Formatted("\n".join(lines) + "\n\n" + summary, len(hits), num_matches=total,
                     filenames=[h.path for h in shown], limited=len(shown) < len(hits))


def _content(query: GrepQuery, hits: list[FileHits], limit: int | None, line_numbers: bool) -> Formatted:
    records = [(h.path, line) for h in hits for line in h.lines]
    if not records:
        return Formatted(NO_MATCHES, 0)
    shown = records[:limit]
    with_context = query.before > 0 or query.after > 0
    out: list[str] = []
    previous: tuple[str, int] | None = None
    for path, line in shown:
        # a gap in the lines (or a new file) starts a new group; rg marks it with `--`
        if with_context and previous is not None and previous != (path, line.number - 1):
            out.append(GROUP_SEPARATOR)
        mark = ":" if line.is_match else "-"
        number = f"{line.number}{mark}" if line_numbers else ""
        out.append(f"{path}{mark}{number}{line.text}")
        previous = (path, line.number)
    text = "\n".join(out)
    if len(shown) < len(records):
        text += f"\n\n(Showing the first {len(shown)} of {len(records)} lines.)"
    matches = sum(1 for _, line in records if line.is_match)
    return Formatted(text, len({p for p, _ in records}), num_lines=len(shown), num_matches=matches,
                     limited=len(shown) < len(records))


# Rust's regex and Python's `re` both read `\n` as a line break; rg refuses such a pattern
# outside multiline mode, and the Python backend reports the same.
_NEWLINE_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\n")


def can_match_newline(pattern: str) -> bool:
    return "\n" in pattern or _NEWLINE_ESCAPE.search(pattern) is not None
