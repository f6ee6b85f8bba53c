"""ReadArtifact: the model reads back an output that was too large for it, a page or a match at a time.

Only artifacts of the current session can be read (by URI, id or path); anything else is refused
with a reason. The reading itself (`artifact_scan`) runs in a process of its own, so a search over
a gigabyte stops the moment its call times out or is interrupted. Read-only, concurrency-safe,
never asks.
"""

from __future__ import annotations

import re
from pathlib import Path

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
from tui_app.runtime.processes.worker_process import WorkerFailed, run_worker
from tui_app.runtime.results.artifacts import ArtifactNotFound, ArtifactStore, artifact_uri
from tui_app.runtime.results.budgets import READ_ARTIFACT as BUDGET
from tui_app.runtime.results.serialize import format_bytes
from tui_app.tools.artifact_scan import MAX_LINE_CHARS, View
from tui_app.tools.common import READ_ONLY_FLAGS

DEFAULT_LIMIT = 200
MAX_LIMIT = 2000
MAX_CONTEXT = 100
# a page stops before the result budget would cut it, so the model always learns the next offset
PAGE_BYTES = BUDGET.limit_bytes - 2048
SCAN_SCRIPT = Path(__file__).with_name("artifact_scan.py")
__all__ = ["MAX_LINE_CHARS", "READ_ARTIFACT"]

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


async def read(store: ArtifactStore, path: Path, args: ReadArtifactInput) -> tuple[str, dict]:
    artifact_id = path.name.removesuffix(".txt")
    info = store.info(artifact_id)
    start = args.offset or 1
    limit = args.limit or DEFAULT_LIMIT
    size = path.stat().st_size
    known = info.lines if info is not None and info.lines is not None and info.bytes == size else None
    answer = await run_worker(SCAN_SCRIPT, {"path": str(path), "start": start, "limit": limit, "total": known,
                                            "page_bytes": PAGE_BYTES, "pattern": args.pattern,
                                            "context": args.context or 0})
    if "error" in answer:
        raise OSError(answer["error"])
    total = answer["total"]
    head = f"{artifact_uri(store.session_id, artifact_id)} ({total} lines, {format_bytes(size)})"
    facts = {"artifact": artifact_id, "total_lines": total, "bytes": size}
    if total == 0:
        return f"{head}\n[The artifact is empty.]", facts
    if start > total:
        return (f"{head}\n[Line {start} is past the end: the artifact has {total} lines. "
                f"Use an offset from 1 to {total}.]"), {**facts, "past_end": True}
    view = View(**answer["view"])
    footer = search_footer(view, total, args.pattern) if args.pattern is not None else page_footer(view, total)
    body = "\n".join(view.lines)
    text = f"{head}\n{body}\n\n{footer}" if body else f"{head}\n{footer}"
    return text, {**facts, "first": view.first, "last": view.last, "matches": view.matches,
                  "more": view.last < total}


async def read_artifact(args: ReadArtifactInput, ctx: ToolContext) -> RawResult:
    store, path = locate(args, ctx)
    try:
        text, facts = await read(store, path, args)
    except OSError as exc:
        raise ToolFailure(f"Could not read the artifact {args.artifact}: {exc.strerror or exc}") from None
    except WorkerFailed as exc:
        raise ToolFailure(f"Could not read the artifact {args.artifact}: {exc}") from None
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
