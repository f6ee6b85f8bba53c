"""What Write, Edit and MultiEdit share: the file as it is now, exact replacement, the atomic
write under the file's mutation lock, the approval diff and the result.

Files are bytes on disk and text to the model: decoded as UTF-8 with `surrogateescape`, so bytes
that are not UTF-8 pass through an edit untouched. A file whose newlines are all CRLF is matched
with LF (what the model saw through Read) and written back with CRLF.
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tui_app.runtime.contract import ApprovalPreview, RawResult, ToolContext, ToolFailure
from tui_app.runtime.files.access import FileAccess
from tui_app.runtime.files.atomic import write_in
from tui_app.runtime.files.diffing import Patch, display_safe, file_diff_display, structured_patch, unified_diff_text
from tui_app.runtime.files.opened import Identity, PathChanged, Place, walk_to
from tui_app.runtime.files.realpath import real_path
from tui_app.runtime.files.state import FileState, absolute_path, sha256_hex, stale
from tui_app.tools.opened_check import Check, opened_check

SNIPPET_MAX_LINES = 40

Operation = Literal["create", "update"]


@dataclass(frozen=True)
class Replacement:
    old_string: str
    new_string: str
    replace_all: bool = False


@dataclass(frozen=True)
class Current:
    """A file as it is now. `data` is None when there is no such file."""

    path: str
    data: bytes | None
    mode: int | None = None


@dataclass(frozen=True)
class Written:
    path: str
    operation: Operation
    old_text: str
    new_text: str
    patch: Patch


# ---- the file now --------------------------------------------------------------------------------

def read_current(path: str, access: FileAccess | None = None, check: Check | None = None) -> Current:
    """The file now: from the client that holds it (an editor over ACP) when there is one, else the
    disk, opened once in its walked directory (`opened.walk_to`) and judged by `check` on what was
    opened."""
    if access is not None:
        data = access.read(path)
        if data is not None:
            try:
                mode: int | None = os.stat(os.path.realpath(path)).st_mode
            except OSError:
                mode = None  # a buffer the editor has not saved yet
            return Current(path, data, mode)
    try:
        with walk_to(path) as place:
            return current_at(place, path, check)
    except FileNotFoundError:
        return Current(path, None)
    except OSError as exc:
        raise write_failure(path, exc) from None


def current_at(place: Place, path: str, check: Check | None) -> Current:
    """The file at a walked place: read through one descriptor, checked on that descriptor."""
    found = place.open_current()
    if found is None:
        return Current(path, None)
    data, who = found
    if who.directory:
        raise IsADirectoryError(errno.EISDIR, "is a directory", path)
    if not who.regular:
        raise ToolFailure(f"{path} is not a regular file; only regular files can be written.")
    if check is not None:
        check("edit", who)
    return Current(path, data, who.mode)


def write_failure(path: str, exc: OSError) -> ToolFailure:
    if isinstance(exc, IsADirectoryError):
        return ToolFailure(f"{path} is a directory, not a file.")
    if isinstance(exc, NotADirectoryError):
        return ToolFailure(f"A parent of {path} is not a directory.")
    if isinstance(exc, PermissionError):
        return ToolFailure(f"Permission denied: {path}")
    if isinstance(exc, PathChanged):
        return ToolFailure(f"{path} changed while it was being written (it {exc.strerror}); nothing was written. "
                           "Try again.")
    return ToolFailure(f"Cannot write {path}: {exc.strerror or exc}")


def place_for_write(path: str, check: Check | None) -> Place:
    """The walked directory a write lands in. Missing directories are made only once the place
    they would be made in has passed `check` (and the place is checked again after)."""
    try:
        return walk_to(path)
    except FileNotFoundError:
        pass
    if check is not None:
        check("edit", new_file(real_path(path)))
    return walk_to(path, make_dirs=True)


def new_file(real: str) -> Identity:
    """What a file that does not exist yet will be: a regular file with one name."""
    return Identity(real, 0, 0, 0, stat.S_IFREG)


def decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        raise ToolFailure(f"The new content is not valid Unicode text ({exc.reason} at {exc.start}).") from None


def file_access(ctx: ToolContext) -> FileAccess | None:
    return ctx.service("file_access")


def file_state(ctx: ToolContext) -> FileState:
    service = ctx.service("file_state")
    if service is None:
        raise ToolFailure("This session tracks no file reads, so files cannot be written safely.",
                          retryable=False)
    return service


def resolve_file_path(data: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Hooks, rules, the dialog and the handler all see the absolute path."""
    return {**data, "file_path": absolute_path(data["file_path"], ctx.cwd)}


# ---- exact replacement ---------------------------------------------------------------------------

def uses_crlf(text: str) -> bool:
    crlf = text.count("\r\n")
    return crlf > 0 and crlf == text.count("\n")


def _where(index: int, total: int) -> str:
    return f"Edit {index + 1} of {total}: " if total > 1 else ""


def replace_exactly(text: str, edits: Sequence[Replacement]) -> str:
    return count_replacements(text, edits)[0]


def count_replacements(text: str, edits: Sequence[Replacement]) -> tuple[str, int]:
    """Apply edits in order, each to the result of the one before; all or nothing. Returns the
    new text and how many places changed."""
    crlf = uses_crlf(text)
    replaced = 0
    work = text.replace("\r\n", "\n") if crlf else text
    for index, edit in enumerate(edits):
        where = _where(index, len(edits))
        old, new = edit.old_string, edit.new_string
        if crlf:
            old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
        if old == new:
            raise ToolFailure(f"{where}No changes to make: old_string and new_string are exactly the same.")
        if old == "":
            if work:
                raise ToolFailure(f"{where}old_string is empty, which only fills a new or empty file, and this "
                                  "file has content. Give the exact text to replace.")
            work = new
            replaced += 1
            continue
        count = work.count(old)
        if count == 0:
            raise ToolFailure(f"{where}String to replace not found in file.\nString: {edit.old_string}")
        if count > 1 and not edit.replace_all:
            raise ToolFailure(
                f"{where}Found {count} matches of the string to replace, but replace_all is false. To replace "
                "all occurrences, set replace_all to true. To replace only one occurrence, include more "
                f"surrounding context to identify the instance uniquely.\nString: {edit.old_string}",
                code="ambiguous_target")
        work = work.replace(old, new) if edit.replace_all else work.replace(old, new, 1)
        replaced += count if edit.replace_all else 1
    return (work.replace("\n", "\r\n") if crlf else work), replaced


def creates_file(edits: Sequence[Replacement]) -> bool:
    return bool(edits) and edits[0].old_string == ""


# ---- the write -----------------------------------------------------------------------------------

def check_unchanged_since_preview(fs: FileState, call_id: str, path: str, current: Current) -> None:
    previewed = fs.take_preview(call_id)
    if previewed is not None and previewed[1] != sha256_hex(current.data or b""):
        raise ToolFailure(f"File changed after the diff you approved was computed: {path}. Nothing was written. "
                          "Read it again.", code="stale_file_baseline")


async def write_file(ctx: ToolContext, path: str, transform: Callable[[Current], tuple[str, str]],
                     create_ok: bool) -> Written:
    """Under the file's lock, on a thread: walk to the file's directory once, read the bytes there,
    check what was opened (`opened_check`) and the bytes against what the model read (and against
    the approved diff), transform, write atomically in that same directory, record the new baseline."""
    fs = file_state(ctx)
    call_id = ctx.call_id
    access = file_access(ctx)
    check = opened_check(ctx)

    def work() -> Written:
        try:
            place = place_for_write(path, check)
        except OSError as exc:
            raise write_failure(path, exc) from None
        with place:
            return _write_at(place)

    def _write_at(place: Place) -> Written:
        held = access.read(path) if access is not None else None
        try:
            # a client that holds the file (an editor over ACP): its buffer is the current text
            current = current_at(place, path, check) if held is None else Current(path, held, _mode_of(path))
        except OSError as exc:
            raise write_failure(path, exc) from None
        if (current.data is None or held is not None) and check is not None:
            check("edit", new_file(place.real))
        del held
        if current.data is not None:
            fs.check(path, current.data)
        elif not create_ok:  # an edit of a file that is gone
            raise stale(path, "deleted") if fs.baseline(path) is not None else ToolFailure(
                f"File does not exist: {path}")
        check_unchanged_since_preview(fs, call_id, path, current)
        old_text, new_text = transform(current)
        exists, mode = current.data is not None, current.mode
        # the old bytes go before the new ones are made: an Edit holds at most two texts and one
        # set of bytes at a time (≤ 4× the file), and the diff looks only at what changed
        del current
        if not exists or new_text != old_text:
            data = encode(new_text)
            if access is not None and access.write(path, data):
                mtime_ns = _mtime_ns(path)
            else:
                try:
                    mtime_ns = write_in(place, data, mode)
                except OSError as exc:
                    raise write_failure(path, exc) from None
            fs.record_write(path, data, mtime_ns)
            del data
        operation: Operation = "update" if exists else "create"
        return Written(path, operation, old_text, new_text, structured_patch(old_text, new_text))

    return await fs.mutate(path, work)


def _mode_of(path: str) -> int | None:
    try:
        return os.stat(os.path.realpath(path)).st_mode
    except OSError:
        return None  # a buffer the editor has not saved yet


def _mtime_ns(path: str) -> int:
    try:
        return os.stat(os.path.realpath(path)).st_mtime_ns
    except OSError:
        return 0  # the client has not saved it


# ---- previews and results ------------------------------------------------------------------------

async def diff_preview(ctx: ToolContext, verb: str, path: str, old: Current, new_text: str) -> ApprovalPreview:
    old_text = decode(old.data)
    operation: Operation = "create" if old.data is None else "update"

    def build() -> tuple[Patch, Any]:
        patch = structured_patch(old_text, new_text)
        return patch, file_diff_display(path, old_text, new_text, operation, patch)

    patch, display = await asyncio.to_thread(build)
    file_state(ctx).remember_preview(ctx.call_id, path, sha256_hex(old.data or b""))
    summary = f"{verb} {path} (+{patch.added} -{patch.removed})"
    return ApprovalPreview(summary=summary, kind="diff", body=display_safe(unified_diff_text(path, patch, operation)),
                           display=display, risk="medium")


def lines_at(text: str, start: int, count: int) -> list[str]:
    """`text.split("\n")[start - 1:start - 1 + count]` without splitting the whole text (it can be
    a whole file of any size)."""
    at = 0
    for _ in range(start - 1):
        newline = text.find("\n", at)
        if newline < 0:
            return []
        at = newline + 1
    out: list[str] = []
    while len(out) < count:
        newline = text.find("\n", at)
        if newline < 0:
            out.append(text[at:])
            break
        out.append(text[at:newline])
        at = newline + 1
    return out


def numbered_snippet(text: str, patch: Patch) -> str:
    if not patch.hunks:
        start, count = 1, SNIPPET_MAX_LINES
    else:
        first = patch.hunks[0]
        start, count = max(1, first.new_start), max(1, first.new_lines)
    chosen = lines_at(text, start, min(count, SNIPPET_MAX_LINES))
    out = "\n".join(f"{n:>6}\t{display_safe(line)}" for n, line in enumerate(chosen, start))
    if len(patch.hunks) > 1:
        out += f"\n… and {len(patch.hunks) - 1} more changed place(s)"
    return out


def patch_json(patch: Patch) -> list[dict[str, Any]]:
    return [{"oldStart": h.old_start, "oldLines": h.old_lines, "newStart": h.new_start, "newLines": h.new_lines,
             "lines": h.lines} for h in patch.hunks]


def result_of(written: Written, text: str, output: dict[str, Any]) -> RawResult:
    display = file_diff_display(written.path, written.old_text, written.new_text, written.operation, written.patch)
    return RawResult(output=output, text=text, display=display)


def updated_text(written: Written, extra: str = "") -> str:
    if written.old_text == written.new_text:
        return f"The file {written.path} already had this content; nothing changed."
    return (f"The file {written.path} has been updated{extra}. Here's the result of running `cat -n` on a "
            f"snippet of the edited file:\n{numbered_snippet(written.new_text, written.patch)}")
