"""Widgets (and the screens that only show session events) render data; they never run tools.
So they import no part of the runtime that executes
(executor, pipeline, session, turn, hooks) and nothing from tools, providers, MCP or the app."""

from __future__ import annotations

from pathlib import Path

from tests.test_layers import imported_modules

ROOT = Path(__file__).parent.parent
APP = ROOT / "tui_app" / "app"
VIEW_CODE = [*sorted((ROOT / "widgets").rglob("*.py")),
             *(APP / "screens" / f"{name}.py" for name in (
                 "approval", "question", "main", "replay", "settings_files", "mcp_servers")),
             APP / "replay_app.py", APP / "session_actions.py", APP / "commands.py"]
FORBIDDEN = ("tui_app.runtime.executor", "tui_app.runtime.pipeline", "tui_app.runtime.session",
             "tui_app.runtime.call", "tui_app.runtime.approval_stage", "tui_app.runtime.hooks", "tui_app.agents",
             "tui_app.tools", "tui_app.providers", "tui_app.mcp", "tui_app.app.vigil_app", "tui_app.app.bridge",
             "tui_app.assemble", "tui_app.cli", "tui_app.headless.runner")


def test_view_code_imports_nothing_that_executes():
    offenders = [f"{path.name}: {name}" for path in VIEW_CODE for name in imported_modules(path)
                 if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)]
    assert offenders == []


def test_widgets_do_not_import_the_screens():
    offenders = [f"{path.name}: {name}" for path in sorted((ROOT / "widgets").rglob("*.py"))
                 for name in imported_modules(path) if name.startswith("tui_app.app.screens")]
    assert offenders == []
