"""Where the real agents the tests drive are: pinned in tests/agents/package.json, installed by
`.ci/run` (`npm ci --ignore-scripts --prefix tests/agents`). Without them a test skips with the
reason (fails under CI, see tests/needs.py)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.needs import missing, require

AGENTS = Path(__file__).parent / "agents"
NODE_MODULES = AGENTS / "node_modules"
#: Claude Code's native binary ships in a platform package; its postinstall only links it
CLAUDE_BINARY = NODE_MODULES / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
CLAUDE_ACP_ADAPTER = NODE_MODULES / "@agentclientprotocol" / "claude-agent-acp" / "dist" / "index.js"
INSTALL = "npm ci --ignore-scripts --prefix tests/agents"


def claude_binary() -> Path:
    """The pinned Claude Code CLI (skips, or fails under CI, when it is not installed)."""
    if not (CLAUDE_BINARY.is_file() and os.access(CLAUDE_BINARY, os.X_OK)):
        require(f"Claude Code is not installed ({INSTALL})")
    return CLAUDE_BINARY


def claude_acp_adapter() -> Path:
    """The pinned Claude ACP adapter's entry point (run with node)."""
    require(missing("node"))
    if not CLAUDE_ACP_ADAPTER.is_file():
        require(f"the Claude ACP adapter is not installed ({INSTALL})")
    return CLAUDE_ACP_ADAPTER
