"""Fixtures shared across the suite."""

from __future__ import annotations

import time

import pytest


@pytest.fixture
def utc(monkeypatch):
    """Local time is UTC for the test: times printed on screen do not depend on the machine."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
