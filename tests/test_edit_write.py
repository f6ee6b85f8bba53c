"""Edit, MultiEdit and Write as the model and the user see them: exact replacement, clear
refusals, the diff in the dialog is the diff applied, atomic writes that keep the file's mode,
line endings and bytes, and the structured patch in the result."""

from __future__ import annotations

import asyncio
import os
import stat

import pytest

from tests.file_tools import file_env
from tui_app.runtime.events import ToolCallError, ToolCallResult
from tui_app.runtime.files.diffing import apply_hunks
from tui_app.runtime.hooks.runner import NoHooks
from tui_app.runtime.permissions.broker import ApprovalAnswer, ApprovalBroker
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.tools.edit import EDIT, MULTI_EDIT
from tui_app.tools.write import WRITE

ACCEPT = ModePolicy(mode="acceptEdits")


@pytest.fixture
async def s(tmp_path):
    env = file_env(tmp_path, EDIT, MULTI_EDIT, WRITE, policy=ACCEPT)
    yield env
    await env.fs.aclose()


async def read_and_edit(s, path, **edit):
    await s.call("Read", {"file_path": str(path)})
    return await s.call("Edit", {"file_path": str(path), **edit})


async def test_an_ambiguous_old_string_is_refused_with_the_count(s, tmp_path):
    target = tmp_path / "a.py"
    target.write_text("x = 1\nx = 1\nx = 1\n")
    out = await read_and_edit(s, target, old_string="x = 1", new_string="x = 2")
    assert (out.phase, out.code) == ("precondition", "ambiguous_target")
    assert "Found 3 matches" in out.model_content and "replace_all" in out.model_content
    out = await s.call("Edit", {"file_path": str(target), "old_string": "x = 1", "new_string": "x = 2",
                                "replace_all": True})
    assert isinstance(out, ToolCallResult) and "(3 replacements)" in out.model_content
    assert target.read_text() == "x = 2\nx = 2\nx = 2\n"


@pytest.mark.parametrize(("old", "new", "words"), [
    ("same", "same", "No changes to make"),
    ("absent", "x", "String to replace not found"),
])
async def test_edits_that_cannot_apply_are_refused_before_they_run(s, tmp_path, old, new, words):
    target = tmp_path / "a.txt"
    target.write_text("same text\n")
    out = await read_and_edit(s, target, old_string=old, new_string=new)
    assert (out.phase, out.code) == ("precondition", "precondition_failed")
    assert words in out.model_content
    assert s.rec.of("ToolCallStarted") == [] or all(e.tool == "Read" for e in s.rec.of("ToolCallStarted"))


async def test_editing_a_missing_file_says_so_and_an_empty_old_string_creates_it(s, tmp_path):
    target = tmp_path / "new.txt"
    out = await s.call("Edit", {"file_path": str(target), "old_string": "a", "new_string": "b"})
    assert out.code == "precondition_failed" and "does not exist" in out.model_content
    out = await s.call("Edit", {"file_path": str(target), "old_string": "", "new_string": "hello\n"})
    assert isinstance(out, ToolCallResult) and target.read_text() == "hello\n"
    assert out.display.operation == "create"


async def test_the_result_has_a_structured_patch_and_a_snippet_for_the_model(s, tmp_path):
    target = tmp_path / "a.py"
    old = "".join(f"line {i}\n" for i in range(1, 21))
    target.write_text(old)
    out = await read_and_edit(s, target, old_string="line 10\n", new_string="line ten\nline ten and a half\n")
    assert out.model_content.startswith(f"The file {target} has been updated.")
    assert "    10\tline ten\n    11\tline ten and a half" in out.model_content
    display = out.display
    assert display.kind == "file_diff" and display.path == str(target)
    assert (display.added, display.removed) == (2, 1)
    assert apply_hunks(old, display.hunks) == target.read_text()
    assert display.old_text == old and display.new_text == target.read_text()


class SeeingHooks(NoHooks):
    def __init__(self) -> None:
        self.seen: list[dict] = []
        self.responses: list = []

    async def pre_tool_use(self, call):
        self.seen.append(dict(call.tool_input))
        return await super().pre_tool_use(call)

    async def post_tool_use(self, call, tool_response, duration_ms):
        self.responses.append(tool_response)
        return await super().post_tool_use(call, tool_response, duration_ms)


async def test_relative_paths_become_absolute_before_hooks_see_them(tmp_path):
    hooks = SeeingHooks()
    s = file_env(tmp_path, EDIT, WRITE, policy=ACCEPT, hooks=hooks)
    out = await s.call("Write", {"file_path": "sub/a.txt", "content": "x\n"})
    assert isinstance(out, ToolCallResult)
    assert hooks.seen[-1]["file_path"] == str(tmp_path / "sub" / "a.txt")
    assert s.rec.of("ToolCallStarted")[-1].input["file_path"] == str(tmp_path / "sub" / "a.txt")


async def test_the_dialog_shows_the_diff_that_is_then_applied(tmp_path):
    broker = ApprovalBroker(interactive=True)
    s = file_env(tmp_path, EDIT, broker=broker)
    target = tmp_path / "a.py"
    target.write_text("def f():\n    return 1\n")
    await s.call("Read", {"file_path": "a.py"})
    task = asyncio.ensure_future(s.call("Edit", {"file_path": "a.py", "old_string": "return 1",
                                                 "new_string": "return 2"}))
    while not broker.pending():
        await asyncio.sleep(0.01)
    [request] = broker.pending()
    [asked] = s.rec.of("PermissionRequested")
    assert asked.preview_kind == "diff" and asked.input["file_path"] == str(target)
    assert asked.preview == (f"--- a{target}\n+++ b{target}\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n"
                             "+    return 2\n")
    assert request.preview.summary == f"Edit {target} (+1 -1)"
    broker.answer(request.request_id, ApprovalAnswer("allow", input_sha256=request.input_sha256))
    out = await task
    assert isinstance(out, ToolCallResult)
    assert out.display.hunks == asked.preview_display.hunks
    assert apply_hunks("def f():\n    return 1\n", asked.preview_display.hunks) == target.read_text()


async def test_multi_edit_applies_all_or_nothing(s, tmp_path):
    target = tmp_path / "a.py"
    target.write_text("a = 1\nb = 1\n")
    await s.call("Read", {"file_path": str(target)})
    out = await s.call("MultiEdit", {"file_path": str(target), "edits": [
        {"old_string": "a = 1", "new_string": "a = 2"}, {"old_string": "c = 1", "new_string": "c = 2"}]})
    assert (out.code, out.phase) == ("precondition_failed", "precondition")
    assert out.model_content.startswith("<tool_use_error>Edit 2 of 2: String to replace not found")
    assert target.read_text() == "a = 1\nb = 1\n"
    out = await s.call("MultiEdit", {"file_path": str(target), "edits": [
        {"old_string": "a = 1", "new_string": "a = 2"}, {"old_string": "a = 2\nb = 1", "new_string": "ab = 3"}]})
    assert isinstance(out, ToolCallResult) and out.tool == "MultiEdit"
    assert target.read_text() == "ab = 3\n"


async def test_multi_edit_has_its_own_schema_and_stays_off_the_menu(s, tmp_path):
    out = await s.call("MultiEdit", {"file_path": str(tmp_path / "a"), "old_string": "a", "new_string": "b"})
    assert out.code == "schema_invalid" and "`edits` is missing" in out.model_content
    names = [t.name for t in s.env.registry.model_tools()]
    assert "Edit" in names and "MultiEdit" not in names


async def test_writes_are_atomic_and_keep_mode_symlinks_line_endings_and_other_bytes(s, tmp_path):
    script = tmp_path / "run.sh"
    script.write_bytes(b"#!/bin/sh\r\necho caf\xe9\r\nexit 0\r\n")  # CRLF, and a Latin-1 byte
    script.chmod(0o750)
    (tmp_path / "link.sh").symlink_to(script)
    out = await read_and_edit(s, tmp_path / "link.sh", old_string="exit 0\n", new_string="echo done\nexit 0\n")
    assert isinstance(out, ToolCallResult), out.model_content
    assert script.read_bytes() == b"#!/bin/sh\r\necho caf\xe9\r\necho done\r\nexit 0\r\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert (tmp_path / "link.sh").is_symlink()
    assert [p.name for p in tmp_path.iterdir() if ".vigil-" in p.name] == []  # no temp file left
    out.model_dump_json()  # the undecodable byte does not break the event log


async def test_a_new_file_gets_the_usual_mode(s, tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    await s.call("Write", {"file_path": str(tmp_path / "n.txt"), "content": "x"})
    assert stat.S_IMODE((tmp_path / "n.txt").stat().st_mode) == 0o666 & ~umask


async def test_write_over_a_read_file_reports_the_update_and_its_hook_response(tmp_path):
    hooks = SeeingHooks()
    s = file_env(tmp_path, WRITE, policy=ACCEPT, hooks=hooks)
    target = tmp_path / "a.txt"
    target.write_text("old\n")
    await s.call("Read", {"file_path": str(target)})
    out = await s.call("Write", {"file_path": str(target), "content": "new\n"})
    assert isinstance(out, ToolCallResult) and out.display.operation == "update"
    assert (out.display.added, out.display.removed) == (1, 1)
    assert "has been updated" in out.model_content and target.read_text() == "new\n"
    response = hooks.responses[-1]  # Claude Code's shape, for PostToolUse hooks
    assert response["type"] == "update" and response["filePath"] == str(target)
    assert response["content"] == "new\n" and response["originalFile"] == "old\n"
    assert response["structuredPatch"] == [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
                                            "lines": ["-old", "+new"]}]


async def test_writing_into_a_directory_is_a_clear_error(s, tmp_path):
    out = await s.call("Write", {"file_path": str(tmp_path), "content": "x"})
    assert isinstance(out, ToolCallError) and "is a directory" in out.model_content
