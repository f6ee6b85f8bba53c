"""ReadArtifact: the model reads back an output that was too large for it, a page or a match at a time.

Only artifacts of the current session can be read (by URI, id or path); anything else is refused
with a reason. The file is streamed, never loaded: a page of a 1 GB log costs a page of memory,
and a line of any length costs at most LINE_READ_BYTES. Binary or invalid UTF-8 bytes are decoded
with replacement characters. Read-only, concurrency-safe, never asks.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
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
from tui_app.runtime.display import TextDisplay
from tui_app.runtime.results.artifacts import ArtifactNotFound, ArtifactStore, artifact_uri
from tui_app.runtime.results.budgets import READ_ARTIFACT as BUDGET
from tui_app.runtime.results.serialize import format_bytes
from tui_app.tools.common import READ_ONLY_FLAGS

DEFAULT_LIMIT = 200
MAX_LIMIT = 2000
MAX_CONTEXT = 100
MAX_LINE_CHARS = 2000
LINE_CUT_MARKER = f" … [line cut at {MAX_LINE_CHARS} characters]"
# a line is read at most this far; a longer one is shown cut and its rest skipped
LINE_READ_BYTES = 65536
# a page stops before the result budget would cut it, so the model always learns the next offset
PAGE_BYTES = BUDGET.limit_bytes - 2048
SCAN_CHUNK = 1 << 20

DESCRIPTION = """Reads an artifact: the full text of a tool output that was too large to show whole
(the result said "Full output saved to: …").

- artifact: the vigil-artifact:// URI or the path from that message. Only artifacts of this session
  can be read.
- Without a pattern: numbered lines, `limit` lines (default 200) from line `offset` (1-based,
  default 1). The result says how many lines the artifact has and which offset continues.
- With `pattern` (a Python regular expression): the matching lines with their line numbers
  (`   12:line`), each with `context` lines before and after (`   11-line`), searching from
  `offset`; at most `limit` matching lines.
- Lines longer than 2000 characters are cut."""


class ReadArtifactInput(StrictInput):
    artifact: str = Field(description="The artifact's vigil-artifact:// URI, or its path.")
    offset: int | None = Field(default=None, ge=1, description="The 1-based line to start at (default 1).")
    limit: int | None = Field(default=None, ge=1, le=MAX_LIMIT,
                              description=f"Lines to show, or matching lines with a pattern (default {DEFAULT_LIMIT}).")
    pattern: str | None = Field(default=None, description="A regular expression; show only matching lines.")
    context: int | None = Field(default=None, ge=0, le=MAX_CONTEXT,
                                description="Lines of context before and after each match (default 0).")


# ---- reading lines ---------------------------------------------------------------------------------

def read_line(f: BinaryIO) -> bytes | None:
    """The next line (at most LINE_READ_BYTES of it; the rest of a longer one is skipped)."""
    line = f.readline(LINE_READ_BYTES)
    if not line:
        return None
    if len(line) == LINE_READ_BYTES and not line.endswith(b"\n"):
        while True:
            more = f.readline(LINE_READ_BYTES)
            if not more or more.endswith(b"\n"):
                break
    return line


def decode_line(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").rstrip("\n")
    return text[:-1] if text.endswith("\r") else text


def shown(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + LINE_CUT_MARKER


def count_lines(f: BinaryIO) -> int:
    f.seek(0)
    count, last = 0, b"\n"
    while chunk := f.read(SCAN_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)


def seek_line(f: BinaryIO, line: int) -> None:
    """Position `f` at the start of 1-based `line` (the caller knows it exists)."""
    f.seek(0)
    need, pos = line - 1, 0
    while need > 0:
        chunk = f.read(SCAN_CHUNK)
        if not chunk:
            return
        found = chunk.count(b"\n")
        if found < need:
            need -= found
            pos += len(chunk)
            continue
        index = -1
        for _ in range(need):
            index = chunk.index(b"\n", index + 1)
        f.seek(pos + index + 1)
        return


# ---- pages and matches -------------------------------------------------------------------------------

@dataclass
class View:
    lines: list[str] = field(default_factory=list)
    first: int = 0
    last: int = 0
    matches: int = 0
    #: the scan stopped before the end (limit or page size reached)
    stopped: bool = False


def page(f: BinaryIO, start: int, limit: int) -> View:
    seek_line(f, start)
    view = View(first=start, last=start - 1)
    size = 0
    for number in range(start, start + limit):
        raw = read_line(f)
        if raw is None:
            return view
        line = f"{number:>6}\t{shown(decode_line(raw))}"
        size += len(line.encode("utf-8")) + 1
        if size > PAGE_BYTES and view.lines:
            view.stopped = True
            return view
        view.lines.append(line)
        view.last = number
    view.stopped = True
    return view


def search(f: BinaryIO, start: int, regex: re.Pattern[str], limit: int, context: int) -> View:
    """grep -n -C: matches as `   12:line`, context as `   11-line`, `--` between groups."""
    seek_line(f, start)
    view = View(first=start, last=start - 1)
    before: deque[tuple[int, str]] = deque(maxlen=context)
    after = 0
    printed = start - 1  # the last line number already shown
    size = 0

    def emit(number: int, text: str, mark: str) -> bool:
        nonlocal printed, size
        if view.lines and number > printed + 1:
            view.lines.append("--")
        line = f"{number:>6}{mark}{shown(text)}"
        size += len(line.encode("utf-8")) + 4
        view.lines.append(line)
        printed = number
        return size <= PAGE_BYTES

    number = start - 1
    while (raw := read_line(f)) is not None:
        number += 1
        view.last = number
        text = decode_line(raw)
        if regex.search(text):
            if view.matches >= limit:
                view.last = number - 1
                view.stopped = True
                return view
            for n, t in before:
                if n > printed:
                    emit(n, t, "-")
            before.clear()
            view.matches += 1
            fits = emit(number, text, ":")
            after = context
            if not fits:
                view.stopped = True
                return view
        elif after > 0:
            after -= 1
            emit(number, text, "-")
        else:
            before.append((number, text))
    return view


def page_footer(view: View, total: int) -> str:
    if not view.lines:
        return f"[The artifact has {total} lines.]"
    span = f"lines {view.first}-{view.last} of {total}"
    if view.last < total:
        return (f"[Showing {span}. {total - view.last} more lines follow; call ReadArtifact with "
                f"offset={view.last + 1} to continue.]")
    return f"[Showing {span}. This is the end of the artifact.]"


def search_footer(view: View, total: int, pattern: str) -> str:
    if view.matches == 0:
        return f"[No line matches /{pattern}/ in lines {view.first}-{total} of {total}.]"
    found = f"{view.matches} matching line{'s' if view.matches != 1 else ''}"
    if view.stopped and view.last < total:
        return (f"[{found} shown, searched lines {view.first}-{view.last} of {total}; more may follow. Call "
                f"ReadArtifact with offset={view.last + 1} and the same pattern to continue.]")
    return f"[{found} in lines {view.first}-{total} of {total}. The search reached the end of the artifact.]"


# ---- the tool -------------------------------------------------------------------------------------

def store_of(ctx: ToolContext) -> ArtifactStore:
    store = ctx.service("artifacts")
    if store is None:
        raise ToolFailure("This session has no artifact store, so there are no artifacts to read.",
                          retryable=False)
    return store


def locate(args: ReadArtifactInput, ctx: ToolContext) -> tuple[ArtifactStore, Path]:
    store = store_of(ctx)
    try:
        return store, store.locate(args.artifact, ctx.cwd)
    except ArtifactNotFound as exc:
        raise ToolFailure(str(exc), code="artifact_not_found", retryable=False) from None


async def check_input(args: ReadArtifactInput, ctx: ToolContext) -> None:
    locate(args, ctx)
    if args.pattern is not None:
        try:
            re.compile(args.pattern)
        except re.error as exc:
            raise ToolFailure(f"Invalid regular expression /{args.pattern}/: {exc}") from None


def read(store: ArtifactStore, path: Path, args: ReadArtifactInput) -> tuple[str, dict]:
    artifact_id = path.name.removesuffix(".txt")
    info = store.info(artifact_id)
    start = args.offset or 1
    limit = args.limit or DEFAULT_LIMIT
    with open(path, "rb") as f:
        size = path.stat().st_size
        total = info.lines if info is not None and info.lines is not None and info.bytes == size else count_lines(f)
        head = f"{artifact_uri(store.session_id, artifact_id)} ({total} lines, {format_bytes(size)})"
        facts = {"artifact": artifact_id, "total_lines": total, "bytes": size}
        if total == 0:
            return f"{head}\n[The artifact is empty.]", facts
        if start > total:
            return (f"{head}\n[Line {start} is past the end: the artifact has {total} lines. "
                    f"Use an offset from 1 to {total}.]"), {**facts, "past_end": True}
        if args.pattern is not None:
            view = search(f, start, re.compile(args.pattern), limit, args.context or 0)
            footer = search_footer(view, total, args.pattern)
        else:
            view = page(f, start, limit)
            footer = page_footer(view, total)
    body = "\n".join(view.lines)
    text = f"{head}\n{body}\n\n{footer}" if body else f"{head}\n{footer}"
    return text, {**facts, "first": view.first, "last": view.last, "matches": view.matches,
                  "more": view.last < total}


async def read_artifact(args: ReadArtifactInput, ctx: ToolContext) -> RawResult:
    store, path = locate(args, ctx)
    try:
        text, facts = await asyncio.to_thread(read, store, path, args)
    except OSError as exc:
        raise ToolFailure(f"Could not read the artifact {args.artifact}: {exc.strerror or exc}") from None
    summary = text.rsplit("\n", 1)[-1]
    return RawResult(output=facts, text=text, display=TextDisplay(title=text.split("\n", 1)[0], text=summary))


READ_ARTIFACT = ToolSpec(
    name="ReadArtifact",
    description=DESCRIPTION,
    handler=read_artifact,
    input_model=ReadArtifactInput,
    flags=READ_ONLY_FLAGS,
    permission=PermissionSpec(kind="read", rule_key="artifact"),
    budget=BUDGET,
    timeout=TimeoutPolicy(default_ms=60_000),
    validate_input=check_input,
)
