"""The ripgrep backend: rg runs in its own process group, and a cancelled or timed-out search
kills the whole group, so no rg outlives the call.

Output is asked for with `--null` (path, NUL, rest) so that no path can be confused with a line
number, and then parsed into the same FileHits the Python backend builds.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from pathlib import Path

from tui_app.runtime.processes.groups import kill_group, spawn_group
from tui_app.tools.grep.search import (
    NEWLINE_MESSAGE,
    FileHits,
    GrepQuery,
    Line,
    SearchFailed,
    invalid_regex_message,
    strip_line_end,
    unknown_type_message,
)

# Which ignore files count is pinned down so that both backends agree: .gitignore files in the
# tree and above it, whether or not the tree is a git checkout; not the user's global excludes,
# .git/info/exclude or .ignore/.rgignore. --no-config: a user's RIPGREP_CONFIG_PATH must not
# change the output format we parse.
BASE_ARGS = (
    "--no-config", "--no-require-git", "--no-ignore-global", "--no-ignore-exclude", "--no-ignore-dot",
    "--no-messages", "--color", "never", "--with-filename", "--null",
)

_RECORD = re.compile(rb"(\d+)([:-])")


def find_rg() -> str | None:
    """The `rg` installed with Vigil (the pinned `ripgrep` wheel puts it beside the interpreter),
    else one on PATH."""
    bundled = Path(sys.executable).parent / "rg"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return str(bundled)
    return shutil.which("rg")


def rg_args(rg: str, query: GrepQuery) -> list[str]:
    args = [rg, *BASE_ARGS]
    if query.ignore_case:
        args.append("--ignore-case")
    if query.multiline:
        args += ["--multiline", "--multiline-dotall"]
    for glob in query.globs:
        args += ["--glob", glob]
    if query.file_type:
        args += ["--type", query.file_type]
    if query.mode == "files_with_matches":
        args.append("--files-with-matches")
    elif query.mode == "count":
        args.append("--count-matches")
    else:
        args += ["--line-number", "--after-context", str(query.after), "--before-context", str(query.before)]
    return [*args, "--regexp", query.pattern, "--", query.root]


async def run_group(args: list[str], cwd: str) -> tuple[int, bytes, bytes]:
    proc = await spawn_group(*args, cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                             stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await proc.communicate()
    except BaseException:
        kill_group(proc.pid)
        await proc.wait()
        raise
    return proc.returncode or 0, out, err


def failure_of(query: GrepQuery, stderr: str) -> SearchFailed:
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    # ripgrep 14 names itself before each message ("rg: regex parse error:"); 13 did not
    first = lines[0].removeprefix("rg: ") if lines else "ripgrep failed"
    if first.startswith("regex parse error"):
        detail = next((line.removeprefix("error: ") for line in reversed(lines) if line.startswith("error:")),
                      " ".join(lines[1:]))
        return SearchFailed(invalid_regex_message(query.pattern, detail))
    if "is not allowed in a regex" in first:
        return SearchFailed(NEWLINE_MESSAGE)
    if first.startswith("unrecognized file type:"):
        return SearchFailed(unknown_type_message(first.split(":", 1)[1].strip()))
    return SearchFailed(first)


def parse(query: GrepQuery, out: bytes) -> list[FileHits]:
    if query.mode == "files_with_matches":
        return [FileHits(os.fsdecode(p)) for p in out.split(b"\0") if p.strip(b"\n")]
    hits: dict[str, FileHits] = {}
    for raw in out.split(b"\n"):
        path, sep, rest = raw.partition(b"\0")
        if not sep:
            continue  # the `--` between context groups, or the final empty line
        name = os.fsdecode(path)
        hit = hits.setdefault(name, FileHits(name))
        if query.mode == "count":
            hit.count = int(rest)
            continue
        found = _RECORD.match(rest)
        if found is None:
            continue
        text = strip_line_end(rest[found.end():].decode("utf-8", errors="replace"))
        hit.lines.append(Line(int(found.group(1)), text, found.group(2) == b":"))
    return list(hits.values())


async def search(rg: str, query: GrepQuery) -> list[FileHits]:
    # relative globs are anchored at rg's working directory: make that the searched directory
    cwd = query.root if os.path.isdir(query.root) else os.path.dirname(query.root)
    code, out, err = await run_group(rg_args(rg, query), cwd)
    if code == 1:
        return []
    # --no-messages silences unreadable files; what remains on stderr is about the search itself
    if code == 2 and err.strip():
        raise failure_of(query, err.decode("utf-8", errors="replace"))
    return parse(query, out)
