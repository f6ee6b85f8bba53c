"""Read: a text file as numbered lines (`{n:>6}\\t{line}`), a window of at most 2000 lines.

The file is opened once and what was opened is checked (`opened_check`), then read from that
descriptor. It is streamed: showing 2000 lines of a 2 GB log costs 2000 lines of memory. A read that
returned the whole file reports a baseline to the file-state service, which is what later lets
Edit and Write check that the model saw the current content.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import io
import os
import stat
from dataclasses import dataclass
from typing import BinaryIO

from pydantic import Field

from tui_app.runtime.contract import (
    PermissionSpec,
    RawResult,
    StrictInput,
    TimeoutPolicy,
    ToolContext,
    ToolFailure,
    ToolSpec,
)
from tui_app.runtime.files.access import FileAccess
from tui_app.runtime.files.opened import OpenedFile
from tui_app.runtime.results import budgets
from tui_app.tools.common import (
    BINARY_SNIFF_BYTES,
    READ_ONLY_FLAGS,
    has_binary_extension,
    is_binary,
    missing_path_message,
    resolve_file_path_input,
    resolve_path,
    text_display,
)
from tui_app.tools.opened_check import Check, opened_check

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
LINE_CUT_MARKER = f" … [line cut at {MAX_LINE_CHARS} characters]"
# A line is read in pieces of this size. 4 bytes per character at most, so a line longer than
# this always has more than MAX_LINE_CHARS characters and is cut anyway: the rest is skipped.
LINE_READ_BYTES = 16384
# Counting the lines after the window is cheap per byte but not free; past this many bytes the
# total is reported as unknown rather than risking the timeout on a huge file.
COUNT_CAP_BYTES = 512 * 1024 * 1024
#: a regular file up to this size is read on the runtime's loop: a hop to a worker thread and back
#: cost more than reading it (larger files, or ones whose size cannot be known, still go to a thread)
INLINE_READ_BYTES = 256 * 1024

DESCRIPTION = """Reads a text file from the local filesystem.

- file_path should be an absolute path; a relative path is resolved against the working directory.
- By default up to 2000 lines are returned, starting at the first line. For long files, pass
  offset (1-based line number) and limit to read the file in parts.
- Lines longer than 2000 characters are cut.
- Output lines are numbered like `cat -n`: the line number, a tab, then the line's content.
- Directories cannot be read; use Glob (or `ls` through Bash) to list them. Binary files are refused.
- Read a file in full before editing it."""


class ReadInput(StrictInput):
    file_path: str = Field(
        description="The absolute path of the file to read (a relative path is resolved against the working "
                    "directory).")
    offset: int | None = Field(
        default=None, ge=0,
        description="The 1-based line number to start reading from. Only needed for files too long to read at "
                    "once.")
    limit: int | None = Field(
        default=None, ge=1,
        description=f"The number of lines to read (default {DEFAULT_LIMIT}). Only needed for files too long to "
                    "read at once.")


@dataclass(frozen=True)
class Window:
    """What one streaming pass over the file saw."""

    lines: list[str]
    start: int
    #: lines in the file; None when the count stopped at COUNT_CAP_BYTES
    total: int | None
    sha256: str
    bytes_read: int
    mtime_ns: int

    @property
    def end(self) -> int:
        return self.start + len(self.lines) - 1

    @property
    def reached_eof(self) -> bool:
        return self.total is not None and self.end >= self.total

    @property
    def full(self) -> bool:
        return self.start == 1 and self.reached_eof


class _Stream:
    """A binary file read line by line, hashing and counting every byte it consumes."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.hasher = hashlib.sha256()
        self.bytes_read = 0

    def _take(self, data: bytes) -> bytes:
        self.hasher.update(data)
        self.bytes_read += len(data)
        return data

    def next_line(self) -> bytes | None:
        """The next line without its newline (only its head when it is very long); None at EOF."""
        head = self._take(self.f.readline(LINE_READ_BYTES))
        if not head:
            return None
        if head.endswith(b"\n"):
            return head[:-1]
        if len(head) == LINE_READ_BYTES:
            while more := self._take(self.f.readline(1 << 20)):
                if more.endswith(b"\n"):
                    break
        return head

    def count_rest(self) -> int | None:
        """Lines from here to EOF, or None if that is more than COUNT_CAP_BYTES away."""
        lines, last, budget = 0, b"\n", COUNT_CAP_BYTES
        while chunk := self._take(self.f.read(1 << 20)):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
            budget -= len(chunk)
            if budget < 0:
                return None
        return lines if last == b"\n" else lines + 1


def render_line(raw: bytes, number: int) -> str:
    # invalid UTF-8 is shown with U+FFFD, never an error: one bad byte must not hide the file
    text = raw.decode("utf-8", errors="replace")
    if text.endswith("\r"):
        text = text[:-1]
    if number == 1 and text.startswith("\ufeff"):
        text = text[1:]
    if len(text) > MAX_LINE_CHARS:
        text = text[:MAX_LINE_CHARS] + LINE_CUT_MARKER
    return text


def read_window(path: str, start: int, limit: int, access: FileAccess | None = None,
                check: Check | None = None) -> Window:
    """Stream `path` once: skip to `start`, keep `limit` lines, count (and hash) the rest. A client
    that holds the file (an editor over ACP) is asked first: its buffer is what the user sees.
    From the disk the file is opened once, `check` judges what was opened (its real path and
    inode, not the path given), and the bytes come from that very inode."""
    held = access.read(path) if access is not None else None
    if held is not None:
        return _window(io.BytesIO(held), path, start, limit, _disk_mtime_ns(path))
    with OpenedFile(path) as opened:
        who = opened.who
        if who.directory:
            raise IsADirectoryError(path)
        if not who.regular:
            raise ToolFailure(f"Cannot read {path}: it is not a regular file.")
        if check is not None:
            check("read", who)
        handle = opened.read_handle()
    with handle as f:
        # taken before the first byte is read: a write racing this read makes the baseline stale,
        # never falsely fresh
        return _window(f, path, start, limit, os.fstat(f.fileno()).st_mtime_ns)


def _window(f: BinaryIO, path: str, start: int, limit: int, mtime_ns: int) -> Window:
    with f:
        if is_binary(f.read(BINARY_SNIFF_BYTES)):
            raise ToolFailure(binary_message(path))
        f.seek(0)
        stream = _Stream(f)
        lines: list[str] = []
        number = 0
        total: int | None = None
        while len(lines) < limit:
            raw = stream.next_line()
            if raw is None:
                total = number
                break
            number += 1
            if number >= start:
                lines.append(render_line(raw, number))
        if total is None:
            rest = stream.count_rest()
            total = None if rest is None else number + rest
        return Window(lines, start, total, stream.hasher.hexdigest(), stream.bytes_read, mtime_ns)


def _disk_mtime_ns(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0  # a buffer the editor has not saved


def binary_message(path: str) -> str:
    return f"Cannot read {path}: it is a binary file. Read shows text files only."


def directory_message(path: str) -> str:
    return f"{path} is a directory, not a file; use Glob or Bash ls to list it."


def path_problem(given: str, path: str, cwd: str) -> str | None:
    """Why `path` cannot be read, found with one stat (no byte of the file is read)."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return missing_path_message("File", given, path, cwd)
    except PermissionError:
        return f"Permission denied: {path}"
    except OSError as exc:
        return f"Cannot read {path}: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return directory_message(path)
    if not stat.S_ISREG(info.st_mode):
        # a FIFO or a device would block or stream forever
        return f"Cannot read {path}: it is not a regular file."
    if has_binary_extension(path):
        return binary_message(path)
    return None


async def check_input(params: ReadInput, ctx: ToolContext) -> None:
    # one stat, on the loop: resolving the path for the permission check already stats each of
    # its parts there, and a thread hop cost more than the stat
    path = resolve_path(params.file_path, ctx.cwd)
    problem = path_problem(params.file_path, path, ctx.cwd)
    if problem is not None:
        raise ToolFailure(problem)


def _small_regular_file(path: str) -> bool:
    try:
        info = os.stat(path)
    except OSError:
        return False  # the thread's read says what is wrong
    return stat.S_ISREG(info.st_mode) and info.st_size <= INLINE_READ_BYTES


def numbered(lines: list[str], start: int) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start))


def model_text(path: str, window: Window, offset: int | None) -> str:
    if window.total == 0:
        return f"The file {path} exists but is empty (0 lines)."
    if not window.lines:
        return (f"The file {path} has {window.total} lines; offset {offset} is past the end. "
                f"Use an offset between 1 and {window.total}.")
    text = numbered(window.lines, window.start)
    if not window.reached_eof:
        of = f" of {window.total}" if window.total is not None else ""
        text += (f"\n\n(Showing lines {window.start}-{window.end}{of}. "
                 f"Use offset={window.end + 1} to read on.)")
    return text


async def report_baseline(ctx: ToolContext, path: str, window: Window) -> None:
    file_state = ctx.service("file_state")
    if file_state is None:
        return
    result = file_state.record_read(path=path, data_sha256=window.sha256, size=window.bytes_read,
                                    mtime_ns=window.mtime_ns, full=window.full)
    if inspect.isawaitable(result):
        await result


async def read_file(params: ReadInput, ctx: ToolContext) -> RawResult:
    path = params.file_path  # already absolute: resolve_input ran before the handler
    start = max(1, params.offset or 1)
    limit = params.limit or DEFAULT_LIMIT
    try:
        access, check = ctx.service("file_access"), opened_check(ctx)
        if access is None and _small_regular_file(path):
            window = read_window(path, start, limit, None, check)
        else:  # a client's buffer (asked across a protocol) or a big file: off the loop
            window = await asyncio.to_thread(read_window, path, start, limit, access, check)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolFailure(f"File does not exist: {path}") from None
    except IsADirectoryError:
        raise ToolFailure(directory_message(path)) from None
    except PermissionError:
        raise ToolFailure(f"Permission denied: {path}") from None
    except OSError as exc:  # a link loop, a name too long …
        raise ToolFailure(f"Cannot read {path}: {exc.strerror or exc}") from None
    await report_baseline(ctx, path, window)
    text = model_text(path, window, params.offset)
    output = {"type": "text", "file": {
        "filePath": path, "content": "\n".join(window.lines), "numLines": len(window.lines),
        "startLine": start, "totalLines": window.total,
    }}
    return RawResult(output=output, text=text, display=text_display(text, path))


READ = ToolSpec(
    name="Read",
    description=DESCRIPTION,
    handler=read_file,
    input_model=ReadInput,
    flags=READ_ONLY_FLAGS,
    permission=PermissionSpec(kind="read", rule_key="file_path"),
    budget=budgets.READ,
    timeout=TimeoutPolicy(default_ms=30000),
    validate_input=check_input,
    resolve_input=resolve_file_path_input("file_path"),
    target_of=lambda data: str(data.get("file_path", "")),
)
