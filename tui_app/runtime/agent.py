"""What a session needs from the agent it runs: one turn at a time, told as session events.

The built-in turn loop (`tui_app.agents.builtin`) and the drivers of external agents are
`TurnRunner`s; the session passes itself in and never asks which agent it runs. A driver of an
external agent (DESIGN §11) is an `AgentDriver`: a TurnRunner that also names itself (the
session's provider and model), owns a child process for the whole session (started after
SessionStarted, stopped with the session) and is told when the permission mode changes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

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


#: runs one turn of `session` for `prompt` under `control`, numbered `turn_id`
TurnRunner = Callable[[Any, str, TurnControl, str], Awaitable[TurnResult]]


@runtime_checkable
class AgentDriver(Protocol):
    """An external agent as the session's agent."""

    #: the agent's name ("claude-code"): the session's provider, and the tag on SessionStarted
    name: str
    #: the model it runs, as far as known ("" until the agent says: its own default)
    model: str

    async def __call__(self, session: Any, prompt: str, control: TurnControl, turn_id: str) -> TurnResult: ...

    async def astart(self, session: Any) -> None:
        """Start the agent for `session` (its cwd, its log, its policy)."""
        ...

    async def aclose(self) -> None:
        """Stop the agent and everything it started."""
        ...
