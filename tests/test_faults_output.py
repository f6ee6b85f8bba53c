"""What Vigil prints reaches a terminal inert, and a reader that goes away ends it quietly; an
interrupted atomic write leaves nothing in the project; an Edit's memory stays within 4× its file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

from tests.faults_kit import new_mark, run_vigil, session_dirs, vigil_env, write_script
from tests.file_tools import file_env
from tui_app.runtime.files import atomic
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.tools.edit import EDIT

NASTY = "Done.\x1b]0;pwned title\x07\x1b[2J\x1b[H\x9b31m and \x1b[31mred\x1b[0m"


def test_text_output_neutralises_the_models_escape_sequences(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    out = run_vigil(["-p", "Hi.", "--script", str(write_script(tmp_path / "s.json", [{"text": NASTY}])),
                     "--cwd", str(project), "--no-claude-settings"], tmp_path / "home")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Done. and red\n"
    assert not any(ch in out.stdout + out.stderr for ch in "\x1b\x07\x9b")


def test_json_lines_escape_the_controls_json_leaves_raw(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    for fmt in ("stream-json", "json", "events"):
        out = run_vigil(["-p", "Hi.", "--script", str(write_script(tmp_path / "s.json", [{"text": NASTY}])),
                         "--cwd", str(project), "--no-claude-settings", "--output-format", fmt], tmp_path / "home")
        assert out.returncode == 0, out.stderr
        assert not any(ch in out.stdout for ch in "\x1b\x07\x9b"), fmt
        lines = [json.loads(line) for line in out.stdout.splitlines()]  # still JSON, with the same content
        assert NASTY in strings_in(lines), fmt


def strings_in(value) -> list[str]:  # type: ignore[no-untyped-def]
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return []


def closed_pipe_run(args: list[str], home: Path) -> subprocess.CompletedProcess:
    """`vigil ARGS | head -0`: the reader is gone before vigil writes a byte."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "tui_app", *args], stdout=write_end, stderr=subprocess.PIPE,
                              env=vigil_env(home, new_mark()), text=True, timeout=120)
    finally:
        os.close(write_end)


def test_a_closed_stdout_ends_quietly(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    script = write_script(tmp_path / "s.json", [{"text": "Hello."}])
    for _ in range(2):
        assert run_vigil(["-p", "Hi.", "--script", str(script), "--cwd", str(project), "--no-claude-settings"],
                         home).returncode == 0
    for args in (["sessions"], ["sessions", "--json"], ["replay", session_dirs(home)[0].name],
                 ["-p", "Hi.", "--script", str(script), "--cwd", str(project), "--no-claude-settings"],
                 ["-p", "Hi.", "--script", str(script), "--cwd", str(project), "--no-claude-settings",
                  "--output-format", "stream-json"]):
        out = closed_pipe_run(args, home)
        assert out.stderr == "", (args, out.stderr)
        assert out.returncode == 141, (args, out.returncode)


# ---- atomic writes -----------------------------------------------------------------------------------

def test_a_temp_file_left_by_a_killed_write_is_removed_at_the_next_start_with_a_note(tmp_path, monkeypatch):
    """A process died between naming its temp file and the rename (its journal says so, and
    nobody holds the journal's lock any more): the next session removes it and says so."""
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("old\n")
    left = project / ".notes.txt.vigil-0badcafe.tmp"
    left.write_text("half of the new")
    journals = home / "pending-writes"
    journals.mkdir(parents=True)
    (journals / "999999.journal").write_text(f"+{project / '.x.vigil-1.tmp'}\n-{project / '.x.vigil-1.tmp'}\n"
                                            f"+{left}\n")
    out = run_vigil(["-p", "Hi.", "--script", str(write_script(tmp_path / "s.json", [{"text": "Hello."}])),
                     "--cwd", str(project), "--no-claude-settings", "--output-format", "events"], home)
    assert out.returncode == 0, out.stderr
    assert not left.exists() and (project / "notes.txt").read_text() == "old\n"
    notes = [json.loads(line) for line in out.stdout.splitlines() if '"interrupted_write_cleaned"' in line]
    assert len(notes) == 1 and str(left) in notes[0]["message"]
    assert list(journals.iterdir()) == []


def test_a_journal_whose_process_lives_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    target = tmp_path / "f.txt"
    atomic.write_atomically(str(target), b"one", None)  # this process's journal now exists and is locked
    pending = tmp_path / ".f.txt.vigil-feedf00d.tmp"
    pending.write_text("in flight")
    atomic._journal.note("+", str(pending))
    try:
        assert atomic.sweep_interrupted_writes() == []
        assert pending.exists()
    finally:
        atomic._journal.note("-", str(pending))
        atomic._journal.close()


def test_an_atomic_write_names_nothing_in_the_directory_until_it_is_whole(tmp_path, monkeypatch):
    """The content goes into an unnamed file: while it is written, the directory shows nothing new."""
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    target = tmp_path / "big.bin"
    seen: list[list[str]] = []
    real_fill = atomic._fill

    def spying_fill(fd, data, mode):  # type: ignore[no-untyped-def]
        seen.append(sorted(p.name for p in tmp_path.iterdir()))
        real_fill(fd, data, mode)

    monkeypatch.setattr(atomic, "_fill", spying_fill)
    atomic.write_atomically(str(target), b"x" * 1_000_000, None)
    atomic._journal.close()
    assert target.read_bytes() == b"x" * 1_000_000
    if atomic._unnamed["usable"]:
        assert seen and not [n for names in seen for n in names if n.endswith(".tmp")], \
            "a named temp file existed while the content was written"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.bin", "home"]


# ---- an Edit's memory ------------------------------------------------------------------------------------

async def test_an_edit_of_a_big_file_holds_at_most_four_times_its_size(tmp_path):
    size_lines = 400
    text = "".join(f"line {i} " + "abcdefghij" * 2500 + "\n" for i in range(size_lines))  # ~10 MB
    path = tmp_path / "big.txt"
    path.write_text(text)
    size = len(text)
    files = file_env(tmp_path, EDIT, policy=ModePolicy(mode="acceptEdits"))
    read = await files.call("Read", {"file_path": str(path)})
    assert read.type == "ToolCallResult", read
    env = files.env
    del text, read
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        outcome = await run_call(ToolCall("e1", "Edit", {"file_path": str(path), "old_string": "line 200 ",
                                                         "new_string": "LINE 200 "}), env)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert outcome.type == "ToolCallResult", outcome
    assert "LINE 200 " in path.read_text()
    assert peak <= 4 * size, f"an Edit of {size / 1e6:.1f} MB peaked at {peak / 1e6:.1f} MB"
