"""FileState on its own: what counts as a change, what the watcher reports, and what it does not
(Vigil's own writes, a touch that keeps the bytes)."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

import pytest

from tests.fakes import Recorder
from tests.file_tools import external_write, file_env
from tests.waiting import eventually
from tui_app.runtime.contract import ToolFailure
from tui_app.runtime.files.state import FileState, absolute_path
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.tools.edit import EDIT


def record_whole(fs: FileState, path) -> None:
    data = Path(path).read_bytes()
    fs.record_read(path=str(path), data_sha256=hashlib.sha256(data).hexdigest(), size=len(data),
                   mtime_ns=os.stat(path).st_mtime_ns, full=True)


async def until(predicate) -> None:
    await eventually(predicate, "the watcher's report")


def test_paths_are_absolute_normalised_and_nfc():
    assert absolute_path("a/../b.txt", "/p") == "/p/b.txt"
    assert absolute_path("cafe\u0301.txt", "/p") == "/p/caf\u00e9.txt"
    assert absolute_path("/x//y/", "/p") == "/x/y"


def test_a_partial_read_of_an_unchanged_file_keeps_the_whole_read(tmp_path):
    fs = FileState(str(tmp_path), watch=False)
    target = tmp_path / "a.txt"
    target.write_text("a\nb\n")
    record_whole(fs, target)
    fs.record_read(path=str(target), data_sha256="00", size=2, mtime_ns=os.stat(target).st_mtime_ns, full=False)
    fs.check(str(target), target.read_bytes())  # still fine
    target.write_text("a\nb\nc\n")
    os.utime(target, ns=(5, 5))
    fs.record_read(path=str(target), data_sha256="00", size=2, mtime_ns=5, full=False)
    with pytest.raises(ToolFailure) as failure:
        fs.check(str(target), target.read_bytes())
    assert failure.value.code == "precondition_failed"


async def test_the_watcher_reports_deletion_and_ignores_a_touch(tmp_path):
    rec = Recorder()
    fs = FileState(str(tmp_path), emit=rec)
    try:
        kept, gone, last = tmp_path / "kept.txt", tmp_path / "gone.txt", tmp_path / "last.txt"
        kept.write_text("same\n")
        gone.write_text("bye\n")
        last.write_text("one\n")
        record_whole(fs, kept)
        await asyncio.sleep(0)  # record_read starts the watcher from the loop
        record_whole(fs, gone)
        record_whole(fs, last)
        assert await fs.wait_until_watching()
        os.utime(kept, ns=(10**18, 10**18))
        gone.unlink()
        last.write_text("two\n")  # a marker: written after the touch, so once it is reported the touch was judged
        expected = {(str(gone), "deleted"), (str(last), "modified")}
        await until(lambda: expected <= {(e.path, e.change) for e in rec.of("FileChangedExternally")})
        # one batch may report them in either order; the touch of `kept` is not among them
        assert sorted((e.path, e.change) for e in rec.of("FileChangedExternally")) == sorted(expected)
        assert fs.baseline(str(kept)).stale is None
        fs.check(str(kept), kept.read_bytes())
    finally:
        await fs.aclose()
    assert not fs.watching


async def test_vigils_own_write_is_not_an_outside_change(tmp_path):
    s = file_env(tmp_path, EDIT, policy=ModePolicy(mode="acceptEdits"), watch=True)
    try:
        ours, theirs = tmp_path / "ours.py", tmp_path / "theirs.py"
        ours.write_text("a = 1\n")
        theirs.write_text("b = 1\n")
        await s.call("Read", {"file_path": str(ours)})
        await s.call("Read", {"file_path": str(theirs)})
        assert await s.fs.wait_until_watching()
        assert (await s.call("Edit", {"file_path": str(ours), "old_string": "1", "new_string": "2"})).type == \
            "ToolCallResult"
        await asyncio.sleep(0.1)
        await external_write(theirs, "b = 2\n")  # judged after our write: the watcher keeps order
        await until(lambda: s.rec.of("FileChangedExternally"))
        assert [e.path for e in s.rec.of("FileChangedExternally")] == [str(theirs)]
        out = await s.call("Edit", {"file_path": str(ours), "old_string": "2", "new_string": "3"})
        assert out.type == "ToolCallResult" and ours.read_text() == "a = 3\n"
    finally:
        await s.fs.aclose()


async def test_a_watcher_that_cannot_start_says_so_and_the_checks_still_hold(tmp_path):
    rec = Recorder()
    fs = FileState(str(tmp_path / "no-such-dir"), emit=rec)
    target = tmp_path / "a.txt"
    target.write_text("x\n")
    record_whole(fs, target)
    assert not await fs.wait_until_watching()
    await until(lambda: rec.of("Warning"))
    [warning] = rec.of("Warning")
    assert warning.code == "file_watch_failed" and "checked against what was read" in warning.message
    target.write_text("y\n")
    with pytest.raises(ToolFailure) as failure:
        fs.check(str(target), target.read_bytes())
    assert failure.value.code == "stale_file_baseline"
    await fs.aclose()
