"""The artifact browser screen and `vigil artifacts`: a session's outputs listed and opened,
snapshots of what the user sees, sessions found by id, prefix or recency."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import DataTable, Input

from tests.viewer_harness import screen_rows, status_text, wait_for
from tui_app.app import artifacts_command
from tui_app.app.screens.artifacts import ArtifactBrowserApp, ArtifactBrowserScreen
from tui_app.cli import main as cli_main
from tui_app.runtime.results.artifacts import ArtifactInfo
from widgets.viewer.artifact_lines import ArtifactLines

CREATED = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC

PYTEST_OUTPUT = "".join(
    [f"tests/test_stats.py::test_case_{i:03d} \x1b[32mPASSED\x1b[0m\n" for i in range(1, 40)]
    + ["tests/test_stats.py::test_median_even \x1b[31mFAILED\x1b[0m\n",
       "    assert median([1, 2, 3, 4]) == 2.5\n",
       "E   assert 2 == 2.5\n",
       "\x1b[31m===== 1 failed, 39 passed in 0.42s =====\x1b[0m\n"]
)
GREP_OUTPUT = "".join(f"calc/stats.py:{i}:    return sorted(values)[{i}]  # [bold]not markup[/]\n"
                      for i in range(1, 120))


def make_session(home: Path, session_id: str, artifacts: list[tuple[str, str, str]]) -> Path:
    """A session directory as the ArtifactStore writes it: files plus index.jsonl."""
    directory = home / "sessions" / session_id / "artifacts"
    directory.mkdir(parents=True)
    (home / "sessions" / session_id / "events.jsonl").write_text("")
    with open(directory / "index.jsonl", "w", encoding="utf-8") as index:
        for n, (call_id, tool, text) in enumerate(artifacts):
            artifact_id = f"{call_id}-0000000{n}"
            path = directory / f"{artifact_id}.txt"
            data = text.encode()
            path.write_bytes(data)
            info = ArtifactInfo(artifact_id, call_id, tool, len(data), data.count(b"\n"), CREATED + 60 * n,
                                path=str(path))
            index.write(json.dumps(asdict(info)) + "\n")
    return directory


@pytest.fixture
def session(tmp_path, utc) -> Path:
    return make_session(tmp_path, "s-20260101-demo", [
        ("toolu_01Bash", "Bash", PYTEST_OUTPUT),
        ("toolu_02Grep", "Grep", GREP_OUTPUT),
        ("toolu_03WebFetch", "WebFetch", "<html>\n" + "x" * 50_000 + "\n</html>\n"),
    ])


def browser(directory: Path) -> ArtifactBrowserApp:
    return ArtifactBrowserApp(session_id=directory.parent.name, directory=directory)


async def indexed(pilot) -> None:
    lines = pilot.app.screen.query_one(ArtifactLines)
    await wait_for(pilot, lambda: lines.index is not None and lines.index.progress().complete)
    await pilot.pause()


def test_snapshot_browser_lists_the_session_and_shows_the_first_artifact(snap_compare, session):
    assert snap_compare(browser(session), terminal_size=(110, 30), run_before=indexed)


def test_snapshot_browser_search_highlights_matches_in_the_selected_artifact(snap_compare, session):
    async def run_before(pilot) -> None:
        await indexed(pilot)
        await pilot.press("down", "enter")
        await indexed(pilot)
        await pilot.press("slash")
        pilot.app.screen.query_one(Input).value = "sorted"
        await pilot.press("enter")
        viewer = pilot.app.screen.query_one("#artifact-viewer")
        await wait_for(pilot, lambda: viewer.search.done and viewer.pending is None)
        await pilot.pause()

    assert snap_compare(browser(session), terminal_size=(110, 30), run_before=run_before)


def test_snapshot_browser_of_a_session_without_artifacts(snap_compare, tmp_path, utc):
    directory = make_session(tmp_path, "s-empty", [])
    assert snap_compare(browser(directory), terminal_size=(80, 12))


async def test_moving_through_the_list_opens_each_artifact(session):
    app = browser(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await indexed(pilot)
        lines = app.screen.query_one(ArtifactLines)
        assert screen_rows(lines)[0].split()[1] == "tests/test_stats.py::test_case_001"
        await pilot.press("down")
        await indexed(pilot)
        assert screen_rows(lines)[0].split(None, 1)[1].startswith("calc/stats.py:1:")
        assert "toolu_02Grep-00000001.txt" in status_text(app) and "119 lines" in status_text(app)
        await pilot.press("enter")
        assert app.focused is lines
        await pilot.press("G")
        assert screen_rows(lines)[-1].split(None, 1)[1].startswith("calc/stats.py:119:")


async def test_an_index_that_points_elsewhere_still_finds_the_file_in_the_session(tmp_path, utc):
    directory = make_session(tmp_path / "old-machine", "s-moved", [("toolu_1", "Bash", "hello\n")])
    moved = tmp_path / "new-home" / "sessions" / "s-moved"
    moved.parent.mkdir(parents=True)
    directory.parent.rename(moved)
    app = browser(moved / "artifacts")
    async with app.run_test(size=(80, 12)) as pilot:
        await indexed(pilot)
        assert screen_rows(app.screen.query_one(ArtifactLines))[0].split() == ["1", "hello"]


async def test_a_single_file_opens_without_a_list_and_q_closes(tmp_path):
    path = tmp_path / "output.log"
    path.write_text("only\nthis\n")
    app = ArtifactBrowserApp(path=path)
    async with app.run_test(size=(80, 12)) as pilot:
        await indexed(pilot)
        assert app.screen.query_one(DataTable).display is False
        assert screen_rows(app.screen.query_one(ArtifactLines))[1].split() == ["2", "this"]
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_the_screen_pushed_over_another_app_closes_back_to_it(session):
    class Host(App[None]):
        pass

    app = Host()
    async with app.run_test(size=(100, 24)) as pilot:
        await app.push_screen(ArtifactBrowserScreen(session.parent.name, session))
        await indexed(pilot)
        assert isinstance(app.screen, ArtifactBrowserScreen)
        await pilot.press("q")
        await pilot.pause()
        assert not isinstance(app.screen, ArtifactBrowserScreen)


def test_sessions_are_found_by_id_prefix_or_recency(tmp_path):
    root = tmp_path / "sessions"
    for name, age in (("s-2026-a1", 300), ("s-2026-b2", 10), ("s-2025-c3", 100)):
        (root / name).mkdir(parents=True)
        log = root / name / "events.jsonl"
        log.write_text("")
        stamp = time.time() - age
        os.utime(log, (stamp, stamp))
    assert artifacts_command.find_session(None, root).name == "s-2026-b2"
    assert artifacts_command.find_session("s-2025", root).name == "s-2025-c3"
    assert artifacts_command.find_session("s-2026-a1", root).name == "s-2026-a1"
    with pytest.raises(LookupError, match="matches 2 sessions"):
        artifacts_command.find_session("s-2026", root)
    with pytest.raises(LookupError, match="no session 'zzz'"):
        artifacts_command.find_session("zzz", root)
    with pytest.raises(LookupError, match="no sessions"):
        artifacts_command.find_session(None, tmp_path / "nowhere")


def test_vigil_artifacts_opens_the_newest_session_or_a_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path))
    assert cli_main(["artifacts"]) == 1
    assert "no sessions" in capsys.readouterr().err
    assert cli_main(["artifacts", "nope"]) == 2

    make_session(tmp_path, "s-only", [("toolu_1", "Bash", "x\n")])
    launched: list[tuple] = []
    monkeypatch.setattr(ArtifactBrowserApp, "run", lambda self: launched.append(self._screen_args))
    assert cli_main(["artifacts"]) == 0
    assert cli_main(["artifacts", str(tmp_path / "sessions" / "s-only" / "events.jsonl"), "--follow"]) == 0
    assert launched == [("s-only", tmp_path / "sessions" / "s-only" / "artifacts", None, False),
                        (None, None, str(tmp_path / "sessions" / "s-only" / "events.jsonl"), True)]


async def test_opened_on_one_artifact_of_a_session_the_list_points_at_it(session):
    second = session / "toolu_02Grep-00000001.txt"
    app = ArtifactBrowserApp(session_id=session.parent.name, directory=session, path=second)
    async with app.run_test(size=(110, 30)) as pilot:
        await indexed(pilot)
        await pilot.pause(0.1)
        assert app.screen.query_one(DataTable).cursor_row == 1
        assert "toolu_02Grep-00000001.txt" in status_text(app)
        assert app.focused is app.screen.query_one(ArtifactLines)
        await pilot.press("r")  # reload keeps what is shown
        await pilot.pause(0.1)
        assert "toolu_02Grep-00000001.txt" in status_text(app)


async def test_search_can_start_from_the_list(session):
    app = browser(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await indexed(pilot)
        assert isinstance(app.focused, DataTable)
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"FAILED", "enter")
        viewer = app.screen.query_one("#artifact-viewer")
        await wait_for(pilot, lambda: viewer.search is not None and viewer.search.done and viewer.pending is None)
        assert app.screen.query_one(ArtifactLines).cursor == 39
