"""Fixtures shared across the suite."""

from __future__ import annotations

import time

import pytest

from tests.needs import need_program


@pytest.fixture
def utc(monkeypatch):
    """Local time is UTC for the test: times printed on screen do not depend on the machine."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def tmux_available() -> None:
    """The test drives a real terminal: it needs tmux (skips without it, fails under CI)."""
    need_program("tmux")
