"""The boundary on screen: the tool table and the approval dialog say whether a Bash call runs in
the sandbox, the dialog says when a path is outside the working directories, the header says when
there is no sandbox, and the palette's "Add directory" makes a directory a working directory."""

from __future__ import annotations

import pytest

from tests.needs import need_program
from tests.tui.app_harness import AppUnderTest, make_session, started, type_prompt, wait_until
from tests.tui.helpers import screen_text
from tests.tui.test_palette_screens import run_command
from tui_app.app.screens.add_directory import AddDirectoryScreen, resolve_directory


@pytest.fixture
def outside(tmp_path):
    where = tmp_path / "shared-lib"
    where.mkdir()
    (where / "lib.txt").write_text("shared\n")
    return where


async def test_add_directory_from_the_palette_lets_reads_there_run(tmp_path, monkeypatch, outside):
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "x.txt").write_text("x\n")
    session = make_session(tmp_path, monkeypatch, [
        {"text": "Reading both.", "tool_calls": [
            {"id": "in", "name": "Read", "input": {"file_path": str(outside / "lib.txt")}},
            {"id": "out", "name": "Read", "input": {"file_path": str(other / "x.txt")}}]},
        {"text": "Done."},
    ])
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 44)) as pilot:
        await started(pilot)
        await run_command(pilot, "add directory", "a working directory more")
        await wait_until(pilot, lambda: isinstance(app.screen, AddDirectoryScreen), "the add-directory box")
        await pilot.press(*"../nowhere", "enter")
        await wait_until(pilot, lambda: "Not a directory" in screen_text(app), "the refusal")
        await pilot.press(*["backspace"] * 10, *"../shared-lib", "enter")
        await wait_until(pilot, lambda: any("Working directory added" in n for n in app.notifications()),
                         "the notification")
        await wait_until(pilot, lambda: app.events_of("WorkingDirectoriesChanged"), "the directory to be added")
        assert str(outside) in session.policy.dirs.dirs
        assert app.events_of("WorkingDirectoriesChanged")[-1].added == [str(outside)]
        await type_prompt(pilot, "read the libraries")
        dialog = await wait_until(pilot, lambda: app.dialog, "the question about the other file")
        text = screen_text(app)
        assert "A safety guard asks" in text and "is outside the" in text, text
        assert "outside the working directories" in app.events_of("PermissionRequested")[-1].reason
        assert app.states()["in"] == "done"  # the added directory's file was read without a question
        await pilot.press("n")
        await wait_until(pilot, lambda: app.states().get("out") == "denied", "the denial")
        assert dialog is not None


async def test_the_table_and_the_dialog_say_where_bash_runs(tmp_path, monkeypatch):
    need_program("bwrap")
    session = make_session(tmp_path, monkeypatch, [
        {"text": "Looking, then touching.", "tool_calls": [
            {"id": "look", "name": "Bash", "input": {"command": "cat calc.py"}},
            {"id": "touch", "name": "Bash", "input": {"command": "touch made.txt"}}]},
        {"text": "Done."},
    ])
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 44)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "go")
        await wait_until(pilot, lambda: app.dialog, "the question about touch")
        text = screen_text(app)
        assert "Run `touch made.txt`" in text and "in the sandbox" in text and "sandboxed · risk" in text, text
        await pilot.press("y")
        await wait_until(pilot, lambda: app.states().get("touch") == "done", "touch to run")
        await wait_until(pilot, lambda: "Bash ▣" in screen_text(app), "the sandbox mark in the table")
        rows = {row.call_id: row for row in app.main.table.rows.rows}
        assert rows["look"].sandboxed and rows["touch"].sandboxed
        assert rows["look"].tool_label == "Bash ▣"


async def test_the_dialog_says_when_a_command_would_leave_the_sandbox(tmp_path, monkeypatch):
    need_program("bwrap")
    session = make_session(tmp_path, monkeypatch, [
        {"text": "Outside.", "tool_calls": [
            {"id": "free", "name": "Bash", "input": {"command": "ls", "dangerouslyDisableSandbox": True}}]},
        {"text": "Done."},
    ])
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 44)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "go")
        await wait_until(pilot, lambda: app.dialog, "the question")
        text = screen_text(app)
        assert "OUTSIDE the sandbox" in text and "NOT sandboxed" in text and "dangerouslyDisableSandbox" in text
        await pilot.press("n")
        await wait_until(pilot, lambda: app.states().get("free") == "denied", "the denial")


async def test_the_header_says_when_there_is_no_sandbox(tmp_path, monkeypatch):
    from tui_app.tools.bash import sandbox

    monkeypatch.setattr(sandbox, "probe", lambda: sandbox.Probe(False, "bubblewrap is not installed"))
    session = make_session(tmp_path, monkeypatch, [{"text": "Hi."}])
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 44)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: "mode default · ⚠ no sandbox ·" in screen_text(app).splitlines()[0],
                         "the header's warning")
        assert app.main.header.state.sandbox == "unavailable"


async def test_with_a_sandbox_the_header_says_nothing_about_it(tmp_path, monkeypatch):
    need_program("bwrap")
    session = make_session(tmp_path, monkeypatch, [{"text": "Hi."}])
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 44)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: app.main.header.state.sandbox == "on", "the sandbox status")
        assert "sandbox" not in screen_text(app).splitlines()[0].split("tokens")[0]


def test_a_directory_is_resolved_before_it_is_added(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "file").write_text("x")
    assert resolve_directory("lib", str(tmp_path)) == (str((tmp_path / "lib").resolve()), "")
    assert resolve_directory(" ../" + tmp_path.name + "/lib ", str(tmp_path)) == (str((tmp_path / "lib").resolve()), "")
    assert resolve_directory("file", str(tmp_path))[0] is None
    assert resolve_directory("a\x00b", str(tmp_path))[0] is None
    assert resolve_directory("", str(tmp_path))[0] is None
