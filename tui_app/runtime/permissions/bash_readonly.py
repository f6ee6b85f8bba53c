"""Which shell commands only read, and the Bash tool's flags for one command.

    from tui_app.runtime.permissions.bash_readonly import bash_flags

    BASH = ToolSpec(name="Bash", ..., flags=BASH_FLAGS, flags_for=lambda data: bash_flags(data["command"]))

`bash_flags(command)` returns READ_ONLY_BASH_FLAGS (read-only, concurrency-safe, side-effect
scope none, needs no approval, risk low) when every simple command of the line only reads —
`git status`, `ls -la | wc -l`, `grep -rn foo src 2>/dev/null` — and otherwise BASH_FLAGS (or
DESTRUCTIVE_BASH_FLAGS for `rm -rf`, `git reset --hard` and friends). So `git status` runs in
parallel with reads and never asks, while `rm -rf build` runs alone and asks.

A command counts as read-only only if the line parses, no part writes a file (`>` to anything
but /dev/null), no part sets variables other than harmless locale ones, and every simple
command — including those inside `$( )` — is one of the read-only commands below in a form
that cannot write or run anything (`find` without `-exec`/`-delete`, `git branch` without
`-d`/`-m`, `sort` without `-o`, `rg` without `--pre` …).
"""

from __future__ import annotations

from collections.abc import Callable

from tui_app.runtime.contract import ToolFlags
from tui_app.runtime.permissions.bash_parse import ParsedCommand, SimpleCommand, parse_command

READ_ONLY_BASH_FLAGS = ToolFlags(read_only=True, concurrency_safe=True, side_effect_scope="none",
                                 needs_approval=False, risk="low")
BASH_FLAGS = ToolFlags(read_only=False, concurrency_safe=False, side_effect_scope="system",
                       needs_approval=True, risk="medium")
DESTRUCTIVE_BASH_FLAGS = BASH_FLAGS.model_copy(update={"destructive": True, "risk": "high"})

#: commands that only read whatever their arguments (as long as they are not run with `-exec` etc.)
PLAIN_READERS = frozenset({
    "ls", "cat", "head", "tail", "wc", "pwd", "echo", "printf", "which", "stat", "du", "df", "diff",
    "grep", "egrep", "fgrep", "true", "false", "whoami", "id", "uname",
    "basename", "dirname", "realpath", "readlink", "cut", "tr", "nl", "cmp", "comm", "md5sum",
    "sha1sum", "sha256sum", "test", "[", "cd", "type",
})
SAFE_ASSIGNMENTS = frozenset({"LANG", "LANGUAGE", "TZ", "NO_COLOR", "COLUMNS", "TERM", "GIT_PAGER", "PAGER"})

FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0",
                          "-fprintf", "-fls"})
GIT_READERS = frozenset({"status", "diff", "log", "show", "branch"})
GIT_WRITING_OPTIONS = ("--output", "--ext-diff")
GIT_BRANCH_WRITES = frozenset({"-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u", "--delete", "--move", "--copy",
                               "--force", "--set-upstream-to", "--unset-upstream", "--edit-description",
                               "--track", "--no-track", "--create-reflog"})
GIT_BRANCH_LISTING = frozenset({"-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged",
                                "--points-at"})


def _values(command: SimpleCommand) -> list[str] | None:
    values = [w.value for w in command.args]
    return None if any(v is None for v in values) else values  # type: ignore[return-value]


def _find(command: SimpleCommand) -> bool:
    values = _values(command)
    return values is not None and not any(v in FIND_ACTIONS for v in values)


def _rg(command: SimpleCommand) -> bool:
    values = _values(command)
    return values is not None and not any(v == "--pre" or v.startswith("--pre=") for v in values)


def _sort(command: SimpleCommand) -> bool:
    values = _values(command)
    if values is None:
        return False
    for v in values:
        if v.startswith(("--output", "--compress-program")):
            return False
        if v.startswith("-") and not v.startswith("--") and "o" in v[1:]:
            return False
    return True


def _git(command: SimpleCommand) -> bool:
    values = _values(command)
    if values is None:
        return False
    while values and values[0] == "--no-pager":
        values = values[1:]
    if not values or values[0] not in GIT_READERS:
        return False
    sub, rest = values[0], values[1:]
    if any(v.startswith(GIT_WRITING_OPTIONS) for v in rest):
        return False
    if sub != "branch":
        return True
    if any(v in GIT_BRANCH_WRITES or v.startswith(("--set-upstream-to=", "--track=")) for v in rest):
        return False
    positional = [v for v in rest if not v.startswith("-")]
    # `git branch NAME` creates a branch; names are only read with a listing option
    return not positional or any(v.split("=")[0] in GIT_BRANCH_LISTING for v in rest)


def _date(command: SimpleCommand) -> bool:
    values = _values(command)  # `date -s` sets the clock (and agents often run as root)
    return values is not None and not any(v.startswith(("-s", "--set")) for v in values)


def _hostname(command: SimpleCommand) -> bool:
    values = _values(command)  # `hostname NAME` renames the machine
    return values is not None and all(v.startswith("-") for v in values)


CHECKED_READERS: dict[str, Callable[[SimpleCommand], bool]] = {
    "find": _find, "rg": _rg, "sort": _sort, "git": _git, "date": _date, "hostname": _hostname,
}


def command_is_read_only(command: SimpleCommand) -> bool:
    if any(a.split("=", 1)[0] not in SAFE_ASSIGNMENTS and not a.startswith("LC_") for a in command.assignments):
        return False
    name = command.name
    if name is None:
        return False
    if name in PLAIN_READERS:
        return True
    check = CHECKED_READERS.get(name)
    return check is not None and check(command)


def is_read_only(parsed: ParsedCommand) -> bool:
    if not parsed.ok:
        return False
    if any(r.writes for r in parsed.redirects):
        return False
    return all(command_is_read_only(c) for c in parsed.commands)


def _is_destructive(command: SimpleCommand) -> bool:
    values = [w.value or "" for w in command.words]
    if not values:
        return False
    name, rest = values[0], values[1:]
    if name == "rm":
        return any(v.startswith("-") and not v.startswith("--") and ("r" in v or "f" in v) for v in rest) or any(
            v in ("--recursive", "--force") for v in rest)
    if name in ("dd", "mkfs", "shred", "wipefs") or name.startswith("mkfs."):
        return True
    if name == "git" and rest:
        sub = rest[0]
        return ((sub == "reset" and "--hard" in rest) or (sub == "clean" and any(v.startswith("-f") for v in rest))
                or (sub == "push" and any(v in ("-f", "--force") or v.startswith("--force") for v in rest)))
    return False


def bash_flags(command: str) -> ToolFlags:
    """The flags of one Bash call, computed from its command (see the module docstring)."""
    parsed = parse_command(command)
    if is_read_only(parsed):
        return READ_ONLY_BASH_FLAGS
    if any(_is_destructive(c) for c in parsed.commands):
        return DESTRUCTIVE_BASH_FLAGS
    return BASH_FLAGS
