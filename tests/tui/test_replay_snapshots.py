"""Snapshot of a replay mid-timeline (pytest-textual-snapshot). Update after a deliberate change with
`pytest tests/tui/test_replay_snapshots.py --snapshot-update`, then look at the SVG."""

from __future__ import annotations

import time

import pytest

from tests.tui.replay_data import SESSION, position_after, two_turns
from tests.tui.replay_harness import caught_up
from tui_app.app.replay_app import ReplayApp
from tui_app.app.screens.replay import ReplayScreen


@pytest.fixture
def fixed_clock_and_theme(monkeypatch):
    """The bar shows local times; the theme follows the terminal's hints."""
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("VIGIL_THEME", "textual-dark")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_replay_mid_timeline(snap_compare, fixed_clock_and_theme):
    """Turn 1 at the moment the Edit asked: its row waits (no dialog), a command is running (its
    time is the recorded moment's), the diff is shown, the timeline says where it stands."""
    events = two_turns()
    position = position_after(events, "PermissionRequested") + 1
    app = ReplayApp(ReplayScreen(SESSION, events, position=position, cwd_label="~/proj"))
    assert snap_compare(app, terminal_size=(160, 50), run_before=caught_up)
