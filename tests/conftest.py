"""Fixtures shared across the suite."""

from __future__ import annotations

import os
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


# The suite's projects carry hooks and `.mcp.json` servers in their own settings files, written
# before Vigil asked to trust a project; they all count as trusted (VIGIL_TRUST_PROJECT is the
# environment's `--trust-project`). The tests of trust itself take it away (tests/test_project_trust.py).
os.environ.setdefault("VIGIL_TRUST_PROJECT", "1")
