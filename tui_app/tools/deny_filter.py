"""Search results without the files Read deny rules keep from the model.

`Read(./.env)` in a deny list means the model never sees `.env`: not through Read, and not as a
Grep match or a Glob hit either. The files are left out after the search, and the model is told
how many, so a missing result is never a silent mystery."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from tui_app.runtime.contract import ToolContext

T = TypeVar("T")


async def without_denied(ctx: ToolContext, found: list[T], path_of: Callable[[T], str]) -> tuple[list[T], int]:
    """`found` minus the entries whose file is read-denied, and how many were left out."""
    read_denial = ctx.service("read_denial")
    denied = read_denial(ctx.tool_name) if read_denial is not None else None
    if denied is None or not found:
        return found, 0
    kept = await asyncio.to_thread(lambda: [item for item in found if not denied(path_of(item))])
    return kept, len(found) - len(kept)


def left_out_note(count: int) -> str:
    return f"({count} matching file{'s' if count != 1 else ''} left out: Read deny rules)"


def note_left_out(output: dict[str, Any], text: str, count: int) -> str:
    """The result's text with the count of left-out files noted (`deniedFiles` in the output)."""
    if not count:
        return text
    output["deniedFiles"] = count
    return f"{text}\n{left_out_note(count)}"
