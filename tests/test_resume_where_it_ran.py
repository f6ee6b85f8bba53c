"""A resumed session goes on where it ran: its cwd (so the model's relative paths and the project's
rules are the ones it had), its working directories and its permission mode, whatever directory
`vigil --resume` is typed in; it says so, and refuses clearly when that directory is gone. A session
id may be any unique prefix. Real `vigil -p` processes, a scripted model, logs on disk."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tui_app.runtime.log.catalog import UnknownSession, resolve_session_id
from tui_app.runtime.log.eventlog import read_events

ROOT = Path(__file__).resolve().parent.parent


def vigil(tmp_path: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VIGIL_HOME": str(tmp_path / "vigil-home"),
           "HOME": str(tmp_path / "home"), "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}
    return subprocess.run([sys.executable, "-m", "tui_app", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def script(tmp_path: Path, name: str, steps: list[dict[str, Any]]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"steps": steps}))
    return str(path)


def lines_of(done: subprocess.CompletedProcess) -> list[dict[str, Any]]:
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    project, lib, elsewhere = tmp_path / "project", tmp_path / "lib", tmp_path / "elsewhere"
    for path in (project, lib, elsewhere, tmp_path / "home"):
        path.mkdir()
    (project / "notes.txt").write_text("the project's notes\n")
    (elsewhere / "notes.txt").write_text("some other notes\n")
    (lib / "helper.txt").write_text("the library's helper\n")
    # the project's own rule: its notes may be written without asking
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Write(notes.txt)"]}}))
    return project, lib, elsewhere


def first_run(tmp_path: Path, project: Path, lib: Path) -> str:
    steps = [{"text": "Reading.", "tool_calls": [{"id": "toolu_1", "name": "Read",
                                                  "input": {"file_path": "notes.txt"}}]},
             {"expect": ["the project's notes"], "text": "Read."}]
    done = vigil(tmp_path, project, "-p", "read the notes", "--script", script(tmp_path, "one.json", steps),
                 "--permission-mode", "acceptEdits", "--add-dir", str(lib), "--output-format", "stream-json",
                 "--verbose")
    return lines_of(done)[0]["session_id"]


def test_resume_from_another_directory_goes_on_where_the_session_ran_with_its_mode_and_directories(tmp_path):
    project, lib, elsewhere = setup(tmp_path)
    session_id = first_run(tmp_path, project, lib)
    steps = [{"text": "Reading again.", "tool_calls": [
                {"id": "toolu_2", "name": "Read", "input": {"file_path": "notes.txt"}},
                {"id": "toolu_3", "name": "Read", "input": {"file_path": str(lib / "helper.txt")}}]},
             {"expect": ["the project's notes", "the library's helper"], "text": "Both read.", "tool_calls": [
                {"id": "toolu_4", "name": "Write", "input": {"file_path": "notes.txt", "content": "new notes\n"}}]},
             {"text": "Written."}]
    done = vigil(tmp_path, elsewhere, "-p", "again", "--resume", session_id, "--script",
                 script(tmp_path, "two.json", steps), "--output-format", "stream-json", "--verbose")
    lines = lines_of(done)
    init = lines[0]
    assert init["cwd"] == str(project) and init["permissionMode"] == "acceptEdits"
    assert lines[-1]["result"] == "Written." and lines[-1]["permission_denials"] == []
    assert (project / "notes.txt").read_text() == "new notes\n"
    assert (elsewhere / "notes.txt").read_text() == "some other notes\n"  # untouched
    assert "goes on in" in done.stderr and str(project) in done.stderr  # said, not silent


def test_resume_of_a_session_whose_directory_is_gone_is_refused_with_a_clear_message(tmp_path):
    project, lib, elsewhere = setup(tmp_path)
    session_id = first_run(tmp_path, project, lib)
    shutil.rmtree(project)
    done = vigil(tmp_path, elsewhere, "-p", "again", "--resume", session_id, "--script",
                 script(tmp_path, "two.json", [{"text": "never"}]))
    assert done.returncode == 2
    assert f"ran in {project}, which is gone" in done.stderr and done.stderr.count("\n") == 1


def test_a_flag_beats_the_recorded_mode_and_bypass_is_never_restored_unasked(tmp_path):
    project, lib, _ = setup(tmp_path)
    session_id = first_run(tmp_path, project, lib)
    done = vigil(tmp_path, project, "-p", "plan it", "--resume", session_id, "--permission-mode", "plan",
                 "--script", script(tmp_path, "p.json", [{"text": "Planned."}]), "--output-format", "stream-json",
                 "--verbose")
    assert lines_of(done)[0]["permissionMode"] == "plan"
    done = vigil(tmp_path, project, "-p", "go", "--resume", session_id, "--permission-mode", "bypassPermissions",
                 "--script", script(tmp_path, "b.json", [{"text": "Ok."}]), "--output-format", "stream-json",
                 "--verbose")
    assert lines_of(done)[0]["permissionMode"] == "bypassPermissions"
    done = vigil(tmp_path, project, "-p", "again", "--resume", session_id,
                 "--script", script(tmp_path, "c.json", [{"text": "Ok."}]), "--output-format", "stream-json",
                 "--verbose")
    assert lines_of(done)[0]["permissionMode"] == "default"
    assert "bypassPermissions when it stopped" in done.stderr


def test_a_unique_prefix_of_an_id_names_the_session_and_an_ambiguous_one_is_refused(tmp_path):
    project, lib, _ = setup(tmp_path)
    first = first_run(tmp_path, project, lib)
    second = first_run(tmp_path, project, lib)
    common = os.path.commonprefix([first, second])  # noqa: RUF071  (ids are strings, not paths)
    root = tmp_path / "vigil-home" / "sessions"
    assert resolve_session_id(first[: len(common) + 1], root) == first
    assert resolve_session_id(first, root) == first
    for wrong, words in ((common, "names 2 sessions"), ("zzz", "no recorded session 'zzz'"),
                         ("../x", "no recorded session")):
        try:
            resolve_session_id(wrong, root)
        except UnknownSession as exc:
            assert words in str(exc)
        else:
            raise AssertionError(f"{wrong!r} named a session")
    done = vigil(tmp_path, project, "replay", first[: len(common) + 1], "--output-format", "text")
    assert done.returncode == 0 and "read the notes" in done.stdout
    events = read_events(root / first / "events.jsonl").events
    assert [e.prompt for e in events if e.type == "TurnStarted"] == ["read the notes"]
