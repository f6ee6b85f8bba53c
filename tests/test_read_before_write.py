"""Read before write: Edit and Write-over-a-file go ahead only on a whole, current Read; writers
to one file queue on its lock, writers to different files do not; a cancelled write holds the
lock until it has really finished."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest

from tests.file_tools import external_write, file_env
from tests.waiting import DEADLINE_S, eventually
from tui_app.runtime.events import ToolCallError, ToolCallResult
from tui_app.runtime.executor import TurnControl, run_batch
from tui_app.runtime.permissions.broker import ApprovalAnswer, ApprovalBroker
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.tools.edit import EDIT
from tui_app.tools.write import WRITE

ACCEPT = ModePolicy(mode="acceptEdits")


@pytest.fixture
async def setup(tmp_path):
    s = file_env(tmp_path, EDIT, WRITE, policy=ACCEPT)
    yield s
    await s.fs.aclose()


async def test_edit_without_a_read_fails_before_any_dialog(tmp_path):
    s = file_env(tmp_path, EDIT)  # default mode: an Edit that got this far would ask
    target = tmp_path / "a.py"
    target.write_text("x = 1\n")
    out = await s.call("Edit", {"file_path": str(target), "old_string": "x = 1", "new_string": "x = 2"})
    assert isinstance(out, ToolCallError)
    assert (out.phase, out.code, out.side_effects) == ("precondition", "precondition_failed", "none")
    assert "has not been read yet" in out.model_content and "Read it first" in out.model_content
    assert s.rec.types() == ["ToolCallError"]  # no dialog, no start
    assert target.read_text() == "x = 1\n"


async def test_a_partial_read_is_not_a_read(setup, tmp_path):
    s = setup
    target = tmp_path / "a.py"
    target.write_text("one\ntwo\nthree\n")
    assert isinstance(await s.call("Read", {"file_path": str(target), "offset": 2, "limit": 1}), ToolCallResult)
    out = await s.call("Edit", {"file_path": str(target), "old_string": "two", "new_string": "2"})
    assert (out.phase, out.code) == ("precondition", "precondition_failed")
    assert "in part" in out.model_content
    await s.call("Read", {"file_path": str(target)})
    assert isinstance(await s.call("Edit", {"file_path": str(target), "old_string": "two", "new_string": "2"}),
                      ToolCallResult)
    assert target.read_text() == "one\n2\nthree\n"


async def test_an_outside_change_is_caught_by_the_watcher_and_then_the_edit_is_refused(tmp_path):
    s = file_env(tmp_path, EDIT, policy=ACCEPT, watch=True)
    try:
        target = tmp_path / "a.py"
        target.write_text("x = 1\n")
        await s.call("Read", {"file_path": str(target)})
        assert await s.fs.wait_until_watching()
        await external_write(target, "x = 100\n")
        await eventually(lambda: s.rec.of("FileChangedExternally"), "the watcher's report")
        [changed] = s.rec.of("FileChangedExternally")
        assert changed.path == os.path.realpath(target) and changed.change == "modified"
        assert s.fs.baseline(str(target)).stale == "modified"
        out = await s.call("Edit", {"file_path": str(target), "old_string": "x = 100", "new_string": "x = 2"})
        assert (out.phase, out.code) == ("precondition", "stale_file_baseline")
        assert "Read it again" in out.model_content
        assert target.read_text() == "x = 100\n"
    finally:
        await s.fs.aclose()


async def test_an_outside_change_is_caught_without_the_watcher(setup, tmp_path):
    s = setup  # watch=False: only the checks on the bytes themselves
    target = tmp_path / "a.py"
    target.write_text("x = 1\n")
    await s.call("Read", {"file_path": str(target)})
    await external_write(target, "x = 1\ny = 2\n")
    out = await s.call("Edit", {"file_path": str(target), "old_string": "x = 1", "new_string": "x = 3"})
    assert (out.phase, out.code) == ("precondition", "stale_file_baseline")
    assert target.read_text() == "x = 1\ny = 2\n"


async def test_a_file_deleted_since_the_read_is_stale(setup, tmp_path):
    s = setup
    target = tmp_path / "a.py"
    target.write_text("x = 1\n")
    await s.call("Read", {"file_path": str(target)})
    target.unlink()
    out = await s.call("Edit", {"file_path": str(target), "old_string": "x = 1", "new_string": "x = 3"})
    assert (out.phase, out.code) == ("precondition", "stale_file_baseline")
    assert "deleted since you read it" in out.model_content and not target.exists()


async def test_a_touch_that_keeps_the_bytes_is_not_a_change(setup, tmp_path):
    s = setup
    target = tmp_path / "a.py"
    target.write_text("x = 1\n")
    await s.call("Read", {"file_path": str(target)})
    os.utime(target, ns=(1, 1))
    assert isinstance(await s.call("Edit", {"file_path": str(target), "old_string": "1", "new_string": "2"}),
                      ToolCallResult)


async def test_a_change_while_the_dialog_is_open_is_caught_by_the_check_before_the_write(tmp_path):
    broker = ApprovalBroker(interactive=True)
    s = file_env(tmp_path, EDIT, broker=broker)
    target = tmp_path / "a.py"
    target.write_text("x = 1\n")
    await s.call("Read", {"file_path": str(target)})
    task = asyncio.ensure_future(s.call("Edit", {"file_path": str(target), "old_string": "x = 1",
                                               "new_string": "x = 2"}))
    while not broker.pending():
        await asyncio.sleep(0.01)
    [request] = broker.pending()
    await external_write(target, "x = 1  # the user typed this\n")
    assert broker.answer(request.request_id, ApprovalAnswer("allow", input_sha256=request.input_sha256))
    out = await task
    assert (out.phase, out.code, out.side_effects) == ("execute", "stale_file_baseline", "none")
    assert "changed since you read it" in out.message
    assert target.read_text() == "x = 1  # the user typed this\n"


async def test_a_diff_that_no_longer_applies_as_shown_is_not_applied(tmp_path):
    """Two edits of one file asked at once: the second dialog showed a diff of the old text; once
    the first lands, applying the second would be a different diff than the one approved."""
    broker = ApprovalBroker(interactive=True)
    s = file_env(tmp_path, EDIT, broker=broker)
    target = tmp_path / "a.py"
    target.write_text("a = 1\nb = 1\n")
    await s.call("Read", {"file_path": str(target)})
    edit = {"file_path": str(target), "old_string": "a = 1", "new_string": "a = 2"}
    first = asyncio.ensure_future(s.call("Edit", edit))
    second = asyncio.ensure_future(s.call("Edit", {**edit, "old_string": "b = 1", "new_string": "b = 2"}))
    while len(broker.pending()) < 2:
        await asyncio.sleep(0.01)
    for request in sorted(broker.pending(), key=lambda r: r.call_id):
        assert broker.answer(request.request_id, ApprovalAnswer("allow", input_sha256=request.input_sha256))
        await (first if request.call_id == "toolu_02" else second)
    assert isinstance(first.result(), ToolCallResult)
    out = second.result()
    assert (out.phase, out.code) == ("execute", "stale_file_baseline")
    assert "after the diff you approved" in out.message
    assert target.read_text() == "a = 2\nb = 1\n"


async def test_writing_a_new_file_needs_no_read_and_a_follow_up_edit_needs_none_either(setup, tmp_path):
    s = setup
    target = tmp_path / "pkg" / "new.py"
    out = await s.call("Write", {"file_path": str(target), "content": "a = 1\n"})
    assert isinstance(out, ToolCallResult) and out.model_content == f"File created successfully at: {target}"
    assert target.read_text() == "a = 1\n"
    assert isinstance(await s.call("Edit", {"file_path": str(target), "old_string": "a = 1", "new_string": "a = 2"}),
                      ToolCallResult)
    assert target.read_text() == "a = 2\n"


async def test_writing_over_a_file_that_was_not_read_is_refused(setup, tmp_path):
    s = setup
    target = tmp_path / "a.txt"
    target.write_text("keep me\n")
    out = await s.call("Write", {"file_path": str(target), "content": "gone\n"})
    assert (out.phase, out.code) == ("precondition", "precondition_failed")
    assert target.read_text() == "keep me\n"


async def test_two_edits_of_one_file_in_one_batch_both_land(setup, tmp_path):
    s = setup
    target = tmp_path / "a.py"
    target.write_text("a = 1\nb = 1\n")
    await s.call("Read", {"file_path": str(target)})
    calls = [s.call.call("Edit", {"file_path": str(target), "old_string": "a = 1", "new_string": "a = 2"}),
             s.call.call("Edit", {"file_path": str(target), "old_string": "b = 1", "new_string": "b = 2"})]
    outcomes = await run_batch(calls, s.env, TurnControl())
    assert all(isinstance(o, ToolCallResult) for o in outcomes)
    assert target.read_text() == "a = 2\nb = 2\n"


async def test_edits_of_one_file_started_together_queue_on_its_lock_and_both_land(setup, tmp_path):
    s = setup
    target = tmp_path / "a.py"
    target.write_text("".join(f"v{i} = 0\n" for i in range(6)))
    await s.call("Read", {"file_path": str(target)})
    edits = [s.call("Edit", {"file_path": str(target), "old_string": f"v{i} = 0", "new_string": f"v{i} = {i + 1}"})
             for i in range(6)]
    outcomes = await asyncio.gather(*edits)
    assert all(isinstance(o, ToolCallResult) for o in outcomes), [o.model_content for o in outcomes]
    assert target.read_text() == "".join(f"v{i} = {i + 1}\n" for i in range(6))


async def test_edits_of_two_files_do_not_wait_for_each_other(setup, tmp_path):
    s = setup
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text("a = 1\n")
    second.write_text("b = 1\n")
    await s.call("Read", {"file_path": str(first)})
    await s.call("Read", {"file_path": str(second)})
    async with s.fs.locked(str(first)):  # another writer holds a.py
        blocked = asyncio.ensure_future(s.call("Edit", {"file_path": str(first), "old_string": "1", "new_string": "2"}))
        other = await asyncio.wait_for(s.call("Edit", {"file_path": str(second), "old_string": "1", "new_string": "2"}),
                                       timeout=10)
        assert isinstance(other, ToolCallResult) and second.read_text() == "b = 2\n"
        assert not blocked.done() and first.read_text() == "a = 1\n"
    assert isinstance(await blocked, ToolCallResult) and first.read_text() == "a = 2\n"


async def test_one_file_by_two_names_is_one_file(setup, tmp_path):
    s = setup
    target = tmp_path / "real.py"
    target.write_text("x = 1\n")
    (tmp_path / "link.py").symlink_to(target)
    await s.call("Read", {"file_path": str(tmp_path / "link.py")})
    out = await s.call("Edit", {"file_path": str(target), "old_string": "1", "new_string": "2"})
    assert isinstance(out, ToolCallResult)
    out = await s.call("Edit", {"file_path": "link.py", "old_string": "2", "new_string": "3"})
    assert isinstance(out, ToolCallResult)
    assert (tmp_path / "link.py").is_symlink() and target.read_text() == "x = 3\n"


async def test_a_cancelled_write_keeps_the_lock_until_its_write_has_finished(tmp_path):
    s = file_env(tmp_path)
    path = str(tmp_path / "a.txt")
    release = threading.Event()
    order: list[str] = []

    def slow_write() -> None:
        release.wait(DEADLINE_S)
        order.append("first write done")

    first = asyncio.ensure_future(s.fs.mutate(path, slow_write))
    await asyncio.sleep(0.05)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first  # the caller is released at once …
    second = asyncio.ensure_future(s.fs.mutate(path, lambda: order.append("second write")))
    await asyncio.sleep(0.2)
    assert order == [] and not second.done()  # … but the next writer still waits for the disk
    release.set()
    await asyncio.wait_for(second, timeout=DEADLINE_S)
    assert order == ["first write done", "second write"]
