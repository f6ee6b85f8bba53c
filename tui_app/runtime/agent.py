"""What a session needs from the agent it runs: one turn at a time, told as session events.

The built-in turn loop (`tui_app.agents.builtin`) and the drivers of external agents are
`TurnRunner`s; the session passes itself in and never asks which agent it runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

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
