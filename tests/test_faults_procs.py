"""Nothing hung, nothing orphaned: kill -9 of Vigil (a command, a background task, an MCP server,
a hook), SIGTERM in states that used to hang, a hook that leaves a child behind, and a search
that times out while it still burns a core.

Times here are deadlines with room (the machine is loaded), not measurements: bench/faults.py
measures how long each of these really takes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tests.fakes import make_env
from tests.faults_kit import (
    MARK_VAR,
    kill_marked,
    log_lines,
    marked_processes,
    new_mark,
    run_vigil,
    session_dirs,
    start_vigil,
    vigil_env,
    wait_for,
    wait_until_gone,
    write_script,
)
from tests.mcp.helpers import fixture
from tests.waiting import DEADLINE_S, HANG_S
from tui_app.runtime.contract import TimeoutPolicy
from tui_app.runtime.log.eventlog import read_events
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.runtime.results.artifacts import ArtifactStore
from tui_app.tools.read_artifact import READ_ARTIFACT

#: a pattern that backtracks for ever on a line of a's that does not end where it wants
CATASTROPHIC = "(a+)+$"
BAD_LINE = "a" * 40 + "!"


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def cmdline_has(pid: int, text: str) -> bool:
    return text in cmdline(pid)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2:].split()[0] != b"Z"


def seen(mark: str, text: str) -> bool:
    return any(cmdline_has(pid, text) for pid in marked_processes(mark))


def headless_args(project: Path, script: Path, *extra: str) -> list[str]:
    return ["-p", "Go.", "--script", str(script), "--cwd", str(project), "--allowedTools", "Bash",
            "--no-claude-settings", *extra]


@pytest.fixture
def project(tmp_path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


# ---- kill -9 ---------------------------------------------------------------------------------------

def test_kill_9_of_vigil_leaves_no_command_task_or_mcp_server(tmp_path, project):
    mark = new_mark()
    touched = project / "touched"
    mcp = tmp_path / "mcp.json"
    (tmp_path / "fx").mkdir()
    mcp.write_text(json.dumps({"mcpServers": {"fx": fixture(tmp_path / "fx", env={MARK_VAR: mark})}}))
    script = write_script(tmp_path / "s.json", [{"text": "Working.", "tool_calls": [
        {"id": "bg", "name": "Bash", "input": {"command": "sleep 600", "run_in_background": True}},
        {"id": "fg", "name": "Bash", "input": {"command": f"sleep 47; touch {touched}"}}]}])
    process = start_vigil(headless_args(project, script, "--mcp-config", str(mcp)), tmp_path / "home", mark)
    try:
        wait_for(lambda: seen(mark, "sleep 47") and seen(mark, "sleep 600") and seen(mark, "fixture_server"),
                 60, "the command, the task and the MCP server", process)
        process.send_signal(signal.SIGKILL)
        process.wait(DEADLINE_S)
        left, _ = wait_until_gone(mark, timeout=DEADLINE_S)
        assert left == [], f"survived Vigil's kill -9: {[(p, cmdline(p)) for p in left]}"
        assert not touched.exists()
    finally:
        kill_marked(mark)


def test_kill_9_of_vigil_while_a_hook_runs_leaves_no_hook(tmp_path, project):
    mark = new_mark()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "sleep 600; echo late", "timeout": 900}]}]}}))
    script = write_script(tmp_path / "s.json", [{"text": "x", "tool_calls": [
        {"id": "b", "name": "Bash", "input": {"command": "echo hi"}}]}])
    process = start_vigil(headless_args(project, script, "--settings", str(settings)), tmp_path / "home", mark)
    try:
        wait_for(lambda: seen(mark, "sleep 600"), 60, "the hook", process)
        process.send_signal(signal.SIGKILL)
        process.wait(DEADLINE_S)
        left, _ = wait_until_gone(mark, timeout=DEADLINE_S)
        assert left == []
    finally:
        kill_marked(mark)


# ---- SIGTERM in states that used to hang ------------------------------------------------------------

def terminate(process) -> None:  # type: ignore[no-untyped-def]
    process.send_signal(signal.SIGTERM)
    process.wait(90)


def test_sigterm_ends_a_run_whose_command_ignores_term(tmp_path, project):
    mark = new_mark()
    script = write_script(tmp_path / "s.json", [{"text": "x", "tool_calls": [
        {"id": "b", "name": "Bash", "input": {"command": "trap '' TERM; sleep 300; echo never"}}]}])
    process = start_vigil(headless_args(project, script), tmp_path / "home", mark)
    try:
        wait_for(lambda: seen(mark, "sleep 300"), 60, "the command", process)
        terminate(process)
        assert process.returncode == 143, "the orderly way out (not the hard deadline)"
        assert wait_until_gone(mark, timeout=DEADLINE_S)[0] == []
        (session,) = session_dirs(tmp_path / "home")
        assert read_events(session / "events.jsonl").events[-1].type == "SessionEnded"
    finally:
        kill_marked(mark)


def test_sigterm_ends_a_run_in_a_hook_that_ignores_term(tmp_path, project):
    mark = new_mark()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "trap '' TERM; sleep 400", "timeout": 900}]}]}}))
    script = write_script(tmp_path / "s.json", [{"text": "x", "tool_calls": [
        {"id": "b", "name": "Bash", "input": {"command": "echo hi"}}]}])
    process = start_vigil(headless_args(project, script, "--settings", str(settings)), tmp_path / "home", mark)
    try:
        wait_for(lambda: seen(mark, "sleep 400"), 60, "the hook", process)
        terminate(process)
        assert process.returncode == 143, "the orderly way out (not the hard deadline)"
        assert wait_until_gone(mark, timeout=DEADLINE_S)[0] == []
    finally:
        kill_marked(mark)


def test_when_the_orderly_way_out_takes_too_long_the_hard_deadline_ends_it_and_nothing_is_left(tmp_path, project):
    """The last resort: closing the session runs a SessionEnd hook that ignores TERM and sleeps,
    far longer than the 0.5 s deadline given here; the deadline ends the process, the reaper the
    hook and the command."""
    mark = new_mark()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"SessionEnd": [{"hooks": [
        {"type": "command", "command": "trap '' TERM; sleep 403", "timeout": 900}]}]}}))
    script = write_script(tmp_path / "s.json", [{"text": "x", "tool_calls": [
        {"id": "b", "name": "Bash", "input": {"command": "sleep 402"}}]}])
    process = subprocess.Popen([sys.executable, "-m", "tui_app", *headless_args(project, script, "--settings",
                                                                                str(settings))],
                               env=vigil_env(tmp_path / "home", mark, VIGIL_SHUTDOWN_DEADLINE_S="0.5"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: seen(mark, "sleep 402"), 60, "the command", process)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=90)
        assert process.returncode == 1, "faulthandler's exit, not the orderly 143"
        assert b"Timeout (0:00:00.500000)!" in err  # the threads' stacks, for the bug report
        assert wait_until_gone(mark, timeout=DEADLINE_S)[0] == []
    finally:
        kill_marked(mark)


def test_sigterm_ends_a_run_in_a_search_that_would_never_end(tmp_path, project):
    home, mark = tmp_path / "home", new_mark()
    first = run_vigil(headless_args(project, write_script(tmp_path / "a.json", [{"text": "hi"}])), home)
    assert first.returncode == 0, first.stderr
    (session,) = session_dirs(home)
    (session / "artifacts").mkdir(exist_ok=True)
    (session / "artifacts" / "big-1.txt").write_text(f"line\n{BAD_LINE}\n" * 3)
    script = write_script(tmp_path / "b.json", [{"text": "x", "tool_calls": [
        {"id": "r", "name": "ReadArtifact", "input": {"artifact": "big-1", "pattern": CATASTROPHIC}}]}])
    process = start_vigil(headless_args(project, script, "--resume", session.name), home, mark)
    try:
        wait_for(lambda: seen(mark, "artifact_scan.py"), 60, "the search", process)
        terminate(process)
        assert process.returncode == 143, "the orderly way out (not the hard deadline)"
        assert wait_until_gone(mark, timeout=DEADLINE_S)[0] == []
    finally:
        kill_marked(mark)


# ---- a search that times out stops burning the core -------------------------------------------------

def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", "rb") as handle:
        data = handle.read()
    fields = data[data.rfind(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def test_a_timed_out_artifact_search_stops_using_the_cpu(tmp_path):
    store = ArtifactStore("s1", tmp_path / "artifacts")
    ref = store.persist_text("c0", "Bash", f"line\n{BAD_LINE}\n" * 3)
    spec = replace(READ_ARTIFACT, timeout=TimeoutPolicy(default_ms=1000))
    env, _ = make_env(spec, cwd=str(tmp_path))
    env.services["artifacts"] = store
    workers: set[int] = set()

    async def watch() -> None:  # the worker process, while the call runs
        while True:
            workers.update(p for p in map(int, filter(str.isdigit, os.listdir("/proc")))
                           if cmdline_has(p, "artifact_scan.py"))
            await asyncio.sleep(0.02)

    watcher = asyncio.ensure_future(watch())
    try:
        outcome = await run_call(ToolCall("r1", "ReadArtifact", {"artifact": ref.uri, "pattern": CATASTROPHIC}), env)
    finally:
        watcher.cancel()
    assert outcome.type == "ToolCallError" and outcome.code == "timeout"
    assert workers, "the search ran in a worker process"
    # the worker is gone at once (the call's end waited for it), and this process burns nothing
    assert not any(alive(pid) for pid in workers)
    before = cpu_seconds(os.getpid())
    await asyncio.sleep(2.0)  # nothing to wait for: this measures that nothing runs
    assert cpu_seconds(os.getpid()) - before < 0.5


# ---- a hook that leaves a child behind ----------------------------------------------------------

def test_a_hook_that_leaves_a_background_child_answers_when_it_exits(tmp_path, project):
    mark = new_mark()
    deny = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                              "permissionDecisionReason": "not today"}})
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": f"sleep 777 & echo '{deny}'; exit 0", "timeout": 200}]}]}}))
    script = write_script(tmp_path / "s.json", [{"text": "x", "tool_calls": [
        {"id": "b", "name": "Bash", "input": {"command": "echo hi"}}]}, {"text": "ok"}])
    home = tmp_path / "home"
    out = run_vigil(headless_args(project, script, "--settings", str(settings), "--output-format", "events"),
                    home, mark)
    try:
        assert out.returncode == 0, out.stderr
        events = [json.loads(line) for line in out.stdout.splitlines()]
        runs = [e for e in events if e["type"] == "HookRun" and e["status"] != "started"]
        assert len(runs) == 1
        run = runs[0]
        assert run["status"] != "timeout" and run["exit_code"] == 0 and run["decision"] == "deny"
        assert run["duration_ms"] < HANG_S * 1000  # answered on its exit, not at the timeout
        (error,) = [e for e in events if e["type"] == "ToolCallError"]
        assert error["code"] == "hook_denied" and "not today" in error["message"]
        assert wait_until_gone(mark, timeout=DEADLINE_S)[0] == [], "the hook's `sleep 777` outlived it"
    finally:
        kill_marked(mark)


def test_log_lines_helper_counts_whole_lines(tmp_path):
    """The chaos suite's clock: complete events in the newest session's log."""
    (tmp_path / "sessions" / "a").mkdir(parents=True)
    (tmp_path / "sessions" / "a" / "events.jsonl").write_bytes(b'{"x":1}\n{"x":2}\n{"x"')
    assert log_lines(tmp_path) == 2
