"""Every agent a session can run, in one registry: Vigil's own (`vigil`), Claude Code
(`claude-code`, its control protocol) and any ACP agent (a preset on PATH or an `agents` entry of
the settings). `--agent NAME` picks one; the built-in agent comes through the same door as the
others. See docs/architecture.md, "One kind of agent".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tui_app.runtime.agent import Agent
from tui_app.runtime.model import ModelClient

BUILTIN = "vigil"
#: the external agents with a driver of their own protocol (any other name is tried as an ACP agent)
EXTERNAL_AGENTS = ("claude-code",)


class AgentSetupError(Exception):
    """The agent cannot be run here; the message says why, in one line."""


@dataclass(frozen=True)
class AgentRequest:
    name: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    model: str = ""
    #: the external agent's executable (default: found on PATH)
    command: str | None = None
    #: the agent's own session to resume
    resume_id: str | None = None
    max_turns: int | None = None
    #: the built-in agent's model client (built by the composition root from flags and settings)
    model_client: Callable[[], ModelClient] | None = None


def _builtin(request: AgentRequest) -> Agent:
    from tui_app.agents.builtin_agent import BuiltinAgent

    if request.model_client is None:
        raise AgentSetupError("Vigil's own agent needs a model")
    return BuiltinAgent(request.model_client(), settings=request.settings)


def _claude_code(request: AgentRequest) -> Agent:
    from tui_app.agents.claude_code.agent import ClaudeCodeAgent
    from tui_app.agents.claude_code.command import ClaudeCodeUnusable, check_claude

    command = request.command or request.settings.get("agentCommand")
    try:
        path, version = check_claude(command if isinstance(command, str) else None)
    except ClaudeCodeUnusable as exc:
        raise AgentSetupError(str(exc)) from None
    return ClaudeCodeAgent(command=path, model=request.model, version=version, max_turns=request.max_turns,
                           resume_id=request.resume_id)


def _acp(request: AgentRequest) -> Agent:
    from tui_app.agents.acp.start import UnknownAgent, acp_driver

    try:
        return acp_driver(request.name, dict(request.settings), command=request.command, model=request.model,
                          resume_id=request.resume_id)
    except UnknownAgent as exc:
        raise AgentSetupError(str(exc)) from None


#: name → how to make it; a name not here is looked up among the ACP agents
AGENTS: dict[str, Callable[[AgentRequest], Agent]] = {BUILTIN: _builtin, "claude-code": _claude_code}


def make_agent(request: AgentRequest) -> Agent:
    return AGENTS.get(request.name, _acp)(request)


def agent_names(settings: Mapping[str, Any]) -> list[str]:
    """Every agent `--agent` takes here: Vigil's own, Claude Code's, and the ACP agents."""
    from tui_app.agents.acp.setup import known_agents

    return [BUILTIN, *EXTERNAL_AGENTS, *known_agents(dict(settings))]


def is_external(name: str, settings: Mapping[str, Any]) -> bool:
    """`name` (a session's recorded provider) is an agent of its own, not a model provider."""
    from tui_app.agents.acp.setup import catalog

    return name in EXTERNAL_AGENTS or name in catalog(dict(settings)).agents
