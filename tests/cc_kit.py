"""Claude Code under Vigil, for tests: the real CLI (pinned in tests/agents) against the loopback
Anthropic server, in a fresh HOME, driven by a real Vigil session.

Claude Code merges assistant turns that share a message id, so every reply gets its own.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.real_agents import claude_binary
from tests.waiting import eventually
from tests.wire_server import Captured, LoopbackServer, Reply, anthropic_events, sse
from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime.session import Session

#: generous: the machine is shared and Claude Code starts in a few hundred ms when idle
DEADLINE_S = 60.0
_ids = itertools.count(1)


def cc_reply(*, text: str = "", tool_calls: list[dict[str, Any]] = (), **kw: Any) -> Reply:  # type: ignore[assignment]
    events = anthropic_events(text=text, tool_calls=list(tool_calls), **kw)
    events[0]["message"]["id"] = f"msg_vigil_test_{next(_ids):05d}"
    return Reply(pieces=sse(events))


def tool(call_id: str, name: str, **data: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "input": data}


def tool_results(request: Captured) -> dict[str, tuple[str, bool]]:
    """tool_use_id → (text, is_error) of the tool_result blocks in a request's last message."""
    out = {}
    for block in request.json["messages"][-1]["content"]:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            content = block.get("content")
            if isinstance(content, list):
                content = "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
            out[block["tool_use_id"]] = (content or "", bool(block.get("is_error")))
    return out


@pytest.fixture
def claude() -> Path:
    return claude_binary()


@pytest.fixture
def cc_home(tmp_path, monkeypatch) -> Path:
    """A fresh HOME (Claude Code's and Vigil's), a private VIGIL_HOME; no telemetry."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vigil-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    monkeypatch.setenv("DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    return home


@pytest.fixture
def project(tmp_path, cc_home) -> Path:
    """A project Claude Code trusts, with one file in it."""
    path = tmp_path / "project"
    path.mkdir()
    (path / "notes.txt").write_text("hello world\n")
    trust(cc_home, path)
    return path


def trust(home: Path, project: Path) -> None:
    config = home / ".claude.json"
    data = json.loads(config.read_text()) if config.exists() else {}
    data.setdefault("projects", {})[str(project)] = {"hasTrustDialogAccepted": True}
    config.write_text(json.dumps(data))


@pytest.fixture
def server(monkeypatch):
    with LoopbackServer() as running:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", running.url)
        yield running


def cc_session(claude: Path, project: Path, **kw: Any) -> Session:
    options = SessionOptions(cwd=str(project), agent="claude-code", agent_command=str(claude), **kw)
    return build_session(options)


def recorder(session: Session) -> list[Any]:
    seen: list[Any] = []
    session.subscribe(seen.append)
    return seen


async def wait_for(predicate: Callable[[], Any], what: str, deadline_s: float = DEADLINE_S) -> Any:
    """Wait for something to become true (an event arrived, a file changed), polling the loop."""
    return await eventually(predicate, what, deadline_s)


def first(events: list[Any], kind: str, **fields: Any) -> Any:
    return next((e for e in events if e.type == kind and all(getattr(e, k) == v for k, v in fields.items())), None)


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2:].split()[0] != b"Z"
