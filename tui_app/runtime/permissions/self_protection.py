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

from tui_app.runtime.permissions.bash.parse import parse_command

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
    `"$CLAUDE_PROJECT_DIR"/hooks/x.py`, `python3 ~/hooks/y.py`, `cd tools && ./guard.sh` …)."""
    return [path for command, args in handlers for path in _named_files(command, args, project, home)]


def sealed_scripts(command: str, args: tuple[str, ...] | None, project: str, home: str) -> list[str]:
    """What one hook's run is checked against: the program each of its simple commands runs (when
    named by a path: `./guard.sh`, `tools/x`) and the script an interpreter is given (`python3
    hook.py`, `sh tools/late.sh`), whether they exist yet or not — a script that appears later must
    not run either. Other words (a log file the hook appends to) are not sealed."""
    return _named_files(command, args, project, home, programs=True)


#: programs whose first operand is the script they run
INTERPRETERS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "python", "python3", "node", "ruby", "perl", "deno",
                          "bun", "php", "lua", "tclsh", "pwsh"})


def _programs(words: list[str]) -> list[str]:
    found = [words[0]] if words and "/" in words[0] else []
    if words and os.path.basename(words[0]) in INTERPRETERS:
        found += [w for w in words[1:] if not w.startswith("-")][:1]
    return found


def _named_files(command: str, args: tuple[str, ...] | None, project: str, home: str,
                 programs: bool = False) -> list[str]:
    """A hook runs in the project directory; a word names a file relative to it, or to a directory
    an earlier `cd` in the same command moved to. Every directory seen counts for every later word
    (a `cd` inside a pipeline or subshell does not last, but guarding one file too many is safe).
    `programs`: only the programs and interpreters' scripts, existing or not."""
    pick = _programs if programs else list
    if args is not None:  # exec'd without a shell: nothing is expanded, no `cd` runs
        words = pick([command, *args])
        return [path for path in (_as_file(w, project, home, programs) for w in words) if path is not None]
    values = {"CLAUDE_PROJECT_DIR": project, "HOME": home}
    command = _KNOWN_VARIABLE.sub(lambda m: values[m.group(1) or m.group(2)], command)
    bases, found = [project], []
    for part in parse_command(command).commands:
        # a word with another variable in it (`"$HOOKS"/x.sh`) has no value: it names no file we know
        words = [w.value for w in part.words if w.value is not None]
        if words[:1] in (["cd"], ["pushd"]):
            targets = [w for w in words[1:] if not w.startswith("-")]  # `cd -P dir`; `cd -` goes nowhere known
            if targets or len(words) == 1:
                bases.append(_in(bases[-1], targets[0] if targets else "~", home))
        else:
            found += [path for w in pick(words) for base in bases
                      if (path := _as_file(w, base, home, programs)) is not None]
    return list(dict.fromkeys(found))


def _in(base: str, word: str, home: str) -> str:
    if word == "~" or word.startswith("~/"):
        word = home + word[1:]
    return os.path.normpath(os.path.join(base, word))


def _as_file(word: str, base: str, home: str, missing_too: bool = False) -> str | None:
    path = _in(base, word, home)
    return path if missing_too or os.path.isfile(path) else None
