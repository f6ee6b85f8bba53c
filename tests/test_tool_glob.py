from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tool_harness import call, error_of, ok_text
from tui_app.runtime.events import ToolCallResult, ToolCallStarted
from tui_app.tools.glob import GLOB, TRUNCATED_LINE
from tui_app.tools.globmatch import compile_glob, expand_braces, split_literal_prefix

BASE = 1_700_000_000


def touch(path: Path, age_s: int = 0, text: str = "x\n") -> Path:
    """A file whose modification time is `age_s` seconds before a fixed moment (bigger = older)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (BASE - age_s, BASE - age_s))
    return path


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("*.py", "a.py", True),
    ("*.py", "src/a.py", False),
    ("**/*.py", "a.py", True),
    ("**/*.py", "src/deep/a.py", True),
    ("src/**/*.py", "src/a.py", True),
    ("src/**/*.py", "lib/a.py", False),
    ("*.{ts,tsx}", "a.tsx", True),
    ("*.{ts,tsx}", "a.js", False),
    ("?.txt", "a.txt", True),
    ("?.txt", "ab.txt", False),
    ("[!a]*.md", "b.md", True),
    ("[!a]*.md", "a.md", False),
    ("**/.env", "conf/.env", True),
    ("a*b", "a/b", False),
])
def test_glob_translation(pattern: str, path: str, expected: bool) -> None:
    assert bool(compile_glob(pattern).match(path)) is expected


def test_literal_prefix_and_brace_expansion() -> None:
    assert split_literal_prefix("src/app/**/*.py") == ("src/app", "**/*.py")
    assert split_literal_prefix("*.py") == ("", "*.py")
    assert expand_braces("src/*.{ts,tsx}") == ["src/*.ts", "src/*.tsx"]
    assert expand_braces("{a,b}/{c,d}") == ["a/c", "a/d", "b/c", "b/d"]


async def test_results_are_absolute_and_newest_first(tmp_path: Path) -> None:
    old = touch(tmp_path / "old.py", age_s=300)
    new = touch(tmp_path / "new.py", age_s=10)
    mid = touch(tmp_path / "mid.py", age_s=100)
    touch(tmp_path / "notes.md", age_s=1)
    assert await ok_text(GLOB, {"pattern": "*.py"}, tmp_path) == f"{new}\n{mid}\n{old}"


async def test_same_mtime_is_ordered_by_path(tmp_path: Path) -> None:
    b = touch(tmp_path / "b.txt", age_s=5)
    a = touch(tmp_path / "a.txt", age_s=5)
    assert await ok_text(GLOB, {"pattern": "*.txt"}, tmp_path) == f"{a}\n{b}"


async def test_double_star_recurses_and_single_star_does_not(tmp_path: Path) -> None:
    top = touch(tmp_path / "top.py", age_s=3)
    deep = touch(tmp_path / "src" / "pkg" / "deep.py", age_s=2)
    mid = touch(tmp_path / "src" / "mid.py", age_s=1)
    assert await ok_text(GLOB, {"pattern": "**/*.py"}, tmp_path) == f"{mid}\n{deep}\n{top}"
    assert await ok_text(GLOB, {"pattern": "*.py"}, tmp_path) == str(top)
    assert await ok_text(GLOB, {"pattern": "src/**/*.py"}, tmp_path) == f"{mid}\n{deep}"
    assert await ok_text(GLOB, {"pattern": "*.py", "path": "src/pkg"}, tmp_path) == str(deep)


async def test_at_most_100_results_then_a_truncation_line(tmp_path: Path) -> None:
    for i in range(105):
        touch(tmp_path / f"f{i:03}.log", age_s=i)  # f000 is the newest
    lines = (await ok_text(GLOB, {"pattern": "*.log"}, tmp_path)).split("\n")
    assert len(lines) == 101
    assert lines[0] == str(tmp_path / "f000.log")
    assert lines[99] == str(tmp_path / "f099.log")
    assert lines[100] == TRUNCATED_LINE == (
        "(Results are truncated. Consider using a more specific path or pattern.)")


async def test_no_match_says_no_files_found(tmp_path: Path) -> None:
    touch(tmp_path / "a.txt")
    assert await ok_text(GLOB, {"pattern": "**/*.rs"}, tmp_path) == "No files found"


async def test_git_directory_is_skipped(tmp_path: Path) -> None:
    touch(tmp_path / ".git" / "config")
    kept = touch(tmp_path / ".github" / "config")
    assert await ok_text(GLOB, {"pattern": "**/config"}, tmp_path) == str(kept)


async def test_absolute_pattern_brings_its_own_root(tmp_path: Path) -> None:
    f = touch(tmp_path / "elsewhere" / "x.cfg")
    (tmp_path / "cwd").mkdir()
    assert await ok_text(GLOB, {"pattern": f"{tmp_path}/elsewhere/*.cfg"}, tmp_path / "cwd") == str(f)


async def test_path_must_be_an_existing_directory(tmp_path: Path) -> None:
    error = await error_of(GLOB, {"pattern": "*", "path": "missing"}, tmp_path)
    assert (error.phase, error.code) == ("precondition", "precondition_failed")
    assert error.message == f"Directory does not exist: {tmp_path}/missing. Current working directory: {tmp_path}"
    f = touch(tmp_path / "file.txt")
    error = await error_of(GLOB, {"pattern": "*", "path": str(f)}, tmp_path)
    assert error.message == f"Path is not a directory: {f}"


async def test_dangling_symlink_is_still_listed(tmp_path: Path) -> None:
    (tmp_path / "dangling.txt").symlink_to(tmp_path / "nowhere")
    assert await ok_text(GLOB, {"pattern": "*.txt"}, tmp_path) == str(tmp_path / "dangling.txt")


async def test_relative_path_is_made_absolute_before_hooks_see_it(tmp_path: Path) -> None:
    f = touch(tmp_path / "src" / "a.py")
    events: list = []
    outcome = await call(GLOB, {"pattern": "*.py", "path": "src"}, tmp_path, events=events)
    assert isinstance(outcome, ToolCallResult) and outcome.model_content == str(f)
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    assert started.input == {"pattern": "*.py", "path": str(tmp_path / "src")}
