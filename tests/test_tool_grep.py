from __future__ import annotations

import asyncio
import dataclasses
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.tool_harness import call, error_of, ok_text
from tests.waiting import DEADLINE_S, eventually
from tui_app.runtime.contract import TimeoutPolicy
from tui_app.runtime.events import ToolCallError, ToolCallResult, ToolCallStarted
from tui_app.runtime.registry import model_schema
from tui_app.runtime.validation import validate_input
from tui_app.tools.grep import python_backend as grep_py
from tui_app.tools.grep import rg_backend as grep_rg
from tui_app.tools.grep.search import NEWLINE_MESSAGE, GrepQuery, split_globs
from tui_app.tools.grep.tool import GREP, GrepInput
from tui_app.tools.ignore import RuleSet

RG = grep_rg.find_rg()  # the rg installed with Vigil (the pinned ripgrep wheel)
BASE = 1_700_000_000

BACKENDS = [
    pytest.param("python", id="python"),
    pytest.param("rg", id="rg"),
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    use(monkeypatch, request.param)
    return request.param


def use(monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    monkeypatch.setattr(grep_rg, "find_rg", (lambda: RG) if backend == "rg" else (lambda: None))


class Tree:
    """Files with distinct modification times: the first one written is the newest."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.age = 0

    def add(self, rel: str, content: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8", newline="")
        else:
            path.write_bytes(content)
        self.age += 10
        os.utime(path, (BASE - self.age, BASE - self.age))
        return path

    def p(self, rel: str) -> str:
        return str(self.root / rel)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return build_tree(tmp_path / "proj")


def build_tree(root: Path) -> Tree:
    t = Tree(root)
    t.add("src/app.py", "import os\ndef main():\n    print('Hello')\n    return 0\n")
    t.add("src/util.py", "def helper():\n    return 'hello world'\n# TODO: hello again\n")
    t.add("src/web/index.ts", "const hello = 1;\nexport default hello;\n")
    t.add("src/web/view.tsx", "<Hello />\n")
    t.add("src/.hidden.py", "hello hidden\n")
    t.add(".config/settings.json", '{"hello": true}\n')
    t.add(".gitignore", "build/\n*.log\n!keep.log\nsecret*\n")
    t.add("build/out.py", "hello build\n")
    t.add("logs/app.log", "hello log\n")
    t.add("logs/keep.log", "hello keep\n")
    t.add("secret.txt", "hello secret\n")
    t.add("docs/README.md", "# Hello\n\nSay hello.\n\nfiller\nhello\n")
    t.add("docs/.gitignore", "drafts/\n")
    t.add("docs/drafts/d.md", "hello draft\n")
    t.add("data/blob.bin", b"hello\0binary\n")
    t.add("data/latin.txt", b"caf\xe9 hello\n")
    t.add("crlf.txt", "hello\r\nworld\r\n")
    t.add("utf16.txt", "\ufeffhello utf16\n".encode("utf-16-le"))
    t.add("multi.txt", "start\nmiddle\nend\n")
    t.add("bom.txt", b"\xef\xbb\xbfhello bom\n")
    t.add("Makefile", "hello:\n\techo hello\n")
    (t.root / "link.py").symlink_to(t.root / "src" / "app.py")
    return t


# ---- the input schema ---------------------------------------------------------------------------


def test_schema_shows_the_dashed_names() -> None:
    properties = model_schema(GREP)["properties"]
    assert {"-i", "-n", "-A", "-B", "-C"} <= set(properties)
    assert not {"case_insensitive", "line_numbers", "after", "before", "context"} & set(properties)
    assert properties["output_mode"]["enum"] == ["content", "files_with_matches", "count"]


def test_dashed_keys_validate_and_reach_the_model_fields() -> None:
    data, issues = validate_input(GREP, {"pattern": "x", "-i": True, "-C": 2})
    assert issues == [] and data == {"pattern": "x", "-i": True, "-C": 2}
    parsed = GREP.parse(data)
    assert isinstance(parsed, GrepInput) and parsed.case_insensitive is True and parsed.context == 2
    _, issues = validate_input(GREP, {"pattern": "x", "-i": "yes"})
    assert [i.kind for i in issues] == ["wrong_type"]
    # the Python-side names are not part of the schema the model sees, so they are refused
    _, issues = validate_input(GREP, {"pattern": "x", "case_insensitive": True})
    assert [(i.kind, i.param) for i in issues] == [("unexpected", "case_insensitive")]


async def test_hooks_and_permission_see_the_absolute_path(tree: Tree) -> None:
    events: list = []
    await call(GREP, {"pattern": "zebra", "path": "src/../docs"}, tree.root, events=events)
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    assert started.input == {"pattern": "zebra", "path": tree.p("docs")}
    assert started.target == f"zebra in {tree.p('docs')}"


def test_split_globs() -> None:
    assert split_globs("*.ts *.tsx") == ("*.ts", "*.tsx")
    assert split_globs("*.ts,*.tsx") == ("*.ts", "*.tsx")
    assert split_globs("*.{ts,tsx}") == ("*.{ts,tsx}",)
    assert split_globs(None) == ()


# ---- the three output modes ---------------------------------------------------------------------


async def test_files_with_matches_lists_newest_first(tree: Tree, backend: str) -> None:
    text = await ok_text(GREP, {"pattern": "hello", "path": "src"}, tree.root)
    assert text == f"Found 2 files\n{tree.p('src/util.py')}\n{tree.p('src/web/index.ts')}"
    text = await ok_text(GREP, {"pattern": "hello", "-i": True, "path": "src"}, tree.root)
    assert text == "\n".join(["Found 4 files", tree.p("src/app.py"), tree.p("src/util.py"),
                              tree.p("src/web/index.ts"), tree.p("src/web/view.tsx")])


async def test_content_mode_numbers_lines_by_default(tree: Tree, backend: str) -> None:
    text = await ok_text(GREP, {"pattern": "hello", "output_mode": "content", "path": "src"}, tree.root)
    util, index = tree.p("src/util.py"), tree.p("src/web/index.ts")
    assert text == "\n".join([
        f"{util}:2:    return 'hello world'", f"{util}:3:# TODO: hello again",
        f"{index}:1:const hello = 1;", f"{index}:2:export default hello;",
    ])
    plain = await ok_text(GREP, {"pattern": "hello", "output_mode": "content", "path": "src/web", "-n": False},
                          tree.root)
    assert plain == f"{index}:const hello = 1;\n{index}:export default hello;"


async def test_context_lines_and_group_separators(tree: Tree, backend: str) -> None:
    readme = tree.p("docs/README.md")
    text = await ok_text(GREP, {"pattern": "hello", "output_mode": "content", "-i": True, "-C": 1,
                                "path": "docs"}, tree.root)
    # the context of neighbouring matches joins into one group: no separator
    assert text == "\n".join([f"{readme}:1:# Hello", f"{readme}-2-", f"{readme}:3:Say hello.", f"{readme}-4-",
                              f"{readme}-5-filler", f"{readme}:6:hello"])
    after = await ok_text(GREP, {"pattern": "Say", "output_mode": "content", "-A": 1, "path": "docs"}, tree.root)
    assert after == f"{readme}:3:Say hello.\n{readme}-4-"
    before = await ok_text(GREP, {"pattern": "^hello", "output_mode": "content", "-B": 1, "-C": 5,
                                  "path": "docs"}, tree.root)
    assert before == f"{readme}-5-filler\n{readme}:6:hello"


async def test_context_groups_are_separated(tree: Tree, backend: str) -> None:
    f = tree.add("gaps.txt", "hit 1\na\nb\nc\nd\nhit 2\n")
    text = await ok_text(GREP, {"pattern": "hit", "output_mode": "content", "-C": 1, "path": str(f)}, tree.root)
    assert text == f"{f}:1:hit 1\n{f}-2-a\n--\n{f}-5-d\n{f}:6:hit 2"


async def test_count_mode_counts_occurrences(tree: Tree, backend: str) -> None:
    text = await ok_text(GREP, {"pattern": "hello", "output_mode": "count", "path": "src"}, tree.root)
    assert text == (f"{tree.p('src/util.py')}:2\n{tree.p('src/web/index.ts')}:2\n\n"
                    "Found 4 total occurrences across 2 files.")
    text = await ok_text(GREP, {"pattern": "l", "output_mode": "count", "path": "src/web/index.ts"}, tree.root)
    assert text == f"{tree.p('src/web/index.ts')}:5\n\nFound 5 total occurrences across 1 file."


async def test_no_match_texts(tree: Tree, backend: str) -> None:
    assert await ok_text(GREP, {"pattern": "zebra"}, tree.root) == "No files found"
    assert await ok_text(GREP, {"pattern": "zebra", "output_mode": "content"}, tree.root) == "No matches found"
    assert await ok_text(GREP, {"pattern": "zebra", "output_mode": "count"}, tree.root) == "No matches found"


async def test_case_insensitive(tree: Tree, backend: str) -> None:
    view = tree.p("src/web/view.tsx")
    assert await ok_text(GREP, {"pattern": "hello", "path": view}, tree.root) == "No files found"
    assert await ok_text(GREP, {"pattern": "hello", "path": view, "-i": True}, tree.root) == f"Found 1 file\n{view}"


async def test_glob_and_type_filters(tree: Tree, backend: str) -> None:
    ts = await ok_text(GREP, {"pattern": "hello", "-i": True, "glob": "*.{ts,tsx}"}, tree.root)
    assert ts == f"Found 2 files\n{tree.p('src/web/index.ts')}\n{tree.p('src/web/view.tsx')}"
    # a glob or a type that names a hidden file searches it, as in rg; it never lifts .gitignore
    anchored = await ok_text(GREP, {"pattern": "hello", "-i": True, "glob": "src/*.py"}, tree.root)
    assert anchored == "\n".join(["Found 3 files", tree.p("src/app.py"), tree.p("src/util.py"),
                                  tree.p("src/.hidden.py")])
    for by_name in ({"glob": "*.py"}, {"type": "py"}):
        py = await ok_text(GREP, {"pattern": "hello", **by_name}, tree.root)
        assert py == f"Found 2 files\n{tree.p('src/util.py')}\n{tree.p('src/.hidden.py')}"
    make = await ok_text(GREP, {"pattern": "hello", "type": "make"}, tree.root)
    assert make == f"Found 1 file\n{tree.p('Makefile')}"
    excluded = await ok_text(GREP, {"pattern": "hello", "glob": "!*.{py,md,txt}"}, tree.root)
    assert tree.p("src/util.py") not in excluded and tree.p("docs/README.md") not in excluded
    assert tree.p("Makefile") in excluded


async def test_head_limit_keeps_the_first_entries(tree: Tree, backend: str) -> None:
    files = await ok_text(GREP, {"pattern": "hello", "-i": True, "path": "src", "head_limit": 2}, tree.root)
    assert files == f"Found 4 files (showing the first 2)\n{tree.p('src/app.py')}\n{tree.p('src/util.py')}"
    lines = await ok_text(GREP, {"pattern": "hello", "output_mode": "content", "path": "src", "head_limit": 1},
                          tree.root)
    assert lines == f"{tree.p('src/util.py')}:2:    return 'hello world'\n\n(Showing the first 1 of 4 lines.)"
    counts = await ok_text(GREP, {"pattern": "hello", "output_mode": "count", "path": "src", "head_limit": 1},
                           tree.root)
    assert counts == (f"{tree.p('src/util.py')}:2\n\nFound 4 total occurrences across 2 files. "
                      "(Showing the first 1 file.)")


async def test_gitignore_hidden_binary_and_symlinks(tree: Tree, backend: str) -> None:
    text = await ok_text(GREP, {"pattern": "hello"}, tree.root)
    found = text.splitlines()[1:]
    for skipped in ("build/out.py", "logs/app.log", "secret.txt", "docs/drafts/d.md",  # .gitignore
                    "src/.hidden.py", ".config/settings.json",  # hidden
                    "data/blob.bin", "link.py"):  # binary, symlink
        assert tree.p(skipped) not in found, skipped
    for kept in ("logs/keep.log", "src/util.py", "data/latin.txt", "crlf.txt", "utf16.txt", "bom.txt", "Makefile"):
        assert tree.p(kept) in found, kept


async def test_gitignore_of_a_parent_directory_applies(tree: Tree, backend: str) -> None:
    text = await ok_text(GREP, {"pattern": "hello", "path": "logs"}, tree.root)
    assert text == f"Found 1 file\n{tree.p('logs/keep.log')}"


async def test_an_explicit_path_inside_an_ignored_directory_is_searched(tree: Tree, backend: str) -> None:
    assert await ok_text(GREP, {"pattern": "hello", "path": "build"}, tree.root) == (
        f"Found 1 file\n{tree.p('build/out.py')}")
    hidden = tree.p("src/.hidden.py")
    assert await ok_text(GREP, {"pattern": "hello", "path": hidden}, tree.root) == f"Found 1 file\n{hidden}"
    assert await ok_text(GREP, {"pattern": "hello", "path": "data/blob.bin"}, tree.root) == "No files found"


async def test_text_oddities_are_shown_cleanly(tree: Tree, backend: str) -> None:
    for rel, shown in [("data/latin.txt", "caf\ufffd hello"), ("crlf.txt", "hello"), ("utf16.txt", "hello utf16"),
                       ("bom.txt", "hello bom")]:
        text = await ok_text(GREP, {"pattern": "hello", "output_mode": "content", "path": rel}, tree.root)
        assert text == f"{tree.p(rel)}:1:{shown}"


async def test_multiline(tree: Tree, backend: str) -> None:
    multi = tree.p("multi.txt")
    text = await ok_text(GREP, {"pattern": "start.*end", "multiline": True, "output_mode": "content",
                                "path": "multi.txt"}, tree.root)
    assert text == f"{multi}:1:start\n{multi}:2:middle\n{multi}:3:end"
    single = await ok_text(GREP, {"pattern": "start.*end", "path": "multi.txt"}, tree.root)
    assert single == "No files found"


async def test_invalid_regex_is_a_clear_error(tree: Tree, backend: str) -> None:
    error = await error_of(GREP, {"pattern": "(unclosed"}, tree.root)
    assert (error.phase, error.code) == ("execute", "execution_failed")
    assert error.message.startswith("Invalid regular expression '(unclosed': ")
    assert error.model_content.startswith("<tool_use_error>Invalid regular expression")


async def test_newline_without_multiline_and_unknown_type(tree: Tree, backend: str) -> None:
    error = await error_of(GREP, {"pattern": "hello\\nworld"}, tree.root)
    assert error.message == NEWLINE_MESSAGE
    error = await error_of(GREP, {"pattern": "x", "type": "nosuchtype"}, tree.root)
    assert error.message == "Unknown file type: 'nosuchtype'. Use glob instead (e.g. glob: \"*.ext\")."


async def test_missing_path_fails_before_searching(tree: Tree) -> None:
    error = await error_of(GREP, {"pattern": "x", "path": "nope"}, tree.root)
    assert (error.phase, error.code) == ("precondition", "precondition_failed")
    assert error.message == f"Path does not exist: {tree.root}/nope. Current working directory: {tree.root}"


# ---- both backends, one output ------------------------------------------------------------------

PARITY_CALLS: list[dict[str, Any]] = [
    {"pattern": "hello"},
    {"pattern": "hello", "-i": True},
    {"pattern": "hello", "output_mode": "content"},
    {"pattern": "hello", "output_mode": "content", "-i": True, "-C": 1},
    {"pattern": "hello", "output_mode": "content", "-A": 1, "-n": False},
    {"pattern": "hello", "output_mode": "content", "-B": 2},
    {"pattern": "hello", "output_mode": "count", "-i": True},
    {"pattern": "l+", "output_mode": "count"},
    {"pattern": "o", "output_mode": "count"},
    {"pattern": "\\bhello\\b", "output_mode": "content"},
    {"pattern": "hello", "glob": "*.py"},
    {"pattern": "hello", "glob": "*.{ts,tsx}", "-i": True},
    {"pattern": "hello", "glob": "!*.md"},
    {"pattern": "hello", "glob": "src/*.py", "-i": True},
    {"pattern": "hello", "glob": "*.py *.ts"},
    {"pattern": "hello", "type": "py"},
    {"pattern": "hello", "type": "make"},
    {"pattern": "hello", "type": "md", "-i": True},
    {"pattern": "start.*end", "multiline": True, "output_mode": "content"},
    {"pattern": "^end$", "multiline": True, "output_mode": "count"},
    {"pattern": "hello", "path": "docs", "-i": True, "output_mode": "content"},
    {"pattern": "hello", "path": "build"},
    {"pattern": "hello", "path": "src/util.py", "output_mode": "content"},
    {"pattern": "hello", "path": "data/blob.bin"},
    {"pattern": "hello", "head_limit": 2},
    {"pattern": "hello", "output_mode": "content", "head_limit": 3},
    {"pattern": "hello", "output_mode": "count", "head_limit": 1},
    {"pattern": "zebra", "output_mode": "content"},
    {"pattern": "hello\\nworld"},
    {"pattern": "x", "type": "nosuchtype"},
]


async def test_ripgrep_and_python_give_the_same_output(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    def seen(outcome: ToolCallResult | ToolCallError) -> tuple[str, Any]:
        if isinstance(outcome, ToolCallError):
            return outcome.code, outcome.model_content
        return "ok", outcome.model_content

    for tool_input in PARITY_CALLS:
        results = {}
        for backend in ("rg", "python"):
            use(monkeypatch, backend)
            results[backend] = seen(await call(GREP, tool_input, tree.root))
        assert results["rg"] == results["python"], tool_input


async def test_invalid_regex_fails_the_same_way_in_both(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    for backend in ("rg", "python"):
        use(monkeypatch, backend)
        error = await error_of(GREP, {"pattern": "a[b"}, tree.root)
        assert error.code == "execution_failed"
        assert error.message.startswith("Invalid regular expression 'a[b': "), backend


# ---- running rg ---------------------------------------------------------------------------------


def fake_rg(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-rg"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return str(script)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers signal 0; it is dead for our purposes
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"


async def wait_for_file(path: Path) -> str:
    return await eventually(lambda: path.exists() and path.read_text().strip() and path.read_text(), str(path))


async def test_timeout_kills_the_whole_rg_process_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pids = tmp_path / "pids"
    script = fake_rg(tmp_path, f"sleep 60 &\necho $$ $! > {pids}\nwait\n")
    monkeypatch.setattr(grep_rg, "find_rg", lambda: script)
    quick = dataclasses.replace(GREP, timeout=TimeoutPolicy(default_ms=300))
    outcome = await call(quick, {"pattern": "x"}, tmp_path)
    assert isinstance(outcome, ToolCallError) and outcome.code == "timeout"
    shell, child = map(int, (await wait_for_file(pids)).split())
    deadline = time.monotonic() + DEADLINE_S  # the kernel takes a killed group away in its own time
    while (alive(shell) or alive(child)) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not alive(shell) and not alive(child)


async def test_cancelling_the_call_kills_rg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pids = tmp_path / "pids"
    script = fake_rg(tmp_path, f"sleep 60 &\necho $$ $! > {pids}\nwait\n")
    monkeypatch.setattr(grep_rg, "find_rg", lambda: script)
    task = asyncio.ensure_future(call(GREP, {"pattern": "x"}, tmp_path))
    shell, child = map(int, (await wait_for_file(pids)).split())
    task.cancel()
    outcome = await task
    assert isinstance(outcome, ToolCallError) and outcome.code == "cancelled"
    deadline = time.monotonic() + DEADLINE_S  # the TERM, and the KILL after the grace, take their time
    while (alive(shell) or alive(child)) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not alive(shell) and not alive(child)


async def test_a_search_cancelled_while_rg_is_still_starting_leaves_no_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a busy machine the cancellation can land after rg was forked but before asyncio has
    connected its pipes; rg's whole group must still go (asyncio alone kills only the leader)."""
    pids = tmp_path / "pids"
    script = fake_rg(tmp_path, f"sleep 60 &\necho $$ $! > {pids}\nwait\n")
    monkeypatch.setattr(grep_rg, "find_rg", lambda: script)
    real_exec = asyncio.create_subprocess_exec
    started = asyncio.Event()

    async def slow_to_connect(*args, **kw):  # type: ignore[no-untyped-def]
        process = await real_exec(*args, **kw)
        await wait_for_file(pids)  # the group is running
        started.set()
        await asyncio.sleep(0.5)  # the pipes are still being connected when the cancel comes
        return process

    monkeypatch.setattr(grep_rg.asyncio, "create_subprocess_exec", slow_to_connect)
    task = asyncio.ensure_future(call(GREP, {"pattern": "x"}, tmp_path))
    await asyncio.wait_for(started.wait(), 30)
    task.cancel()
    outcome = await task
    assert isinstance(outcome, ToolCallError) and outcome.code == "cancelled"
    shell, child = map(int, pids.read_text().split())
    deadline = time.monotonic() + DEADLINE_S
    while (alive(shell) or alive(child)) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not alive(shell) and not alive(child)


async def test_rg_exit_2_is_an_error_with_its_first_stderr_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = fake_rg(tmp_path, "echo 'something broke: details' >&2\necho 'more' >&2\nexit 2\n")
    monkeypatch.setattr(grep_rg, "find_rg", lambda: script)
    error = await error_of(GREP, {"pattern": "x"}, tmp_path)
    assert (error.code, error.message) == ("execution_failed", "something broke: details")


async def test_rg_exit_2_without_a_message_keeps_the_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # rg exits 2 when a file could not be read; --no-messages silenced that, the matches are good
    f = tmp_path / "a.txt"
    f.write_text("x\n")
    script = fake_rg(tmp_path, f"printf '{f}\\0'\nexit 2\n")
    monkeypatch.setattr(grep_rg, "find_rg", lambda: script)
    assert await ok_text(GREP, {"pattern": "x"}, tmp_path) == f"Found 1 file\n{f}"


def test_rg_arguments_pin_down_ignore_rules_and_output_format() -> None:
    query = GrepQuery(pattern="-dash", root="/p", mode="content", globs=("*.py",), file_type="py",
                      ignore_case=True, before=1, after=2)
    args = grep_rg.rg_args("rg", query)
    assert args[-4:] == ["--regexp", "-dash", "--", "/p"]  # a pattern starting with - is not an option
    for flag in ("--no-config", "--no-require-git", "--null", "--with-filename", "--ignore-case", "--line-number"):
        assert flag in args
    assert args[args.index("--glob") + 1] == "*.py" and args[args.index("--type") + 1] == "py"
    assert args[args.index("--before-context") + 1] == "1" and args[args.index("--after-context") + 1] == "2"


# ---- pieces of the Python backend ---------------------------------------------------------------


def test_rule_set_matches_entries_not_their_parents(tmp_path: Path) -> None:
    rules = RuleSet(str(tmp_path), ["build/", "*.log", "!keep.log", "/root-only.txt", "out/**"])
    assert rules.match(str(tmp_path / "build"), is_dir=True) is True
    assert rules.match(str(tmp_path / "build"), is_dir=False) is None  # `build/` is for directories
    assert rules.match(str(tmp_path / "build" / "x.py"), is_dir=False) is None
    assert rules.match(str(tmp_path / "a" / "b.log"), is_dir=False) is True
    assert rules.match(str(tmp_path / "keep.log"), is_dir=False) is False
    assert rules.match(str(tmp_path / "root-only.txt"), is_dir=False) is True
    assert rules.match(str(tmp_path / "sub" / "root-only.txt"), is_dir=False) is None
    assert rules.match(str(tmp_path / "out" / "deep" / "f"), is_dir=False) is True
    assert rules.match("/elsewhere/x.log", is_dir=False) is None


def test_count_matches_follows_rust_for_empty_matches() -> None:
    import re

    assert grep_py.count_matches(re.compile("a*"), "baa") == 2
    assert grep_py.count_matches(re.compile("o"), "foo boo") == 4


def test_python_search_stops_when_asked(tree: Tree) -> None:
    stop = threading.Event()
    stop.set()
    assert grep_py.search(GrepQuery(pattern="hello", root=str(tree.root)), stop) == []
