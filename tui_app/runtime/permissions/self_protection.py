"""The files through which an agent could widen its own permissions: every settings file Vigil or
Claude Code reads, and every hook script the settings run. Writes to them always ask (in every
mode but bypassPermissions), whoever proposes them, and the sandbox keeps them read-only.

(`.mcp.json`, `.git/`, `.claude/`, `.vigil/` and shell rc files are protected by name, see
`path_rules.is_protected`.)
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from tui_app.runtime.permissions.bash_parse import parse_command

_PROJECT_VARIABLES = ("$CLAUDE_PROJECT_DIR", "${CLAUDE_PROJECT_DIR}", '"$CLAUDE_PROJECT_DIR"')


def settings_files(project: str, home: str, config_dir: str, extra: Iterable[str] = ()) -> list[str]:
    """Every settings file, whether it exists yet or not."""
    return [
        os.path.join(home, ".claude", "settings.json"), os.path.join(config_dir, "settings.json"),
        os.path.join(project, ".claude", "settings.json"), os.path.join(project, ".claude", "settings.local.json"),
        os.path.join(project, ".vigil", "settings.json"), os.path.join(project, ".vigil", "settings.local.json"),
        *extra,
    ]


def hook_scripts(handlers: Iterable[tuple[str, tuple[str, ...] | None]], project: str, home: str) -> list[str]:
    """Files the hook commands (command, exec args) name that exist (`.claude/hooks/check.sh`,
    `"$CLAUDE_PROJECT_DIR"/hooks/x.py`, `python3 ~/hooks/y.py` …)."""
    found: list[str] = []
    for command, args in handlers:
        for word in _words(command, args, project):
            path = _as_file(word, project, home)
            if path is not None and path not in found:
                found.append(path)
    return found


def _words(command: str, args: tuple[str, ...] | None, project: str) -> list[str]:
    if args is not None:
        return [command, *args]
    for variable in _PROJECT_VARIABLES:
        command = command.replace(variable, project)
    parsed = parse_command(command)
    return [w.value for c in parsed.commands for w in c.words if w.value]


def _as_file(word: str, project: str, home: str) -> str | None:
    if word == "~" or word.startswith("~/"):
        word = home + word[1:]
    path = os.path.normpath(os.path.join(project, word))
    return path if os.path.isfile(path) else None
