"""The files through which an agent could widen its own permissions: every settings file Vigil or
Claude Code reads, and every hook script the settings run. Writes to them always ask (in every
mode but bypassPermissions), whoever proposes them, and the sandbox keeps them read-only.

(`.mcp.json`, `.git/`, `.claude/`, `.vigil/` and shell rc files are protected by name, see
`path_rules.is_protected`.)
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from tui_app.runtime.permissions.bash_parse import parse_command

#: the variables a hook command names its script by that Vigil knows the value of (`$HOME`, but
#: not `$HOMEBREW_PREFIX`); anything else leaves the word unknown
_KNOWN_VARIABLE = re.compile(r"\$\{(CLAUDE_PROJECT_DIR|HOME)\}|\$(CLAUDE_PROJECT_DIR|HOME)\b")


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
    words = (word for command, args in handlers for word in _words(command, args, project, home))
    paths = (_as_file(word, project, home) for word in words)
    return [path for path in paths if path is not None]


def _words(command: str, args: tuple[str, ...] | None, project: str, home: str) -> list[str]:
    if args is not None:  # exec'd without a shell: nothing is expanded
        return [command, *args]
    values = {"CLAUDE_PROJECT_DIR": project, "HOME": home}
    command = _KNOWN_VARIABLE.sub(lambda m: values[m.group(1) or m.group(2)], command)
    parsed = parse_command(command)
    # a word with another variable in it (`"$HOOKS"/x.sh`) has no value: it names no file we know
    return [w.value for c in parsed.commands for w in c.words if w.value is not None]


def _as_file(word: str, project: str, home: str) -> str | None:
    if word == "~" or word.startswith("~/"):
        word = home + word[1:]
    path = os.path.normpath(os.path.join(project, word))
    return path if os.path.isfile(path) else None
