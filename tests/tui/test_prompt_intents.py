"""What Enter in the prompt box asks of the screen, decided without a screen: a command's view, a
`#` note, a word the agent does not offer, or the text sent as typed."""

from __future__ import annotations

from tui_app.app.prompt.intents import VIEWS, NoteToMemory, NotOffered, SendPrompt, ShowCommand, read_intent
from tui_app.app.prompt.slash_actions import VIEWS_BY_NAME
from tui_app.runtime.commands import CommandFact, SessionFacts
from tui_app.runtime.events import AgentCapabilities

BUILTIN = [CommandFact(name=n) for n in ("help", "usage", "model", "mode", "compact")]


def facts(capabilities: AgentCapabilities, commands: list[CommandFact], label: str = "Vigil") -> SessionFacts:
    return SessionFacts(
        session_id="s",
        cwd="/p",
        project_dir="/p",
        agent=label.lower(),
        agent_label=label,
        capabilities=capabilities,
        permission_mode="default",
        slash_commands=commands,
    )


def test_the_builtin_agents_views_notes_and_commands():
    builtin = facts(AgentCapabilities(set_model=True, memory_notes=True, compact=True), BUILTIN)
    shown = read_intent("/usage", builtin)
    assert isinstance(shown, ShowCommand) and (shown.name, shown.arguments, shown.text) == ("usage", "", "/usage")
    assert isinstance(read_intent("/model", builtin), ShowCommand)
    assert isinstance(read_intent("/model opus", builtin), SendPrompt)  # the session switches it
    assert isinstance(read_intent("/compact", builtin), SendPrompt)  # the session runs it
    assert isinstance(read_intent("# use tabs", builtin), NoteToMemory)
    assert isinstance(read_intent("fix the bug", builtin), SendPrompt)
    assert isinstance(read_intent("/usage", None), SendPrompt)  # facts not known yet: the session decides


def test_an_agent_that_picks_its_own_model_says_so_unless_it_has_a_model_command():
    bare = facts(AgentCapabilities(own_tools=True, own_commands=True), [], label="fixture")
    said = read_intent("/model", bare)
    assert isinstance(said, NotOffered) and said.message.startswith("fixture does not switch models from Vigil")
    assert isinstance(read_intent("# a note", bare), SendPrompt)  # no memory notes: the agent gets the text
    own = facts(AgentCapabilities(own_tools=True), [CommandFact(name="model", kind="agent")], label="claude")
    assert isinstance(read_intent("/model", own), SendPrompt)  # its own /model answers


def test_every_view_the_intents_name_is_one_the_screen_has():
    assert set(VIEWS_BY_NAME) == VIEWS
