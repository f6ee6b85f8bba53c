"""One writer per session: a second `--resume` of a session another Vigil is writing is refused
with the holder's PID (headless), or offered read-only (TUI); the lock goes with its process,
however it ends."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.faults_kit import (
    kill_marked,
    marked_processes,
    new_mark,
    run_vigil,
    session_dirs,
    start_vigil,
    wait_for,
    write_script,
)
from tests.tui.helpers import screen_text
from tests.waiting import DEADLINE_S, eventually
from tui_app.runtime.log.eventlog import read_events
from tui_app.runtime.processes.session_lock import SessionInUse, SessionLock, holder


def resume_args(session: str, project: Path, script: Path, *extra: str) -> list[str]:
    return ["-p", "Again.", "--resume", session, "--script", str(script), "--cwd", str(project),
            "--allowedTools", "Bash", "--no-claude-settings", *extra]


def sleeping(mark: str) -> bool:
    for pid in marked_processes(mark):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if handle.read().startswith(b"sleep\x00120"):
                    return True
        except OSError:
            continue
    return False


def test_two_concurrent_resumes_one_runs_the_other_is_refused_naming_it(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    first = run_vigil(["-p", "Hi.", "--script", str(write_script(tmp_path / "a.json", [{"text": "Hello."}])),
                       "--cwd", str(project), "--no-claude-settings"], home)
    assert first.returncode == 0, first.stderr
    (session,) = session_dirs(home)
    slow = write_script(tmp_path / "slow.json", [{"text": "Waiting.", "tool_calls": [
        {"id": "w", "name": "Bash", "input": {"command": "sleep 120"}}]}, {"text": "Done waiting."}])
    mark = new_mark()
    writer = start_vigil(resume_args(session.name, project, slow), home, mark)
    try:
        wait_for(lambda: sleeping(mark), 60, "the first resume's command", writer)
        second = run_vigil(resume_args(session.name, project, write_script(tmp_path / "b.json", [{"text": "Me too."}])),
                           home)
        assert second.returncode == 2
        assert f"open in another Vigil (process {writer.pid})" in second.stderr
        assert "Traceback" not in second.stderr and second.stdout == ""
        listed = [json.loads(line) for line in run_vigil(["sessions", "--json"], home).stdout.splitlines()]
        assert [s["status"] for s in listed] == ["running"]

        writer.send_signal(signal.SIGKILL)  # however it ends, the kernel drops the lock
        writer.wait(DEADLINE_S)
        third = run_vigil(resume_args(session.name, project, write_script(tmp_path / "c.json", [{"text": "Back."}])),
                          home)
        assert third.returncode == 0, third.stderr
    finally:
        if writer.poll() is None:
            writer.kill()
        kill_marked(mark)
    events = read_events(session / "events.jsonl")
    assert events.warnings == []
    seqs = [e.seq for e in events.events]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs)), "two writers interleaved the log"
    assert [e.prompt for e in events.events if e.type == "TurnStarted"] == ["Hi.", "Again.", "Again."]


def test_the_lock_names_its_holder_and_goes_with_it(tmp_path):
    log = tmp_path / "s" / "events.jsonl"
    lock = SessionLock(log, "s1")
    assert holder(log) is None
    lock.acquire()
    try:
        with pytest.raises(SessionInUse) as refused:
            SessionLock(log, "s1").acquire()  # another open file description: refused even in-process
        assert refused.value.pid is not None and "vigil replay s1" in str(refused.value)
        assert holder(log) == refused.value.pid
    finally:
        lock.release()
    assert holder(log) is None
    SessionLock(log, "s1").acquire()  # free again


async def test_the_tui_offers_a_busy_session_read_only(tmp_path, monkeypatch):
    from tui_app import cli
    from tui_app.app.replay_app import ReplayApp
    from tui_app.app.screens.replay import ReplayScreen
    from tui_app.app.screens.session_in_use import SessionInUseScreen

    home = tmp_path / "home"
    monkeypatch.setenv("VIGIL_HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    script = write_script(tmp_path / "a.json", [{"text": "Hello from the first run."}])
    first = run_vigil(["-p", "Hi.", "--script", str(script), "--cwd", str(project), "--no-claude-settings"], home)
    assert first.returncode == 0, first.stderr
    (session,) = session_dirs(home)
    busy = SessionLock(session / "events.jsonl", session.name)
    busy.acquire()  # as another Vigil would
    try:
        args = cli.build_parser().parse_args(["--resume", session.name, "--script", str(script), "--cwd", str(project),
                                              "--no-claude-settings"])
        app = cli.build_tui(args, demo=False)
        assert isinstance(app, ReplayApp)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, SessionInUseScreen)
            text = screen_text(app)
            assert "open in another Vigil" in text and "read-only" in text
            await pilot.press("r")
            await eventually(lambda: isinstance(app.screen, ReplayScreen), "the replay screen")
            await eventually(lambda: "Hello from the first run." in screen_text(app), "the replayed chat")
    finally:
        busy.release()
