"""What a prompt means, decided once, below every screen: a built-in slash command, a custom
command's expansion, the user's own `!` command, a `#` note for a memory file, an unknown `/word`,
or plain text for the model (`@file` mentions stay in the text: the turn attaches them).

The TUI, `vigil -p`, the Agent SDK mode and `vigil acp` all route through here (the controller
calls its agent's `route`), so `/compact` means the same from a phone as from the terminal. A text
that only looks like a command (`/usr/bin/env is missing`, with more slashes) is plain text.
See docs/architecture.md, "The prompt's meaning".
"""

from __future__ import annotations

from tui_app.agents.memory import is_memory_note, note_text
from tui_app.agents.slash_commands import SCREEN_ONLY, CommandSet, SlashCommand, expand, parse_invocation
from tui_app.agents.user_shell import is_shell_line, shell_command
from tui_app.runtime.agent import (
    Intent,
    LocalCommandIntent,
    NoteIntent,
    PromptIntent,
    ShellIntent,
    UnknownCommandIntent,
)
from tui_app.runtime.commands import (
    AddDirectory,
    Clear,
    CommandFact,
    Compact,
    SetModel,
    SetPermissionMode,
)
from tui_app.runtime.permissions.decision import PERMISSION_MODES


def route(text: str, commands: CommandSet | None, *, notes: bool = True) -> Intent:
    """The intent of `text` for a session whose commands are `commands` (None: an agent with
    commands of its own, which gets slash commands as text)."""
    if is_shell_line(text):
        return ShellIntent(shell_command(text))
    if commands is None:
        return PromptIntent(text)
    if notes and is_memory_note(text):
        return NoteIntent(note_text(text))
    invocation = parse_invocation(text)
    if invocation is None:
        return PromptIntent(text)
    name, args = invocation
    command = commands.find(name)
    if command is None:
        return UnknownCommandIntent(name, args, text)
    if command.kind == "custom":
        return PromptIntent(expand(command, args), shown=text)
    return local_intent(command.name, args)


def local_intent(name: str, args: str) -> LocalCommandIntent:
    """A built-in command: the session command it stands for, if it changes something."""
    word = args.split()[0] if args.split() else ""
    action = None
    if name == "compact":
        action = Compact(instructions=args)
    elif name == "clear":
        action = Clear()
    elif name == "model" and word:
        action = SetModel(model=word)
    elif name == "mode" and word:
        action = SetPermissionMode(mode=word)
    elif name == "add-dir":
        action = AddDirectory(path=args)
    return LocalCommandIntent(name, args, action=action, screen_only=name in SCREEN_ONLY)


def command_facts(commands: CommandSet) -> list[CommandFact]:
    return [fact_of(c) for c in commands.commands]


def fact_of(command: SlashCommand) -> CommandFact:
    builtin = command.kind == "builtin"
    return CommandFact(name=command.name, description=command.description, hint=command.argument_hint,
                       kind="builtin" if builtin else "custom", local=builtin,
                       headless=not (builtin and command.name in SCREEN_ONLY), source=command.path)


def mode_help(current: str) -> str:
    return (f"Permission mode: {current}. /mode {' | '.join(PERMISSION_MODES)} sets it "
            "(shift+tab steps through them).")
