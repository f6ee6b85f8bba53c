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
#: Codex's ACP adapter embeds Codex itself (its native binary ships in a platform package)
CODEX_ACP = NODE_MODULES / "@zed-industries" / "codex-acp-linux-x64" / "bin" / "codex-acp"
GEMINI_CLI = NODE_MODULES / "@google" / "gemini-cli" / "bundle" / "gemini.js"
#: OpenCode's `bin/opencode.exe` is a stub its postinstall replaces; the platform package's binary runs
OPENCODE = NODE_MODULES / "opencode-linux-x64" / "bin" / "opencode"
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


def _executable(path: Path, what: str) -> Path:
    if not (path.is_file() and os.access(path, os.X_OK)):
        require(f"{what} is not installed ({INSTALL})")
    return path


def codex_acp() -> Path:
    """The pinned codex-acp binary (Codex's ACP adapter, Codex core inside)."""
    return _executable(CODEX_ACP, "codex-acp")


def gemini_cli() -> Path:
    """The pinned Gemini CLI's bundle (run with node)."""
    require(missing("node"))
    if not GEMINI_CLI.is_file():
        require(f"Gemini CLI is not installed ({INSTALL})")
    return GEMINI_CLI


def opencode() -> Path:
    """The pinned OpenCode binary."""
    return _executable(OPENCODE, "OpenCode")
