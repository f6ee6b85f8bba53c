"""Slash commands: the built-in ones (what the screen does for each is the app's business) and the
custom ones of Claude Code's format, which expand into a prompt.

Custom commands are Markdown files in `.claude/commands/` (the project's) and
`~/.claude/commands/` (the user's); a file in a sub-folder is namespaced by it
(`frontend/component.md` → `/frontend:component`, also `/component` while no other command has that
name). Frontmatter: `description`, `argument-hint`, `allowed-tools`, `model`,
`disable-model-invocation`. The body's `$ARGUMENTS` becomes everything after the name, `$1`, `$2` …
the arguments one by one (quotes group words). A project command wins over a user command of the
same name, and a built-in over both.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path

from tui_app.agents.frontmatter import as_list, parse_frontmatter

#: (name, argument hint, one-line description)
BUILTIN_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("add-dir", "<path>", "Add a working directory for this session"),
    ("agents", "", "The subagent types the Agent tool can start"),
    ("clear", "", "Start a new conversation (the log and the screen keep the old one)"),
    ("compact", "[instructions]", "Summarize the conversation so far to free the context window"),
    ("context", "", "How full the context window is"),
    ("help", "", "The slash commands and what each does"),
    ("mcp", "", "The MCP servers and their state"),
    ("memory", "", "The memory files (CLAUDE.md, AGENTS.md) in the system prompt"),
    ("mode", "[mode]", "Show the permission mode, or set it"),
    ("model", "[name]", "Show the model, or switch to another"),
    ("permissions", "", "The permission rules in force, by settings file"),
    ("resume", "[session id]", "Continue a recorded session"),
    ("usage", "", "Tokens used in this session, and how full the context window is"),
)
#: built-ins that need a screen: headless they say "isn't available in this environment", as Claude Code's do
SCREEN_ONLY = frozenset({"help", "memory", "resume"})
#: other names of a built-in: Claude Code's `/cost` is an alias of `/usage` (its init line lists `usage`,
#: and a headless `/cost` runs as `usage`)
BUILTIN_ALIASES = {"cost": "usage"}
#: a command name: letters, digits, `-`, `_`, `.`, namespaces joined by `:`
_NAME = re.compile(r"^/([A-Za-z0-9_.\-]+(?::[A-Za-z0-9_.\-]+)*)(?:\s+(.*))?$", re.DOTALL)
_POSITIONAL = re.compile(r"\$(\d+)")


@dataclass(frozen=True)
class SlashCommand:
    name: str
    description: str
    argument_hint: str = ""
    kind: str = "builtin"
    #: custom: the file, and whose it is (project or user)
    path: str = ""
    scope: str = ""
    body: str = ""
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None
    disable_model_invocation: bool = False
    #: other names it answers to (a namespaced command's plain name, while unambiguous)
    aliases: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"/{self.name}" + (f" {self.argument_hint}" if self.argument_hint else "")

    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


@dataclass
class CommandSet:
    commands: list[SlashCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def find(self, name: str) -> SlashCommand | None:
        for command in self.commands:
            if command.name == name:
                return command
        return next((c for c in self.commands if name in c.aliases), None)

    def matching(self, typed: str) -> list[SlashCommand]:
        """The commands whose name (or alias) starts with what was typed after the slash, by name;
        then those that merely contain it."""
        typed = typed.lower()
        starts = [c for c in self.commands if any(n.lower().startswith(typed) for n in c.names())]
        contains = [c for c in self.commands if c not in starts and any(typed in n.lower() for n in c.names())]
        return sorted(starts, key=lambda c: c.name) + sorted(contains, key=lambda c: c.name)

    @property
    def custom(self) -> list[SlashCommand]:
        return [c for c in self.commands if c.kind == "custom"]


def builtin_commands() -> list[SlashCommand]:
    aliases: dict[str, tuple[str, ...]] = {}
    for alias, name in BUILTIN_ALIASES.items():
        aliases[name] = (*aliases.get(name, ()), alias)
    return [SlashCommand(name, description, hint, aliases=aliases.get(name, ()))
            for name, hint, description in BUILTIN_COMMANDS]


def _command_from_file(path: Path, root: Path, scope: str, problems: list[str]) -> SlashCommand | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        problems.append(f"{path}: cannot be read: {exc.strerror or exc}")
        return None
    parsed = parse_frontmatter(text, str(path))
    problems.extend(parsed.problems)
    relative = path.relative_to(root).with_suffix("")
    name = ":".join(relative.parts)
    fields = parsed.fields
    folder = ":".join(relative.parts[:-1])
    description = str(fields.get("description") or _first_line(parsed.body) or f"Custom command {name}")
    origin = f"{scope}:{folder}" if folder else scope
    model = fields.get("model")
    return SlashCommand(
        name=name, description=f"{description} ({origin})", argument_hint=str(fields.get("argument-hint") or ""),
        kind="custom", path=str(path), scope=scope, body=parsed.body,
        allowed_tools=tuple(as_list(fields.get("allowed-tools"))), model=str(model) if model else None,
        disable_model_invocation=fields.get("disable-model-invocation") is True,
    )


def _first_line(body: str) -> str:
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= 80 else line[:79] + "…"
    return ""


def load_custom_commands(cwd: str | Path, home: str | Path | None = None) -> CommandSet:
    home_dir = Path(home) if home is not None else Path(os.path.expanduser("~"))
    found: dict[str, SlashCommand] = {}
    problems: list[str] = []
    for scope, root in (("user", home_dir / ".claude" / "commands"), ("project", Path(cwd) / ".claude" / "commands")):
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.md")):
            if not path.is_file():
                continue
            command = _command_from_file(path, root, scope, problems)
            if command is None:
                continue
            if not _NAME.match("/" + command.name):
                problems.append(f"{path}: {command.name!r} is not a usable command name")
                continue
            found[command.name] = command  # the project's (read second) wins
    return CommandSet(list(found.values()), problems)


def load_commands(cwd: str | Path, home: str | Path | None = None) -> CommandSet:
    """Built-ins, then custom commands; a namespaced command also answers to its plain name
    while that name is free."""
    builtins = builtin_commands()
    custom = load_custom_commands(cwd, home)
    taken = {c.name for c in builtins}
    kept = [c for c in custom.commands if c.name not in taken]
    shadowed = [c for c in custom.commands if c.name in taken]
    problems = list(custom.problems) + [f"{c.path}: /{c.name} is a built-in command; the file is ignored"
                                        for c in shadowed]
    plain_names: dict[str, int] = {}
    for command in kept:
        plain = command.name.rsplit(":", 1)[-1]
        plain_names[plain] = plain_names.get(plain, 0) + 1
    names = taken | {c.name for c in kept}
    final = []
    for command in kept:
        plain = command.name.rsplit(":", 1)[-1]
        if plain != command.name and plain_names[plain] == 1 and plain not in names:
            command = replace(command, aliases=(plain,))
        final.append(command)
    return CommandSet(builtins + final, problems)


def parse_invocation(text: str) -> tuple[str, str] | None:
    """`/name args` → (name, args); None when the text is not a slash command (a path such as
    `/usr/bin` with more slashes is not one)."""
    match = _NAME.match(text.strip())
    if match is None:
        return None
    return match.group(1), (match.group(2) or "").strip()


def split_arguments(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: split on spaces rather than refuse
        return arguments.split()


def expand(command: SlashCommand, arguments: str) -> str:
    """The prompt a custom command stands for. Arguments given to a body that has no placeholder
    follow it, so they are never lost."""
    body = command.body
    words = split_arguments(arguments)
    uses_placeholders = "$ARGUMENTS" in body or _POSITIONAL.search(body) is not None
    body = body.replace("$ARGUMENTS", arguments)
    body = _POSITIONAL.sub(lambda m: words[int(m.group(1)) - 1] if 0 < int(m.group(1)) <= len(words) else "", body)
    body = body.strip()
    if arguments and not uses_placeholders:
        body = f"{body}\n\nARGUMENTS: {arguments}"
    return body


def expand_prompt(text: str, commands: CommandSet) -> tuple[str, SlashCommand | None]:
    """A prompt that names a custom command becomes its expansion; anything else is unchanged."""
    invocation = parse_invocation(text)
    if invocation is None:
        return text, None
    command = commands.find(invocation[0])
    if command is None or command.kind != "custom":
        return text, None
    return expand(command, invocation[1]), command
