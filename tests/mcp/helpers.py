"""Running Vigil headless against real MCP servers, for the MCP tests.

The npm servers are pinned in tests/mcp_servers/package.json (+ lock) and installed by .ci/run
(`npm ci --ignore-scripts`). Without them the tests that need them skip locally, and fail when
`VIGIL_REQUIRE_ALL` is set (CI sets it), so CI can never pass by skipping.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from tests.needs import require

SERVERS_DIR = Path(__file__).parent.parent / "mcp_servers"
NODE_MODULES = SERVERS_DIR / "node_modules" / "@modelcontextprotocol"
EVERYTHING_JS = NODE_MODULES / "server-everything" / "dist" / "index.js"
FILESYSTEM_JS = NODE_MODULES / "server-filesystem" / "dist" / "index.js"
FIXTURE = SERVERS_DIR / "fixture_server.py"


def _node_servers_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (EVERYTHING_JS.exists() and FILESYSTEM_JS.exists()):
        return "tests/mcp_servers/node_modules is missing (npm ci --ignore-scripts --prefix tests/mcp_servers)"
    return None


def need_node_servers() -> None:
    reason = _node_servers_missing()
    if reason is None:
        return
    require(reason)


def everything(**extra: Any) -> dict[str, Any]:
    return {"command": "node", "args": [str(EVERYTHING_JS), "stdio"], **extra}


def filesystem(root: Path, **extra: Any) -> dict[str, Any]:
    return {"command": "node", "args": [str(FILESYSTEM_JS), str(root)], **extra}


def fixture(state_dir: Path, *flags: str, **extra: Any) -> dict[str, Any]:
    env = {"FIXTURE_STATE_DIR": str(state_dir), **extra.pop("env", {})}
    return {"command": sys.executable, "args": [str(FIXTURE), *flags], "env": env, **extra}


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "name": name, "input": arguments}


def run_vigil(project: Path, steps: list[dict[str, Any]], servers: dict[str, Any] | None = None,
              *args: str, fmt: str = "events") -> tuple[int, list[dict[str, Any]]]:
    """`vigil -p` with a scripted model; returns the exit code and the printed JSON lines."""
    from tui_app.cli import main

    script = project.parent / "script.json"
    script.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    argv = ["-p", "go", "--script", str(script), "--cwd", str(project), "--output-format", fmt]
    if servers is not None:
        config = project.parent / "mcp-config.json"
        config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
        argv += ["--mcp-config", str(config)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*argv, *args])
    return code, [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def of(events: list[dict[str, Any]], kind: str, call_id: str | None = None) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == kind and (call_id is None or e.get("call_id") == call_id)]


def outcome(events: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    found = [e for e in events if e.get("type") in ("ToolCallResult", "ToolCallError") and e["call_id"] == call_id]
    assert len(found) == 1, f"{call_id}: {len(found)} outcomes"
    return found[0]


def text_of(event: dict[str, Any]) -> str:
    content = event["model_content"]
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", f"[{part['type']}]") for part in content)
