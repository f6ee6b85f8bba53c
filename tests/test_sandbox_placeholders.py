"""A Vigil killed with -9 leaves nothing of its own in the project: the empty mount points bwrap
creates for protected names that do not exist yet (`.mcp.json/`, `.claude/`, `.vigil/`)
are removed by the reaper once the sandbox is gone. A real `vigil -p`, a real
sandboxed command, a real kill -9."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

from tests.faults_kit import (
    kill_marked,
    marked_processes,
    new_mark,
    start_vigil,
    wait_for,
    wait_until_gone,
    write_script,
)
from tests.needs import need_program
from tests.waiting import DEADLINE_S


def listing(root) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, n), root) for d, dirs, files in os.walk(root) for n in dirs + files)


def test_kill_9_of_vigil_leaves_no_sandbox_placeholder_in_the_project(tmp_path):
    need_program("bwrap")
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("hello\n")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    shutil.rmtree(project / ".git" / "hooks")
    before = listing(project)
    mark = new_mark()
    script = write_script(
        tmp_path / "s.json",
        [
            {
                "text": "Working.",
                "tool_calls": [{"id": "fg", "name": "Bash", "input": {"command": "sleep 53; echo done"}}],
            }
        ],
    )
    args = [
        "-p",
        "Go.",
        "--script",
        str(script),
        "--cwd",
        str(project),
        "--allowedTools",
        "Bash",
        "--no-claude-settings",
    ]
    process = start_vigil(args, tmp_path / "home", mark)
    placeholders = [project / ".mcp.json", project / ".claude", project / ".vigil"]
    try:
        # the command runs in the sandbox, over the placeholders bwrap made on the host
        wait_for(
            lambda: (
                any("sleep 53" in cmd for cmd in map(_cmdline, marked_processes(mark)))
                and all(p.is_dir() for p in placeholders)
            ),
            60,
            "the sandboxed command",
            process,
        )
        process.send_signal(signal.SIGKILL)
        process.wait(DEADLINE_S)
        left, _ = wait_until_gone(mark, timeout=DEADLINE_S)  # the reaper carries the mark too
        assert left == []
        assert listing(project) == before
    finally:
        kill_marked(mark)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""
