"""Grep: search file contents with a regular expression. ripgrep when it is installed, else a
pure-Python search that follows the same rules and gives the same text."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Literal

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
from tui_app.runtime.results import budgets
from tui_app.tools.common import (
    BINARY_SNIFF_BYTES,
    READ_ONLY_FLAGS,
    is_binary,
    missing_path_message,
    pattern_target,
    resolve_file_path_input,
    resolve_path,
    run_stoppable,
    text_display,
)
from tui_app.tools.deny_filter import note_left_out, without_denied
from tui_app.tools.grep import python_backend as grep_py
from tui_app.tools.grep import rg_backend as grep_rg
from tui_app.tools.grep.search import UTF16_BOMS, FileHits, GrepQuery, SearchFailed, format_hits, split_globs

DESCRIPTION = """Searches file contents with a regular expression (ripgrep).

- Full regex syntax, e.g. "log.*Error" or "function\\s+\\w+". Literal braces need escaping: "interface\\{\\}".
- Filter files with glob (e.g. "*.js", "**/*.{ts,tsx}") or type (e.g. "py", "js", "rust").
- output_mode: "files_with_matches" (default) lists matching files, newest first; "content" shows matching
  lines (with -n line numbers, -A/-B/-C context); "count" shows the number of matches per file.
- Respects .gitignore; hidden files and binary files are skipped.
- Patterns match within one line; use multiline: true for patterns that span lines.
- head_limit keeps only the first N files, lines or counts.
- Use this tool rather than running grep or rg through Bash."""


class GrepInput(StrictInput):
    # The dashed keys are the names the model knows from Claude Code; they are aliases here, and
    # only the aliases are accepted, exactly as the schema shown to the model says.
    pattern: str = Field(description="The regular expression to search for in file contents.")
    path: str | None = Field(
        default=None, description="The file or directory to search in. Defaults to the current working directory.")
    glob: str | None = Field(
        default=None, description='Glob that selects the files to search, e.g. "*.js" or "*.{ts,tsx}"; "!glob" '
                                  "excludes.")
    type: str | None = Field(
        default=None, description='File type to search (ripgrep type names), e.g. "py", "js", "rust", "go", "java". '
                                  "More efficient than glob for standard file types.")
    output_mode: Literal["content", "files_with_matches", "count"] | None = Field(
        default=None, description='"content" shows matching lines, "files_with_matches" lists file paths (the '
                                  'default), "count" shows match counts per file.')
    case_insensitive: bool | None = Field(default=None, alias="-i", description="Case-insensitive search.")
    line_numbers: bool | None = Field(
        default=None, alias="-n", description='Show line numbers (output_mode "content" only; default true).')
    after: int | None = Field(
        default=None, alias="-A", ge=0,
        description='Lines of context to show after each match (output_mode "content" only).')
    before: int | None = Field(
        default=None, alias="-B", ge=0,
        description='Lines of context to show before each match (output_mode "content" only).')
    context: int | None = Field(
        default=None, alias="-C", ge=0,
        description='Lines of context to show before and after each match (output_mode "content" only).')
    head_limit: int | None = Field(
        default=None, ge=0,
        description="Keep only the first N entries: lines (content), files (files_with_matches) or counts "
                    "(count). 0 or absent: all.")
    multiline: bool | None = Field(
        default=None, description="Let patterns span lines (`.` also matches newlines). Default false.")


def path_problem(given: str, path: str, cwd: str) -> str | None:
    if not os.path.exists(path):
        return missing_path_message("Path", given, path, cwd)
    return None


async def check_input(params: GrepInput, ctx: ToolContext) -> None:
    if params.path is None:
        return
    path = resolve_path(params.path, ctx.cwd)
    problem = await asyncio.to_thread(path_problem, params.path, path, ctx.cwd)
    if problem is not None:
        raise ToolFailure(problem)


def query_of(params: GrepInput, root: str) -> GrepQuery:
    mode = params.output_mode or "files_with_matches"
    around = params.context or 0
    content = mode == "content"
    return GrepQuery(
        pattern=params.pattern, root=root, mode=mode, globs=split_globs(params.glob), file_type=params.type,
        ignore_case=bool(params.case_insensitive), multiline=bool(params.multiline),
        # -A / -B are more specific than -C, as in rg
        before=(params.before if params.before is not None else around) if content else 0,
        after=(params.after if params.after is not None else around) if content else 0,
    )


def named_binary_file(path: str) -> bool:
    """A binary file named explicitly: rg would say "binary file matches", we say nothing.
    UTF-16 with a byte-order mark is text (both backends transcode it)."""
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            sample = f.read(BINARY_SNIFF_BYTES)
    except OSError:
        return False
    return not sample.startswith(UTF16_BOMS) and is_binary(sample)


async def search(query: GrepQuery) -> list[FileHits]:
    if await asyncio.to_thread(named_binary_file, query.root):
        return []
    rg = grep_rg.find_rg()
    try:
        if rg is not None:
            return await grep_rg.search(rg, query)
        return await run_stoppable(grep_py.search, query)
    except SearchFailed as exc:
        raise ToolFailure(str(exc)) from None


async def grep(params: GrepInput, ctx: ToolContext) -> RawResult:
    started = time.perf_counter()
    root = params.path or ctx.cwd  # an explicit path is already absolute (resolve_input)
    if not await asyncio.to_thread(os.path.exists, root):  # removed after the checks ran
        raise ToolFailure(f"Path does not exist: {root}")
    query = query_of(params, root)
    hits, left_out = await without_denied(ctx, await search(query), lambda hit: hit.path)
    # sorting stats every file found: not on the event loop
    found = await asyncio.to_thread(format_hits, query, hits, params.head_limit, params.line_numbers is not False)
    output = {
        "mode": query.mode, "numFiles": found.num_files, "filenames": found.filenames,
        "content": found.text, "numLines": found.num_lines, "numMatches": found.num_matches,
        "appliedLimit": params.head_limit if found.limited else None,
        "durationMs": int((time.perf_counter() - started) * 1000),
    }
    text = note_left_out(output, found.text, left_out)
    return RawResult(output=output, text=text, display=text_display(text, f"Grep {params.pattern}"))


GREP = ToolSpec(
    name="Grep",
    description=DESCRIPTION,
    handler=grep,
    input_model=GrepInput,
    flags=READ_ONLY_FLAGS,
    permission=PermissionSpec(kind="read", rule_key="path"),
    budget=budgets.GREP,
    timeout=TimeoutPolicy(default_ms=30000),
    validate_input=check_input,
    resolve_input=resolve_file_path_input("path"),
    target_of=pattern_target,
)
