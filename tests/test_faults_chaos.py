"""The chaos suite: a scripted headless session (writes and an edit of a 2 MB file, streaming
commands, a large output that becomes an artifact, a background task) killed with SIGKILL at 30
points of its run. After each kill:

* the log replays up to its last complete event (only a torn last line may be skipped);
* every file the session writes holds its old content or a new one, never a mix, and no
  temporary file is left in the project;
* no process the run started survives (found by a mark in their environment, which every
  descendant inherits), within a generous deadline;
* `--resume` of the session works, and starts no tool of the killed run again.

The kill points are spread over the run by the number of complete events in the log (seeded,
so a failure names a point that can be run again), plus a seeded extra delay.
"""

from __future__ import annotations

import json
import random
import signal
import time
from pathlib import Path

import pytest

from tests.faults_kit import (
    kill_marked,
    log_lines,
    new_mark,
    run_vigil,
    session_dirs,
    start_vigil,
    wait_for,
    wait_until_gone,
    write_script,
)
from tests.waiting import DEADLINE_S
from tui_app.runtime.log.eventlog import read_events

KILL_POINTS = 30
#: complete events the scripted session writes, roughly (the kill points spread over them)
EVENTS = 70
BIG_V1 = "".join(f"line {i:06d} of the first version\n" for i in range(60_000))  # ~2 MB
BIG_V2 = BIG_V1.replace("line 030000 of the first version", "line 030000 EDITED")
SMALL = "small file\n" * 100


def script(project: Path) -> list[dict]:
    stream = "for i in $(seq 1 15); do echo streamed line $i; sleep 0.02; done"
    return [
        {"text": "Writing a big file, streaming a command, starting a task.", "tool_calls": [
            {"id": "w1", "name": "Write", "input": {"file_path": str(project / "big.txt"), "content": BIG_V1}},
            {"id": "b1", "name": "Bash", "input": {"command": stream}},
            {"id": "t1", "name": "Bash", "input": {"command": "sleep 300", "run_in_background": True}}]},
        {"text": "Editing it, and a large output.", "tool_calls": [
            {"id": "e1", "name": "Edit", "input": {"file_path": str(project / "big.txt"),
                                                   "old_string": "line 030000 of the first version",
                                                   "new_string": "line 030000 EDITED"}},
            {"id": "b2", "name": "Bash", "input": {"command": "seq 1 300000"}}]},
        {"text": "One more file and a command.", "tool_calls": [
            {"id": "w2", "name": "Write", "input": {"file_path": str(project / "small.txt"), "content": SMALL}},
            {"id": "b3", "name": "Bash", "input": {"command": "sleep 0.2; echo done"}}]},
        {"text": "Finished."},
    ]


def no_compaction(directory: Path) -> str:
    """Settings that keep the 2 MB Write from filling the scripted model's window: a compaction on
    --resume would take the resumed script's only step as its summary."""
    path = directory / "settings.json"
    path.write_text(json.dumps({"autoCompact": False}))
    return str(path)


def run_args(script_path: Path, project: Path, *extra: str) -> list[str]:
    return ["-p", "Do the chaos chores.", "--script", str(script_path), "--cwd", str(project),
            "--permission-mode", "acceptEdits", "--allowedTools", "Bash", "--output-format", "stream-json",
            "--no-claude-settings", "--settings", no_compaction(script_path.parent), *extra]


@pytest.mark.parametrize("point", range(KILL_POINTS))
def test_a_session_killed_at_any_point_leaves_a_whole_log_whole_files_and_no_process(tmp_path, point):
    rng = random.Random(point)
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    script_path = write_script(tmp_path / "script.json", script(project))
    mark = new_mark()
    kill_at = (point * EVENTS) // KILL_POINTS  # complete events in the log when the kill comes
    process = start_vigil(run_args(script_path, project), home, mark)
    try:
        wait_for(lambda: log_lines(home) >= kill_at or process.poll() is not None, 60,
                 f"{kill_at} events in the log")
        time.sleep(rng.uniform(0, 0.05))
        process.send_signal(signal.SIGKILL)
        process.wait(DEADLINE_S)

        left, _ = wait_until_gone(mark, timeout=DEADLINE_S)
        assert left == [], f"processes of the killed run survived: {left}"
        check_whole_files(project)
        if not session_dirs(home):
            return  # killed before the session had a log: nothing to replay or resume
        (session,) = session_dirs(home)
        log = session / "events.jsonl"
        before = read_events(log)
        assert [w for w in before.warnings if "incomplete" not in w] == [], before.warnings
        started = [e.call_id for e in before.events if e.type == "ToolCallStarted"]

        resumed = run_vigil(["-p", "Carry on.", "--resume", session.name, "--script",
                             str(write_script(tmp_path / "again.json", [{"text": "Back again."}])),
                             "--cwd", str(project), "--no-claude-settings", "--settings", no_compaction(tmp_path)],
                            home)
        assert resumed.returncode == 0, resumed.stderr
        assert "Back again." in resumed.stdout
        after = read_events(log)
        assert after.warnings == []  # the torn tail (if any) was cut off when the log was reopened
        assert [e.call_id for e in after.events if e.type == "ToolCallStarted"] == started  # nothing ran again
        assert after.events[-1].type == "SessionEnded"
        check_whole_files(project)
        assert not list(project.glob(".*.tmp")), "a temporary file of an atomic write was left in the project"
    finally:
        if process.poll() is None:
            process.kill()
        kill_marked(mark)


def check_whole_files(project: Path) -> None:
    big = project / "big.txt"
    if big.exists():
        assert big.read_text() in (BIG_V1, BIG_V2), "big.txt holds a torn write"
    small = project / "small.txt"
    if small.exists():
        assert small.read_text() == SMALL, "small.txt holds a torn write"
