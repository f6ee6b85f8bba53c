"""The session's agent: one kind of object, whoever the agent is.

Vigil's own agent (a turn loop over a provider, `tui_app.agents.builtin_agent`) and the drivers of
external agents (Claude Code, any ACP agent) are all `Agent`s, chosen from one registry
(`tui_app.agents.registry`). The session hands itself to `astart`, runs turns through `run_turn`
and closes the agent with itself; it never asks which agent it runs. What an agent can do is data
(`capabilities`, announced in AgentConnected), so no client probes the object: a command an agent
cannot honour raises `Unsupported`, which the controller turns into a typed refusal. See
docs/architecture.md, "One kind of agent".
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_app.runtime.commands import CommandFact
from tui_app.runtime.events import AgentCapabilities, AgentConnected
from tui_app.runtime.executor import TurnControl
from tui_app.runtime.outcome import Outcome


@dataclass
class TurnResult:
    turn_id: str
    reason: str
    text: str = ""
    steps: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    outcomes: list[Outcome] = field(default_factory=list)


class Unsupported(Exception):
    """What was asked is not something this agent does (the message says so, in the user's words)."""


# ---- what a prompt means ------------------------------------------------------------------------

@dataclass(frozen=True)
class PromptIntent:
    """Text for the model (`shown`: what the user typed, when a command expanded it)."""

    text: str
    shown: str | None = None


@dataclass(frozen=True)
class LocalCommandIntent:
    """A built-in slash command Vigil runs itself. `action`: the command it stands for (Compact,
    SetModel …), or None for one that only tells something (/cost, /agents)."""

    name: str
    args: str
    action: Any = None
    #: it needs a screen (/help, /resume): headless it says "isn't available in this environment"
    screen_only: bool = False


@dataclass(frozen=True)
class ShellIntent:
    command: str


@dataclass(frozen=True)
class NoteIntent:
    note: str


@dataclass(frozen=True)
class UnknownCommandIntent:
    name: str
    args: str
    text: str


Intent = PromptIntent | LocalCommandIntent | ShellIntent | NoteIntent | UnknownCommandIntent


@dataclass(frozen=True)
class AgentSetup:
    """What the composition root hands every agent before its session starts (an agent takes what
    it needs of it: Vigil's own agent its subagent tool and MCP servers; a driver nothing)."""

    #: the Agent tool for a menu of subagent types (its description lists them)
    agent_tool: Callable[[str], Any] | None = None
    #: a resumed session's recorded events
    recorded: tuple[Any, ...] = ()
    #: (the session) → its MCP servers' manager, or None when none are configured
    mcp: Callable[[Any], Any] | None = None


class Agent(ABC):
    """The agent a session runs. Subclasses set `name`, `label` and `capabilities`, and implement
    `run_turn`; everything a client may ask beyond a turn answers Unsupported until an agent says
    otherwise."""

    #: its name on the command line and in events ("vigil", "claude-code", "codex" …)
    name: str = "agent"
    #: its name in sentences ("Vigil", "Claude Code")
    label: str = "The agent"
    capabilities: AgentCapabilities = AgentCapabilities()

    def __init__(self, *, model: str = "") -> None:
        #: the model it runs, as far as known ("" until the agent says: its own default)
        self.model = model

    @property
    def provider(self) -> str:
        """The session's provider, as SessionStarted records it (an external agent: its name)."""
        return self.name

    @property
    def base_url(self) -> str | None:
        """Where its model is served, when Vigil talks to it (what prices a run)."""
        return None

    # ---- lifecycle --------------------------------------------------------------------------------

    def prepare(self, session: Any, setup: AgentSetup) -> None:  # noqa: B027 (an optional step)
        """Equip `session` before it starts (called once by the composition root)."""

    async def astart(self, session: Any) -> None:  # noqa: B027 (an optional step)
        """Start for `session` (after SessionStarted): connect, show the model its tools."""

    @abstractmethod
    async def run_turn(self, session: Any, prompt: str, control: TurnControl, turn_id: str) -> TurnResult:
        """One turn of `session` for `prompt` under `control`, told as session events."""

    async def aclose(self) -> None:  # noqa: B027 (an optional step)
        """Stop, and everything started for the session."""

    def connected_event(self) -> AgentConnected:
        """What the session announces about its agent when it starts (external agents announce
        again when they connect)."""
        return AgentConnected(agent=self.name, label=self.label, model=self.model, provider=self.provider,
                              capabilities=self.capabilities)

    # ---- what a prompt means ----------------------------------------------------------------------

    def route(self, text: str) -> Intent:
        return PromptIntent(text)

    def commands(self) -> list[CommandFact]:
        """The slash commands this session offers (built-in, custom, the agent's own)."""
        return []

    def local_output(self, name: str, args: str, facts: Any) -> str:
        """What an informational local command (/cost, /agents …) prints, from the session's facts."""
        raise Unsupported(f"/{name} is not something {self.label} answers")

    def agent_facts(self) -> dict[str, Any]:
        """The agent's part of SessionFacts (context, subagent types, MCP servers, memory files)."""
        return {}

    # ---- changes a client may ask for -------------------------------------------------------------

    async def set_model(self, model: str | None) -> str:
        """Later requests use `model` (None: the one the session started with); returns its name."""
        raise Unsupported(f"{self.label} does not switch models from Vigil")

    async def select_mode(self, mode_id: str) -> None:
        raise Unsupported(f"{self.label} has no modes of its own")

    def permission_mode_changed(self, mode: str) -> None:  # noqa: B027 (an optional step)
        """The session's permission mode changed (an external agent is told in its protocol)."""

    async def compact(self, session: Any, control: TurnControl, instructions: str) -> Any:
        raise Unsupported(f"{self.label} compacts its own conversation (send /compact as a prompt)")

    async def clear(self, session: Any) -> Any:
        raise Unsupported(f"{self.label} keeps its own conversation; it cannot be cleared from Vigil")

    async def run_shell(self, session: Any, command: str, control: TurnControl) -> int | None:
        raise Unsupported(f"{self.label} cannot be given the output of your own commands")

    async def add_memory_note(self, path: Path, note: str) -> Path:
        raise Unsupported(f"{self.label} reads its own memory files")

    def note_targets(self, session: Any) -> list[tuple[str, Path]]:
        return []

    async def reconnect_mcp(self, server: str) -> None:
        raise Unsupported(f"{self.label} connects its own MCP servers")

    def set_system_prompt(self, text: str | None, append: str) -> None:
        raise Unsupported(f"{self.label} has a system prompt of its own")
