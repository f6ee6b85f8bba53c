"""Vigil runs a hook script only while it is still the one the session started with: a script
whose folder was swapped, that was replaced or rewritten, or that did not exist at start and
appeared, is not run — the marker it would write never appears — and the session says why.
Real settings, real scripts, real processes."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.hook_helpers import call
from tui_app.assemble import SessionOptions, build_session

SWAPS = {
    "the folder swapped": lambda d: (d.rename(d.with_name("h2")), d.mkdir()),
    "the grandparent swapped": lambda d: (d.parent.rename(d.parent.with_name("t2")), d.mkdir(parents=True)),
    "the file replaced": lambda d: (d / "guard.sh").unlink(),
    "rewritten in place": lambda d: None,
}


def project_with_hook(tmp_path: Path, monkeypatch, command: str = "tools/hooks/guard.sh") -> Path:
    project = tmp_path / "project"
    (project / "tools" / "hooks").mkdir(parents=True)
    (project / ".vigil").mkdir()
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}
    (project / ".vigil" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vigil-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    return project


def script(path: Path, marker: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def session_in(project: Path):
    return build_session(SessionOptions(cwd=str(project), provider="scripted", persist=False,
                                        no_claude_settings=True))


@pytest.mark.parametrize("how", list(SWAPS))
async def test_a_swapped_hook_script_is_not_run(tmp_path, monkeypatch, how):
    project = project_with_hook(tmp_path, monkeypatch)
    original, swapped = tmp_path / "original-ran", tmp_path / "swapped-ran"
    hook_dir = project / "tools" / "hooks"
    script(hook_dir / "guard.sh", original)
    session = session_in(project)
    events: list = []
    session.subscribe(events.append)
    await session.hooks.pre_tool_use(call(cwd=str(project)))
    assert original.read_text() == "ran\n"  # the sealed script runs

    SWAPS[how](hook_dir)
    script(hook_dir / "guard.sh", swapped)
    await session.hooks.pre_tool_use(call(cwd=str(project)))
    assert not swapped.exists()
    warnings = [e for e in events if e.type == "Warning" and e.code == "hook_spawn_failed"]
    assert warnings and "not the script it was when the session started" in warnings[-1].message


async def test_a_script_that_appears_after_the_start_is_not_run(tmp_path, monkeypatch):
    project = project_with_hook(tmp_path, monkeypatch, "./tools/late.sh --strict")
    marker = tmp_path / "late-ran"
    session = session_in(project)
    script(project / "tools" / "late.sh", marker)
    await session.hooks.pre_tool_use(call(cwd=str(project)))
    assert not marker.exists()


async def test_an_unchanged_script_keeps_running_and_a_restart_takes_a_new_one(tmp_path, monkeypatch):
    project = project_with_hook(tmp_path, monkeypatch)
    marker = tmp_path / "ran"
    script(project / "tools" / "hooks" / "guard.sh", marker)
    session = session_in(project)
    for _ in range(3):
        await session.hooks.pre_tool_use(call(cwd=str(project)))
    assert marker.read_text() == "ran\n" * 3
    shutil.rmtree(project / "tools")
    script(project / "tools" / "hooks" / "guard.sh", marker)
    await session_in(project).hooks.pre_tool_use(call(cwd=str(project)))
    assert marker.read_text() == "ran\n" * 4
    assert os.access(project / "tools" / "hooks" / "guard.sh", os.X_OK)


async def test_a_hook_that_writes_a_file_it_names_keeps_running(tmp_path, monkeypatch):
    """Only programs and interpreters' scripts are sealed: a log the hook appends to, or a marker it
    creates, may change between runs."""
    log = tmp_path / "hook.log"
    log.write_text("")
    project = project_with_hook(tmp_path, monkeypatch, f"sh tools/hooks/guard.sh --log {log} {tmp_path}/made")
    script(project / "tools" / "hooks" / "guard.sh", log)
    session = session_in(project)
    for _ in range(3):
        await session.hooks.pre_tool_use(call(cwd=str(project)))
        (tmp_path / "made").write_text("x")
    assert log.read_text() == "ran\n" * 3
