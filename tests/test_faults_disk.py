"""A full disk, for real: `VIGIL_HOME` (or a session's artifacts) on a 2 MB tmpfs.

Mounting needs root (the tests run as root here and in CI). Where it is not allowed these tests
fail under CI and skip elsewhere; the log's side is also covered without a mount by the
fault-injecting writers in test_eventlog.py and below.
"""

from __future__ import annotations

import errno
import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from tests.faults_kit import run_vigil, session_dirs, write_script
from tests.needs import require
from tui_app.runtime.log import eventlog
from tui_app.runtime.log.eventlog import read_events, read_incomplete

BIG_OUTPUT = "head -c 10000000 /dev/zero | tr '\\0' x | fold -w 100"


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs, unmounted afterwards; `resize(size)` grows it (the user freed space)."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        require(f"cannot mount a small tmpfs here ({done.stderr.strip()}); the fault-injecting writers in "
                "test_eventlog.py and test_faults_disk.py cover the log without one")

    class Disk:
        path = mount_point

        @staticmethod
        def resize(size: str) -> None:
            subprocess.run(["mount", "-o", f"remount,size={size}", str(mount_point)], check=True)

        @staticmethod
        def fill() -> None:
            with open(mount_point / "filler", "wb") as handle:
                try:
                    while True:
                        handle.write(b"\0" * 65536)
                        handle.flush()
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC

    try:
        yield Disk
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def headless(tmp_path: Path, home: Path, steps: list[dict], *extra: str) -> subprocess.CompletedProcess:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    script = write_script(tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json", steps)
    return run_vigil(["-p", "Go.", "--script", str(script), "--cwd", str(project), "--allowedTools", "Bash",
                      "--no-claude-settings", *extra], home)


def sessions_status(home: Path) -> list[str]:
    out = run_vigil(["sessions", "--json"], home)
    assert out.returncode == 0, out.stderr
    return [json.loads(line)["status"] for line in out.stdout.splitlines()]


def assert_whole_lines(log: Path) -> list:
    data = log.read_bytes()
    assert data == b"" or data.endswith(b"\n"), "the log ends in a torn line"
    read = read_events(log)
    assert read.warnings == [], read.warnings
    return read.events


def test_a_disk_that_fills_mid_run_stops_the_run_and_marks_the_session(tmp_path, small_disk):
    home = small_disk.path
    marker = tmp_path / "project" / "second-call-ran"
    # A tool cannot write under VIGIL_HOME (self-protection), so a user's hook fills the disk just
    # before the call runs; the call's 20 KB of output then needs room the log no longer has (a
    # log's last page may still hold a few small events).
    settings = tmp_path / "fill-the-disk.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": f"head -c 3000000 /dev/zero > {home}/filler 2>/dev/null; exit 0"}]}]}}))
    out = headless(tmp_path, home, [
        {"text": "Filling the disk.", "tool_calls": [
            {"id": "fill", "name": "Bash", "input": {"command": "seq 1 4000"}}]},
        {"text": "This must not run.", "tool_calls": [
            {"id": "next", "name": "Bash", "input": {"command": f"touch {marker}"}}]},
        {"text": "Done."}], "--settings", str(settings))
    assert out.returncode == 3, out.stderr
    assert "the session log could not be written (disk full)" in out.stderr
    assert not marker.exists(), "a tool was started after the log failed"
    (session,) = session_dirs(home)
    events = assert_whole_lines(session / "events.jsonl")
    assert events[-1].type == "Warning" and events[-1].code == "log_write_failed"  # the reserve made room
    assert read_incomplete(session / "events.jsonl") == "disk full"
    assert sessions_status(home) == ["log incomplete: disk full"]

    (home / "filler").unlink()  # the user frees space and carries on
    small_disk.resize("64m")
    again = run_vigil(["-p", "Carry on.", "--resume", session.name, "--script",
                       str(write_script(tmp_path / "again.json", [{"text": "Back."}])),
                       "--cwd", str(tmp_path / "project"), "--no-claude-settings"], home)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "Back."
    assert assert_whole_lines(session / "events.jsonl")[-1].type == "SessionEnded"
    assert sessions_status(home) == ["completed"]


def test_a_disk_full_from_the_start_records_nothing_and_says_so(tmp_path, small_disk):
    small_disk.fill()
    marker = tmp_path / "project" / "ran"
    out = headless(tmp_path, small_disk.path, [
        {"text": "x", "tool_calls": [{"id": "b", "name": "Bash", "input": {"command": f"touch {marker}"}}]}])
    assert out.returncode == 3
    assert "disk full" in out.stderr and "Traceback" not in out.stderr
    assert not marker.exists()
    (session,) = session_dirs(small_disk.path)
    assert (session / "events.jsonl").read_bytes() == b""
    assert sessions_status(small_disk.path) == ["log incomplete: disk full"]


def test_a_full_disk_for_artifacts_falls_back_to_truncation_and_warns_in_every_format(tmp_path, small_disk):
    home = tmp_path / "home"
    first = headless(tmp_path, home, [{"text": "Hello."}])
    assert first.returncode == 0, first.stderr
    (session,) = session_dirs(home)
    artifacts = session / "artifacts"
    artifacts.mkdir(exist_ok=True)
    subprocess.run(["mount", "--bind", str(small_disk.path), str(artifacts)], check=True)
    try:
        for fmt in ("text", "json", "stream-json"):
            out = headless(tmp_path, home, [
                {"text": "A lot of output.", "tool_calls": [{"id": "big", "name": "Bash",
                                                              "input": {"command": BIG_OUTPUT}}]},
                {"text": "Saw it."}], "--resume", session.name, "--output-format", fmt)
            assert out.returncode == 0, (fmt, out.stderr)
            assert "vigil: warning: Could not persist the output of Bash (No space left on device)" in out.stderr, fmt
            assert list(artifacts.iterdir()) == [], "a part of the failed artifact was left on the full disk"
    finally:
        subprocess.run(["umount", "-l", str(artifacts)], capture_output=True)
    events = assert_whole_lines(session / "events.jsonl")
    results = [e for e in events if e.type == "ToolCallResult"]
    assert len(results) == 3 and not any(r.artifacts for r in results)
    assert all("could not be saved" in r.model_content for r in results)  # the model is told too
    assert sessions_status(home) == ["completed"]


# ---- without a mount: a fault-injecting writer ----------------------------------------------------

async def test_a_log_that_fails_mid_turn_starts_no_further_tool(tmp_path, monkeypatch):
    """The same rule in-process, where the disk is faked: once an append fails, the calls that
    have not started get `aborted_before_dispatch` and none of them runs."""
    from tests.fakes import SAFE, work_spec
    from tui_app.agents.builtin_agent import BuiltinAgent
    from tui_app.providers.scripted import Script, ScriptedModel
    from tui_app.runtime.registry import ToolRegistry
    from tui_app.runtime.session import Session

    ran: list[str] = []
    registry = ToolRegistry()
    spec = work_spec("Look", SAFE)
    original = spec.handler

    async def counting(args, ctx):
        ran.append(ctx.call_id)
        return await original(args, ctx)

    registry.register(replace(spec, handler=counting))
    steps = [{"text": "one", "tool_calls": [{"id": "a", "name": "Look", "input": {"label": "a"}}]},
             {"text": "two", "tool_calls": [{"id": "b", "name": "Look", "input": {"label": "b"}},
                                            {"id": "c", "name": "Look", "input": {"label": "c"}}]},
             {"text": "end"}]
    session = Session(agent=BuiltinAgent(ScriptedModel(Script.model_validate({"steps": steps}))), cwd=str(tmp_path),
                      registry=registry, log_path=tmp_path / "s" / "events.jsonl")
    seen: list = []
    session.subscribe(seen.append)
    real = eventlog._os_write

    def full_after_first_call(fd, data):
        if b'"call_id":"a"' in data and b'"ToolCallResult"' in data:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(eventlog, "_os_write", full_after_first_call)
    await session.start()
    result = await session.run_turn("Go")
    await session.close()
    assert ran == ["a"]
    assert session.log_failure == "disk full"
    assert result.reason == "interrupted"
    warnings = [e for e in seen if e.type == "Warning" and e.code == "log_write_failed"]
    assert len(warnings) == 1 and "no further tool is started" in warnings[0].message
    again = await session.run_turn("Again")
    assert again.reason == "error" and "cannot be written" in (again.error or "")
    events = read_events(tmp_path / "s" / "events.jsonl")
    assert events.warnings == [] and events.events[-1].code == "log_write_failed"
