"""Helpers shared by the file tools: one way to turn a model's path into the path that is used,
and one way to tell text from binary."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import unicodedata
from collections.abc import Callable
from typing import Any, TypeVar

from tui_app.runtime.contract import Input, InputResolver, ToolContext, ToolFlags
from tui_app.runtime.display import TextDisplay
from tui_app.runtime.files.realpath import kernel_absolute
from tui_app.runtime.results.serialize import cut_head_bytes, format_bytes, utf8_len

T = TypeVar("T")

#: the screen's copy of a result is bounded on its own (every display also goes to the session log)
DISPLAY_MAX_BYTES = 262144

#: how much of a file the NUL sniff looks at (the same window git and most editors use)
BINARY_SNIFF_BYTES = 8192

# Extensions whose content is never useful as numbered text lines. Kept short on purpose: the NUL
# sniff catches the rest, and a false positive here would hide a text file from the model.
BINARY_EXTENSIONS = frozenset({
    # images
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tif", "tiff", "psd", "heic", "avif",
    # audio / video
    "mp3", "wav", "ogg", "flac", "aac", "m4a", "mp4", "m4v", "mov", "avi", "mkv", "webm", "wmv",
    # archives and compressed data
    "zip", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "tar", "jar", "war", "whl", "deb", "rpm",
    # executables, libraries, object code, bytecode
    "exe", "dll", "so", "dylib", "o", "a", "obj", "lib", "bin", "class", "pyc", "pyo", "wasm",
    # documents and fonts
    "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp",
    "ttf", "otf", "woff", "woff2", "eot",
    # databases and other opaque stores
    "sqlite", "sqlite3", "db", "dat", "npy", "npz", "pkl", "pickle", "parquet", "h5",
})


def resolve_path(path: str, cwd: str) -> str:
    """The absolute, normalised form of a path the model gave.

    Symlinks are left alone on purpose: rules and hooks match the path the user sees, and a
    link's target is a fact of execution, not of the request. Only a `..` after a link is taken
    as the kernel takes it (the target's parent): `link/../x` is not `x` beside the link."""
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        expanded = os.path.join(os.path.expanduser(cwd), expanded)
    # NFC so that a name typed on macOS (often NFD) and the same name typed elsewhere compare equal
    return unicodedata.normalize("NFC", kernel_absolute(expanded))


def is_relative(path: str) -> bool:
    return not os.path.isabs(os.path.expanduser(path))


def is_binary(sample: bytes) -> bool:
    """True when the first 8 KB hold a NUL byte: text files (UTF-8, Latin-1 …) never do."""
    return b"\0" in sample[:BINARY_SNIFF_BYTES]


def has_binary_extension(path: str) -> bool:
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    return ext in BINARY_EXTENSIONS


def missing_path_message(kind: str, given: str, absolute: str, cwd: str) -> str:
    """`File does not exist: /abs`, plus where a relative path was resolved from."""
    message = f"{kind} does not exist: {absolute}"
    if is_relative(given):
        message += f". Current working directory: {cwd}"
    return message


def resolve_file_path_input(key: str) -> InputResolver:
    """A `resolve_input` that makes `input[key]` absolute, so hooks, permission rules and the
    approval dialog all see the path that will really be used."""

    async def resolve(data: Input, ctx: ToolContext) -> Input:
        value: Any = data.get(key)
        if not isinstance(value, str):
            return data
        return {**data, key: resolve_path(value, ctx.cwd)}

    return resolve


#: how long a cancelled call waits for its thread to notice `stop` (work checks it far more often)
STOP_WAIT_S = 2.0


async def run_stoppable(work: Callable[..., T], *args: Any) -> T:
    """Run blocking `work(*args, stop)` in a thread. A thread cannot be cancelled, so when this
    call is (timeout, interrupt) `stop` is set, `work` is expected to check it often and return,
    and the cancel completes once it has: a cancelled call leaves no work burning a core."""
    stop = threading.Event()
    future = asyncio.ensure_future(asyncio.to_thread(work, *args, stop))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stop.set()
        with contextlib.suppress(BaseException):
            await asyncio.wait({future}, timeout=STOP_WAIT_S)
        raise
    finally:
        stop.set()


def text_display(text: str, title: str) -> TextDisplay:
    size = utf8_len(text)
    if size > DISPLAY_MAX_BYTES:
        text = cut_head_bytes(text, DISPLAY_MAX_BYTES) + f"\n… (display cut; {format_bytes(size)} in total)"
    return TextDisplay(text=text, title=title)


#: a tool that only looks: runs beside other looks, touches nothing, never asks
READ_ONLY_FLAGS = ToolFlags(read_only=True, concurrency_safe=True, side_effect_scope="none", needs_approval=False,
                            risk="low")


def pattern_target(data: dict) -> str:
    """The screen's one-line target of a search: the pattern, and where when given."""
    where = data.get("path")
    return f"{data.get('pattern', '')} in {where}" if where else str(data.get("pattern", ""))
