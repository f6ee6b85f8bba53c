from __future__ import annotations

import hashlib
import os
import unicodedata
from pathlib import Path

import pytest

from tests.tool_harness import RecordingFileState, call, error_of, ok_text
from tui_app.runtime.contract import ProgressSink, ToolContext
from tui_app.runtime.events import ToolCallResult, ToolCallStarted
from tui_app.tools import common
from tui_app.tools.read import LINE_CUT_MARKER, READ, ReadInput

# ---- common helpers ----------------------------------------------------------------------------


def test_resolve_path_makes_relative_paths_absolute_and_normalises() -> None:
    assert common.resolve_path("src/../a.txt", "/proj") == "/proj/a.txt"
    assert common.resolve_path("/etc/./hosts", "/proj") == "/etc/hosts"
    assert common.resolve_path("~/notes.md", "/proj") == os.path.join(os.path.expanduser("~"), "notes.md")


def test_resolve_path_is_nfc_and_leaves_symlinks_alone(tmp_path: Path) -> None:
    nfd = unicodedata.normalize("NFD", "café.txt")
    assert common.resolve_path(nfd, "/proj") == "/proj/" + unicodedata.normalize("NFC", "café.txt")
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert common.resolve_path("link/x", str(tmp_path)) == str(tmp_path / "link" / "x")


def test_is_binary_looks_for_nul_in_the_first_8k() -> None:
    assert common.is_binary(b"abc\0def")
    assert not common.is_binary("plain text, café".encode())
    assert not common.is_binary(b"a" * 8192 + b"\0")  # beyond the sniff window
    assert common.has_binary_extension("/x/photo.PNG")
    assert not common.has_binary_extension("/x/main.py")


async def test_resolve_file_path_input_rewrites_only_the_given_key() -> None:
    resolve = common.resolve_file_path_input("file_path")
    ctx = ToolContext(session_id="s", cwd="/proj", call_id="c", tool_name="Read", progress=ProgressSink(print))
    assert await resolve({"file_path": "a/../b.txt", "limit": 3}, ctx) == {"file_path": "/proj/b.txt", "limit": 3}
    assert await resolve({"limit": 3}, ctx) == {"limit": 3}


# ---- Read through the pipeline --------------------------------------------------------------------


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


async def test_lines_are_numbered_like_cat_n(tmp_path: Path) -> None:
    f = write(tmp_path / "a.txt", "one\n\ttwo\nthree\n")
    text = await ok_text(READ, {"file_path": str(f)}, tmp_path)
    assert text == "     1\tone\n     2\t\ttwo\n     3\tthree"


async def test_last_line_without_newline_and_crlf_are_shown_plainly(tmp_path: Path) -> None:
    f = write(tmp_path / "a.txt", b"\xef\xbb\xbfone\r\ntwo")
    assert await ok_text(READ, {"file_path": str(f)}, tmp_path) == "     1\tone\n     2\ttwo"


async def test_offset_and_limit_select_a_window_and_say_how_to_go_on(tmp_path: Path) -> None:
    f = write(tmp_path / "a.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    text = await ok_text(READ, {"file_path": str(f), "offset": 4, "limit": 2}, tmp_path)
    assert text == "     4\tline 4\n     5\tline 5\n\n(Showing lines 4-5 of 10. Use offset=6 to read on.)"
    tail = await ok_text(READ, {"file_path": str(f), "offset": 9}, tmp_path)
    assert tail == "     9\tline 9\n    10\tline 10"


async def test_default_window_is_2000_lines(tmp_path: Path) -> None:
    f = write(tmp_path / "big.txt", "".join(f"row {i}\n" for i in range(1, 2501)))
    text = await ok_text(READ, {"file_path": str(f)}, tmp_path)
    lines = text.split("\n")
    assert lines[0] == "     1\trow 1"
    assert lines[1999] == "  2000\trow 2000"
    assert "row 2001" not in text
    assert lines[-1] == "(Showing lines 1-2000 of 2500. Use offset=2001 to read on.)"


async def test_long_lines_are_cut_at_2000_characters_and_say_so(tmp_path: Path) -> None:
    long = "x" * 2500
    huge = "é" * 100_000  # far beyond one read piece: skipped, not kept in memory
    f = write(tmp_path / "long.txt", f"{long}\n{huge}\nafter\n")
    lines = (await ok_text(READ, {"file_path": str(f)}, tmp_path)).split("\n")
    assert lines[0] == "     1\t" + "x" * 2000 + LINE_CUT_MARKER
    assert lines[1] == "     2\t" + "é" * 2000 + LINE_CUT_MARKER
    assert lines[2] == "     3\tafter"
    assert "cut at 2000 characters" in LINE_CUT_MARKER


async def test_empty_file_is_a_notice_not_an_error(tmp_path: Path) -> None:
    f = write(tmp_path / "empty.txt", "")
    outcome = await call(READ, {"file_path": str(f)}, tmp_path)
    assert isinstance(outcome, ToolCallResult)
    assert outcome.model_content == f"The file {f} exists but is empty (0 lines)."


async def test_offset_past_the_end_is_a_notice_with_the_line_count(tmp_path: Path) -> None:
    f = write(tmp_path / "short.txt", "a\nb\nc\n")
    outcome = await call(READ, {"file_path": str(f), "offset": 10}, tmp_path)
    assert isinstance(outcome, ToolCallResult)
    assert outcome.model_content == (f"The file {f} has 3 lines; offset 10 is past the end. "
                                     "Use an offset between 1 and 3.")


async def test_directory_is_an_error_that_points_to_glob(tmp_path: Path) -> None:
    error = await error_of(READ, {"file_path": str(tmp_path)}, tmp_path)
    assert (error.phase, error.code) == ("precondition", "precondition_failed")
    assert error.model_content == (f"<tool_use_error>{tmp_path} is a directory, not a file; "
                                   "use Glob or Bash ls to list it.</tool_use_error>")


async def test_missing_file_names_the_absolute_path_and_the_cwd_for_relative_paths(tmp_path: Path) -> None:
    error = await error_of(READ, {"file_path": "nope/missing.txt"}, tmp_path)
    assert error.code == "precondition_failed"
    assert error.model_content == (f"<tool_use_error>File does not exist: {tmp_path}/nope/missing.txt. "
                                   f"Current working directory: {tmp_path}</tool_use_error>")
    absolute = await error_of(READ, {"file_path": str(tmp_path / "gone.txt")}, tmp_path)
    assert absolute.model_content == f"<tool_use_error>File does not exist: {tmp_path}/gone.txt</tool_use_error>"


async def test_binary_files_are_refused(tmp_path: Path) -> None:
    sniffed = write(tmp_path / "data.txt", b"PK\x03\x04\0\0binary")
    error = await error_of(READ, {"file_path": str(sniffed)}, tmp_path)
    assert (error.phase, error.code) == ("execute", "execution_failed")
    assert error.model_content == (f"<tool_use_error>Cannot read {sniffed}: it is a binary file. "
                                   "Read shows text files only.</tool_use_error>")
    by_name = write(tmp_path / "logo.png", b"\x89PNG\r\n")
    error = await error_of(READ, {"file_path": str(by_name)}, tmp_path)
    assert error.phase == "precondition"
    assert "it is a binary file" in error.message


async def test_fifo_is_refused_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    error = await error_of(READ, {"file_path": str(fifo)}, tmp_path)
    assert error.message == f"Cannot read {fifo}: it is not a regular file."


async def test_invalid_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    f = write(tmp_path / "latin1.txt", b"caf\xe9 ok\nnext\n")
    assert await ok_text(READ, {"file_path": str(f)}, tmp_path) == "     1\tcaf\ufffd ok\n     2\tnext"


async def test_relative_path_is_resolved_before_hooks_and_permission_see_it(tmp_path: Path) -> None:
    f = write(tmp_path / "src" / "a.txt", "hello\n")
    events: list = []
    outcome = await call(READ, {"file_path": "src/../src/a.txt"}, tmp_path, events=events)
    assert isinstance(outcome, ToolCallResult)
    assert outcome.model_content == "     1\thello"
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    assert started.input == {"file_path": str(f)}
    assert started.target == str(f)
    assert outcome.display is not None and outcome.display.title == str(f)  # type: ignore[union-attr]


async def test_schema_rejects_negative_offset_and_unknown_keys(tmp_path: Path) -> None:
    error = await error_of(READ, {"file_path": "a", "offset": -1}, tmp_path)
    assert (error.phase, error.code) == ("validate", "schema_invalid")
    error = await error_of(READ, {"file_path": "a", "pages": "1"}, tmp_path)
    assert "An unexpected parameter `pages` was provided" in error.model_content


# ---- baselines for the file-state service ----------------------------------------------------------


async def test_full_read_reports_a_full_baseline(tmp_path: Path) -> None:
    data = b"alpha\nbeta\n"
    f = write(tmp_path / "a.txt", data)
    state = RecordingFileState()
    await ok_text(READ, {"file_path": "a.txt"}, tmp_path, services={"file_state": state})
    assert state.reads == [{
        "path": str(f), "data_sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
        "mtime_ns": os.stat(f).st_mtime_ns, "full": True,
    }]


async def test_window_that_reaches_eof_from_line_one_is_full(tmp_path: Path) -> None:
    f = write(tmp_path / "a.txt", "1\n2\n3\n")
    state = RecordingFileState()
    await ok_text(READ, {"file_path": str(f), "offset": 1, "limit": 3}, tmp_path, services={"file_state": state})
    assert state.reads[0]["full"] is True


@pytest.mark.parametrize("window", [{"limit": 2}, {"offset": 2}, {"offset": 2, "limit": 1}])
async def test_partial_reads_report_full_false(tmp_path: Path, window: dict) -> None:
    f = write(tmp_path / "a.txt", "1\n2\n3\n")
    state = RecordingFileState()
    await ok_text(READ, {"file_path": str(f), **window}, tmp_path, services={"file_state": state})
    assert len(state.reads) == 1
    assert state.reads[0]["full"] is False
    assert state.reads[0]["path"] == str(f)


async def test_async_file_state_service_is_awaited(tmp_path: Path) -> None:
    f = write(tmp_path / "a.txt", "x\n")
    seen: list[bool] = []

    class AsyncState:
        async def record_read(self, **baseline: object) -> None:
            seen.append(bool(baseline["full"]))

    await ok_text(READ, {"file_path": str(f)}, tmp_path, services={"file_state": AsyncState()})
    assert seen == [True]


async def test_failed_read_reports_no_baseline(tmp_path: Path) -> None:
    f = write(tmp_path / "bin.txt", b"\0\0\0")
    state = RecordingFileState()
    await error_of(READ, {"file_path": str(f)}, tmp_path, services={"file_state": state})
    assert state.reads == []


async def test_handler_output_has_claude_code_read_shape(tmp_path: Path) -> None:
    f = write(tmp_path / "a.txt", "a\nb\nc\n")
    ctx = ToolContext(session_id="s", cwd=str(tmp_path), call_id="c", tool_name="Read",
                      progress=ProgressSink(lambda **_: None))
    raw = await READ.handler(ReadInput(file_path=str(f), offset=2, limit=1), ctx)
    assert raw.output == {"type": "text", "file": {
        "filePath": str(f), "content": "b", "numLines": 1, "startLine": 2, "totalLines": 3}}
    assert raw.text is not None and raw.text.startswith("     2\tb")


async def test_output_over_the_budget_is_cut_for_the_model_and_the_screen(tmp_path: Path) -> None:
    f = write(tmp_path / "wide.txt", "".join(f"{i:04} " + "w" * 195 + "\n" for i in range(1, 2001)))
    outcome = await call(READ, {"file_path": str(f)}, tmp_path)
    assert isinstance(outcome, ToolCallResult) and outcome.truncated
    assert isinstance(outcome.model_content, str)
    assert outcome.model_content.startswith("     1\t0001 www")
    assert outcome.model_content.endswith("limit 262144 bytes]")
    assert outcome.display is not None
    assert outcome.display.text.endswith("in total)")  # type: ignore[union-attr]
    assert len(outcome.display.text.encode()) < 262144 + 100  # type: ignore[union-attr]
