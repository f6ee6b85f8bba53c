"""Which regions of two texts differ, asked of git when it is installed.

git's histogram diff (xdiff, in C) handles every shape at C speed — moved blocks, shuffled and
re-indented lines among them, where our own walk (`line_diff`) pays Python for every line it
cannot anchor. It costs a process and two temporary files, so it is asked only about big texts
whose difference the walk cannot step over (`HARD_LINES`); without git, or if it fails, the
caller diffs in Python.

Only the hunk headers of a zero-context diff are read: they are the changed regions, and the
hunks themselves are built from our own split lines, so both roads give the same kind of patch.
git is run isolated from the user's configuration (no external diff, no textconv, no pager, no
config files): what it is asked is always the same question.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from functools import cache

from tui_app.runtime.files.line_diff import Change

#: a region of this many lines (old and new together) that the Python walk cannot step over goes
#: to git: below it anchoring in Python costs less than a process
HARD_LINES = 2000
_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_PAGER", "GIT_CONFIG")


@cache
def git_program() -> str | None:
    return shutil.which("git")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _ENV_DROP and not k.startswith("GIT_CONFIG_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, HOME=os.devnull, LC_ALL="C")
    return env


def _range(start: bytes, count: bytes | None) -> tuple[int, int]:
    length = 1 if count is None else int(count)
    # an empty range names the line before it (0 at the top)
    lo = int(start) - 1 if length else int(start)
    return lo, lo + length


def git_changes(old: str, new: str) -> list[Change] | None:
    """The changed regions (old lines [a_lo, a_hi) became new lines [b_lo, b_hi)), or None when
    git is not there or did not answer."""
    git = git_program()
    if git is None:
        return None
    try:
        with tempfile.TemporaryDirectory(prefix="vigil-diff-") as tmp:
            paths = []
            for name, text in (("old", old), ("new", new)):
                path = os.path.join(tmp, name)
                with open(path, "wb") as handle:
                    handle.write(text.encode("utf-8", "surrogateescape"))
                paths.append(path)
            done = subprocess.run(
                [git, "diff", "--no-index", "--histogram", "--unified=0", "--no-color", "--no-ext-diff",
                 "--no-textconv", "--text", "--no-renames", "--", *paths],
                capture_output=True, env=_env(), cwd=tmp, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError, UnicodeError):
        return None
    if done.returncode not in (0, 1):
        return None
    changes: list[Change] = []
    for match in _HEADER.finditer(done.stdout):
        a_lo, a_hi = _range(match.group(1), match.group(2))
        b_lo, b_hi = _range(match.group(3), match.group(4))
        changes.append((a_lo, a_hi, b_lo, b_hi))
    return changes
