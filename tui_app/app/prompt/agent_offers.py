"""What an external agent offers the screen (ACP's available commands and session modes): its
slash commands in the prompt box's completion — the text still goes to the agent as typed — and
its modes, walked by shift+tab and listed in the palette."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AgentSlash:
    name: str
    description: str = ""
    hint: str = ""
    aliases: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"/{self.name} {self.hint}".strip()

    def names(self) -> list[str]:
        return [self.name]


class AgentCommandList:
    """The agent's commands, with the lookups the prompt box's completer asks of a command set."""

    def __init__(self, commands: Sequence[Any]) -> None:
        self.commands = [AgentSlash(c.name, c.description, c.hint) for c in commands]

    def find(self, name: str) -> AgentSlash | None:
        return next((c for c in self.commands if c.name == name), None)

    def matching(self, typed: str) -> list[AgentSlash]:
        typed = typed.lower()
        starts = [c for c in self.commands if c.name.lower().startswith(typed)]
        contains = [c for c in self.commands if c not in starts and typed in c.name.lower()]
        return sorted(starts, key=lambda c: c.name) + sorted(contains, key=lambda c: c.name)


def following_mode(modes: Sequence[Any], current: str | None) -> str | None:
    """The mode after `current` in the agent's list (the first when it is not in it)."""
    ids = [m.id for m in modes]
    if not ids:
        return None
    if current not in ids:
        return ids[0]
    return ids[(ids.index(current) + 1) % len(ids)]
