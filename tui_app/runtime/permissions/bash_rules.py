"""A Bash call against the rules: every simple command is a subject, and so is every file the
line redirects into.

* Any command that hits a deny rule denies the whole line (`ls && curl x` with `Bash(curl *)`).
  Deny and ask rules are also tried without the variable assignments and with the program's
  base name (`FOO=1 /usr/bin/curl x` is still `curl x`).
* The whole line is allowed only when every command is: by an allow rule (its exact text, wrappers
  stripped), by being read-only, or — in acceptEdits mode — by being `mkdir touch mv cp` on paths
  inside the working directories.
* Output redirection targets are file edits (Edit/Read deny rules, protected paths, Edit allow
  rules, acceptEdits); literal path arguments of read-only commands are checked against Read deny
  rules, so `cat .env` is as denied as `Read(.env)`.
* A line that cannot be parsed, or is over 10,000 characters, is never allowed by a rule or a
  mode: it always asks (or is denied when a deny rule matches its whole text).
"""

from __future__ import annotations

import os

from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.permissions.bash_parse import ParsedCommand, SimpleCommand, after_xargs_options, parse_command
from tui_app.runtime.permissions.bash_readonly import command_is_read_only, is_read_only
from tui_app.runtime.permissions.rule_checks import Assessment, RuleView
from tui_app.runtime.permissions.rules import EDIT_FAMILY, escape_bash

FS_COMMANDS = frozenset({"mkdir", "touch", "mv", "cp"})
#: read-only commands whose positional arguments are files they read
PATH_READERS = frozenset({"cat", "head", "tail", "wc", "stat", "du", "diff", "ls", "cmp", "comm", "nl", "cut",
                          "md5sum", "sha1sum", "sha256sum", "readlink", "realpath", "sort"})
#: … whose first positional argument is a pattern, the rest files
PATTERN_READERS = frozenset({"grep", "egrep", "fgrep", "rg"})
_DIR_CHANGERS = frozenset({"cd", "pushd", "popd"})
_TARGET_OPTIONS = ("-t", "--target-directory")


def assess_bash(view: RuleView, spec: ToolSpec, command: str) -> Assessment:
    names = frozenset({"Bash", spec.name, *spec.aliases})
    parsed = parse_command(command)
    a = Assessment(read_only=is_read_only(parsed))
    if not parsed.ok:
        whole = [command.strip()]
        a.hits("the command", view.bash_hit("deny", names, whole), view.bash_hit("ask", names, whole))
        a.guards.append(f"Vigil cannot check this command against the rules: {parsed.error}")
        return a
    # after a `cd`, relative paths name other files than the ones checked here
    moved = any(c.name in _DIR_CHANGERS for c in parsed.commands)
    for cmd in parsed.commands:
        _command_rules(view, a, names, cmd)
        _command_paths(view, a, cmd)
    _redirects(view, a, parsed, moved)
    for cmd in parsed.commands:
        _command_allowed(view, a, names, cmd, moved)
    return a


def _variants(cmd: SimpleCommand) -> list[str]:
    """The spellings deny and ask rules are tried on: as written, without assignments, with the
    program's base name, and what `xargs -0 …` runs."""
    texts = [cmd.full_text, cmd.text]
    name = cmd.name
    if name and "/" in name and cmd.words:
        texts.append(" ".join([os.path.basename(name), *(w.source for w in cmd.args)]))
    inner = after_xargs_options(cmd)
    if inner is not None:
        texts.extend(_variants(inner))
    return texts


def _command_rules(view: RuleView, a: Assessment, names: frozenset[str], cmd: SimpleCommand) -> None:
    texts = _variants(cmd)
    a.hits(f"`{cmd.full_text}`", view.bash_hit("deny", names, texts), view.bash_hit("ask", names, texts))


def _positional(cmd: SimpleCommand) -> list[str | None]:
    return [w.value for w in cmd.args if not (w.value or "").startswith("-")]


def _read_paths(cmd: SimpleCommand) -> list[str]:
    if not command_is_read_only(cmd):
        return []
    if cmd.name in PATH_READERS:
        values = _positional(cmd)
    elif cmd.name in PATTERN_READERS:
        values = _positional(cmd)[1:]
    elif cmd.name == "find":
        values = []
        for word in cmd.args:
            if word.value is None or word.value.startswith(("-", "(", "!")):
                break
            values.append(word.value)
    else:
        return []
    return [v for v in values if v]


def _fs_targets(cmd: SimpleCommand) -> tuple[list[str], list[str]] | None:
    """(written, read) paths of mkdir/touch/mv/cp, or None when they cannot be told."""
    if any(w.value is None or w.value.startswith(_TARGET_OPTIONS) for w in cmd.args):
        return None
    paths = [v for v in _positional(cmd) if v]
    if not paths:
        return None
    if cmd.name == "cp":
        return paths[-1:], paths[:-1]
    return paths, []


def _command_paths(view: RuleView, a: Assessment, cmd: SimpleCommand) -> None:
    for path in _read_paths(cmd):
        view.check_read(a, path, frozenset({"Read"}), deny_only=True)
    if cmd.name in FS_COMMANDS:
        targets = _fs_targets(cmd)
        if targets is not None:
            written, read = targets
            for path in written:
                view.check_edit_guards(a, view.spell(path), EDIT_FAMILY)
            for path in read:
                view.check_read(a, path, frozenset({"Read"}), deny_only=True)


def _redirects(view: RuleView, a: Assessment, parsed: ParsedCommand, moved: bool) -> None:
    for redirect in parsed.redirects:
        target = redirect.target.value
        if not (redirect.writes or redirect.reads):
            continue
        if target is None:
            a.guards.append(f"the redirection {redirect.op} {redirect.target.source} goes to a file only "
                            f"known at run time")
            continue
        if redirect.writes:
            view.check_edit(a, target, EDIT_FAMILY, mode_may_allow=not moved)
        else:
            view.check_read(a, target, frozenset({"Read"}), deny_only=True)


def _command_allowed(view: RuleView, a: Assessment, names: frozenset[str], cmd: SimpleCommand,
                     moved: bool) -> None:
    rule = view.bash_hit("allow", names, [cmd.full_text])
    if rule is not None:
        a.allow_rules.append(rule)
        return
    if command_is_read_only(cmd):
        return
    if cmd.name in FS_COMMANDS and not moved and not cmd.assignments:
        targets = _fs_targets(cmd)
        if targets is not None and all(view.accepts_edit(view.spell(p)) for p in targets[0] + targets[1]):
            a.by_mode = True
            return
    a.unallowed.append(f"Bash({escape_bash(cmd.full_text)})")
