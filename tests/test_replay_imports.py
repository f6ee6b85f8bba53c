"""The replay cannot run anything because it does not even load what runs things: importing the
replay app (and `vigil replay`'s TUI path) brings in no session, executor, tool, provider or MCP
code, checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent
EXECUTING = ("tui_app.runtime.session", "tui_app.runtime.executor", "tui_app.runtime.pipeline",
             "tui_app.runtime.call", "tui_app.runtime.approval_stage", "tui_app.agents", "tui_app.runtime.hooks",
             "tui_app.app.bridge", "tui_app.app.vigil_app", "tui_app.assemble",
             "tui_app.tools", "tui_app.providers", "tui_app.mcp", "mcp", "anthropic", "openai")


def test_the_replay_app_loads_nothing_that_executes():
    code = ("import json, sys; import tui_app.app.replay_app, tui_app.app.screens.replay, tui_app.app.session_actions; "
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=True)
    loaded = json.loads(done.stdout)
    assert "tui_app.app.replay_app" in loaded and "tui_app.app.screens.main" in loaded
    offenders = [m for m in loaded if any(m == e or m.startswith(e + ".") for e in EXECUTING)]
    assert offenders == []
