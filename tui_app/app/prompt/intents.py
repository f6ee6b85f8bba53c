"""What Enter in the prompt box asks for, as Textual messages: the screen posts one (`read_intent`)
and handles it, so the prompt's actions never reach back into the screen. What a prompt MEANS to
the session is decided below the screen (the session's prompt router); here only what the screen
shows by itself is picked out: a command's view (/help, /usage …), the choice of a `#` note's memory
file, or a word that the agent does not offer. Everything else is sent as typed.
"""

from __future__ import annotations

from typing import Any, Protocol

from textual.message import Message

from tui_app.agents.memory import is_memory_note
from tui_app.agents.slash_commands import parse_invocation
from tui_app.runtime.commands import SessionFacts

#: built-in commands the screen answers with a view of its own
VIEWS = frozenset({"agents", "help", "memory", "permissions", "resume", "usage"})


class PromptIntent(Message):
    """Enter was pressed on `text` (or the palette ran it)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class SendPrompt(PromptIntent):
    """Send the text to the session as typed; its reply says what became of it."""


class ShowCommand(PromptIntent):
    """A built-in command the screen shows by itself (/help, /usage, /model with no argument …)."""

    def __init__(self, text: str, name: str, arguments: str) -> None:
        super().__init__(text)
        self.name = name
        self.arguments = arguments


class NoteToMemory(PromptIntent):
    """A `#` note: the user picks the memory file it goes to."""


class NotOffered(PromptIntent):
    """Something this session's agent does not offer: said, and the text stays in the box."""

    def __init__(self, text: str, message: str) -> None:
        super().__init__(text)
        self.message = message


def model_not_switchable(facts: SessionFacts) -> str:
    """What /model says in a session whose agent picks its own model and has no /model of its own."""
    model = facts.model or "the model it picked itself"
    return (
        f"{facts.agent_label} does not switch models from Vigil and has no /model command: it runs {model}. "
        "To send the text to the agent as it is, start it with a space."
    )


def read_intent(text: str, facts: SessionFacts | None) -> PromptIntent:
    """What Enter on `text` asks of the screen, given the session's facts (None: not known yet)."""
    capabilities = facts.capabilities if facts is not None else None
    if is_memory_note(text) and capabilities is not None and capabilities.memory_notes:
        return NoteToMemory(text)
    invocation = parse_invocation(text)
    if invocation is None or facts is None or capabilities is None:
        return SendPrompt(text)
    name, arguments = invocation
    offered = {c.name for c in facts.slash_commands}
    if name == "model" and not capabilities.set_model and name not in offered:
        return NotOffered(text, model_not_switchable(facts))
    builtin = {c.name for c in facts.slash_commands if c.kind == "builtin"}
    if name in builtin and (name in VIEWS or (name in ("model", "mode") and not arguments.strip())):
        return ShowCommand(text, name, arguments)
    return SendPrompt(text)


class PromptHost(Protocol):
    """What the prompt's actions use of the screen they run on (the main screen)."""

    controls: Any
    view: Any

    @property
    def prompt(self) -> Any: ...

    @property
    def app(self) -> Any: ...

    @property
    def session_id(self) -> str: ...

    def notify(self, message: str, **options: Any) -> None: ...

    def run_worker(self, work: Any, **options: Any) -> Any: ...
