"""ACP agents under Vigil, for tests: the fixture agent (tests/acp_fixture_agent.py, the SDK's agent
side, driven by a script) or the real Claude ACP adapter, configured in the settings' `agents` and
run by a real Vigil session."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.cc_kit import DEADLINE_S, first, recorder, wait_for  # noqa: F401  (re-exported for the tests)
from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime.session import Session

FIXTURE = Path(__file__).parent / "acp_fixture_agent.py"


def fixture_settings(tmp_path: Path, script: dict[str, Any], name: str = "fixture",
                     extra: dict[str, Any] | None = None) -> tuple[Path, Path]:
    """A settings file naming the fixture agent with `script`; (settings file, the agent's log)."""
    script_path = tmp_path / f"{name}-script.json"
    script_path.write_text(json.dumps(script))
    log = tmp_path / f"{name}-log.jsonl"
    entry = {"protocol": "acp", "command": sys.executable, "args": [str(FIXTURE), str(script_path)],
             "env": {"ACP_FIXTURE_LOG": str(log)}, **(extra or {})}
    settings = tmp_path / f"{name}-settings.json"
    settings.write_text(json.dumps({"agents": {name: entry}}))
    return settings, log


def fixture_session(tmp_path: Path, project: Path, script: dict[str, Any], **kw: Any) -> tuple[Session, Path]:
    settings, log = fixture_settings(tmp_path, script)
    options = SessionOptions(cwd=str(project), agent="fixture", settings_file=str(settings),
                             no_claude_settings=True, **kw)
    return build_session(options), log


def agent_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def logged(path: Path, key: str) -> list[Any]:
    return [entry for entry in agent_log(path) if key in entry]
