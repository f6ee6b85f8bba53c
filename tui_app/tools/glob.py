"""Glob: files whose path matches a pattern, newest first, at most 100."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
import time
from typing import Any

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
from tui_app.runtime.files.realpath import real_path
from tui_app.runtime.permissions.working_dirs import inside
from tui_app.runtime.results import budgets
from tui_app.tools.common import (
    READ_ONLY_FLAGS,
    missing_path_message,
    pattern_target,
    resolve_file_path_input,
    resolve_path,
    run_stoppable,
    text_display,
)
from tui_app.tools.deny_filter import note_left_out, without_denied
from tui_app.tools.globmatch import compile_glob, max_depth, split_literal_prefix

MAX_RESULTS = 100
TRUNCATED_LINE = "(Results are truncated. Consider using a more specific path or pattern.)"
NO_FILES = "No files found"
_resolve_path = resolve_file_path_input("path")
SKIPPED_DIRS = frozenset({".git"})

DESCRIPTION = """Fast file pattern matching for a codebase of any size.

- Supports glob patterns like "**/*.js" or "src/**/*.{ts,tsx}"; `**` matches any number of directories.
- Returns absolute file paths, most recently modified first, at most 100.
- path is the directory to search in (default: the working directory). Omit it rather than passing
  "undefined" or "null".
- To find files by their content, use Grep."""


class GlobInput(StrictInput):
    pattern: str = Field(description='The glob pattern to match files against, e.g. "**/*.py" or "src/*.{ts,tsx}".')
    path: str | None = Field(
        default=None,
        description="The directory to search in. Omit it to search the current working directory; must be an "
                    "existing directory if given.")


def directory_problem(given: str, path: str, cwd: str) -> str | None:
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return missing_path_message("Directory", given, path, cwd)
    except OSError as exc:
        return f"Cannot search {path}: {exc.strerror or exc}"
    if not stat.S_ISDIR(info.st_mode):
        return f"Path is not a directory: {path}"
    return None


async def check_input(params: GlobInput, ctx: ToolContext) -> None:
    _, rest = split_literal_prefix(params.pattern)
    if ".." in rest.split("/"):
        raise ToolFailure(f"The pattern {params.pattern} climbs with .. after a wildcard; give the directory to "
                          "search as path (or at the start of the pattern) instead.")
    if params.path is None:
        return
    path = resolve_path(params.path, ctx.cwd)
    problem = await asyncio.to_thread(directory_problem, params.path, path, ctx.cwd)
    if problem is not None:
        raise ToolFailure(problem)


def search_root(pattern: str, path: str) -> tuple[str, str]:
    """(directory to walk, pattern relative to it). The pattern's literal start is part of the
    root: an absolute pattern, `~/…` or `../…` brings its own (a `..` after a link is the link
    target's parent, as for the kernel)."""
    expanded = os.path.expanduser(pattern) if pattern.startswith("~") else pattern
    literal, rest = split_literal_prefix(expanded)
    if os.path.isabs(expanded):
        return resolve_path(literal or "/", "/"), rest
    return resolve_path(literal, path) if literal else path, rest


def _within(root: str, base: str) -> bool:
    real_root, real_base = real_path(root), real_path(base)
    return inside(real_root, (real_base,))


async def resolve_glob(data: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """`path` made absolute; a pattern whose literal start leads out of it (`/etc/*`, `~/x/*`,
    `../../*`, a link to elsewhere) has that start moved into `path`, so the permission check
    (working directories, Read rules) and the hooks see the directory really searched."""
    data = await _resolve_path(data, ctx)
    pattern = data.get("pattern")
    if not isinstance(pattern, str):
        return data
    base = data.get("path") or ctx.cwd
    root, rest = search_root(pattern, base)
    if root == base or _within(root, base):
        return data
    return {**data, "pattern": rest, "path": root}


def mtime_ns(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:  # a dangling symlink still names a file; sort it by the link itself
        try:
            return os.lstat(path).st_mtime_ns
        except OSError:
            return 0


def find_files(pattern: str, path: str, stop: threading.Event) -> list[str]:
    """Every matching file under `path`, newest first (ties by path, so the order is stable)."""
    root, rest = search_root(pattern, path)
    if root != path and not _within(root, path):
        return []  # the pattern's start became a way out after the call was decided
    matcher = compile_glob(rest)
    depth_limit = max_depth(rest)
    found: list[str] = []
    for current, dirs, files in os.walk(root):
        if stop.is_set():
            break
        rel_dir = os.path.relpath(current, root)
        depth = 0 if rel_dir == "." else rel_dir.count(os.sep) + 1
        # walking below what the pattern can reach, or into .git, only costs time
        if depth_limit is not None and depth >= depth_limit:
            dirs.clear()
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        found.extend(os.path.join(current, name) for name in files if matcher.match(prefix + name))
    stamped = sorted((-mtime_ns(p), p) for p in found)
    return [p for _, p in stamped]


def listing(paths: list[str]) -> tuple[str, bool]:
    if not paths:
        return NO_FILES, False
    shown = paths[:MAX_RESULTS]
    truncated = len(paths) > MAX_RESULTS
    return "\n".join(shown + ([TRUNCATED_LINE] if truncated else [])), truncated


async def glob_files(params: GlobInput, ctx: ToolContext) -> RawResult:
    started = time.perf_counter()
    path = params.path or ctx.cwd  # an explicit path is already absolute (resolve_input)
    problem = await asyncio.to_thread(directory_problem, path, path, ctx.cwd)
    if problem is not None:  # the directory went away after the checks
        raise ToolFailure(problem)
    paths, left_out = await without_denied(ctx, await run_stoppable(find_files, params.pattern, path), str)
    text, truncated = listing(paths)
    output = {"filenames": paths[:MAX_RESULTS], "numFiles": min(len(paths), MAX_RESULTS), "truncated": truncated,
              "durationMs": int((time.perf_counter() - started) * 1000)}
    text = note_left_out(output, text, left_out)
    return RawResult(output=output, text=text, display=text_display(text, f"Glob {params.pattern}"))


GLOB = ToolSpec(
    name="Glob",
    description=DESCRIPTION,
    handler=glob_files,
    input_model=GlobInput,
    flags=READ_ONLY_FLAGS,
    permission=PermissionSpec(kind="read", rule_key="path"),
    budget=budgets.GLOB,
    timeout=TimeoutPolicy(default_ms=30000),
    validate_input=check_input,
    resolve_input=resolve_glob,
    target_of=pattern_target,
)
