"""Fixtures of the MCP tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def vigil_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private VIGIL_HOME and HOME (no user settings leak in), and a project directory."""
    import tui_app.tools

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vigil-home"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("MCP_TOOL_TIMEOUT", raising=False)
    monkeypatch.delenv("MCP_TIMEOUT", raising=False)
    # these tests are about MCP tools: the built-ins stay off the menu
    monkeypatch.setattr(tui_app.tools, "builtin_tools", lambda: [])
    project = tmp_path / "project"
    project.mkdir()
    return project
