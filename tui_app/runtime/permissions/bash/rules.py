"""A Bash call against the rules: every simple command is a subject, and so is every file the
line reads or writes that can be told.

* Any command that hits a deny rule denies the whole line (`ls && curl x` with `Bash(curl *)`).
  Deny and ask rules are also tried without the variable assignments and with the program's
  base name (`FOO=1 /usr/bin/curl x` is still `curl x`).
* What the known commands read (after globs, `~`, `$PWD` and `cd` are resolved, see
  `bash_readonly`) is checked against Read deny rules, so `cat se*/key` is as denied as
  `Read(./secret/key)`; a read outside the working directories asks unless a Read allow rule
  names it or a Bash allow rule names the command that reads. Without a sandbox, a recursive
  search through a directory a Read deny rule reaches into (`grep -r x .`) asks; inside the
  sandbox those paths are masked.
* Output redirection targets and the operands of `mkdir touch mv cp rm rmdir ln chmod chown
  chgrp truncate tee install` are file edits: Edit/Read deny rules, protected paths (always
  ask), the working directories (outside asks, whatever Bash rule allowed the command), Edit
  allow rules and acceptEdits. A writer whose files are only known at run time (`touch $F`,
  `xargs rm`, `cp -t DIR …`, after `cd $D`) asks, as a redirection to `$F` does.
* The whole line is allowed only when every command is: by an allow rule (its exact text,
  wrappers stripped), by being a known read-only command, or — in acceptEdits mode — by being
  `mkdir touch mv cp` inside the working directories. Syntax in which bash can run a command no
  simple command shows (`[[ ]]`, arithmetic, `${x:…}`) needs an allow rule for the whole line.
* A line that cannot be parsed, or is over 10,000 characters, is never allowed by a rule or a
  mode: it always asks (or is denied when a deny rule matches its whole text).
"""

from __future__ import annotations

import os
import re

from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.permissions.bash.launchers import launched
from tui_app.runtime.permissions.bash.outputs import output_writes
from tui_app.runtime.permissions.bash.parse import (
    ParsedCommand,
    SimpleCommand,
    Word,
    parse_command,
    program_name,
)
from tui_app.runtime.permissions.bash.programs import PROGRAMS
from tui_app.runtime.permissions.bash.readonly import Reading, classify
from tui_app.runtime.permissions.bash.trees import has_other_names, look_under
from tui_app.runtime.permissions.bash.words import Where, expand_paths, word_text
from tui_app.runtime.permissions.rule_checks import READERS, Assessment, RuleView
from tui_app.runtime.permissions.rules import EDIT_FAMILY, bash_matches, escape_bash
from tui_app.runtime.permissions.working_dirs import inside

FS_COMMANDS = frozenset({"mkdir", "touch", "mv", "cp"})
#: what the sandbox gives each command of its own
SANDBOX_PRIVATE = ("/tmp",)
#: commands whose operands are files they create, change or remove
WRITERS = FS_COMMANDS | frozenset({"rm", "rmdir", "ln", "chmod", "chown", "chgrp", "truncate", "tee", "install"})
#: writers that take the directory they write into as an option (`-t DIR`)
_TARGET_DIR_WRITERS = frozenset({"cp", "mv", "ln", "install"})
#: writers that can move, replace, remove or re-own a directory with all it holds: done to a
#: folder above a protected path, they are writes to that path (mkdir, touch, tee and truncate
#: cannot take a folder's contents with them)
_TREE_WRITERS = frozenset({"mv", "cp", "ln", "install", "rm", "rmdir", "chmod", "chown", "chgrp"})
#: a cluster of short options holding `-T` (`-T`, `-rT`, `-fTv`)
_SHORT_T = re.compile(r"-[^-]*T.*")
#: chmod's own options; any other word after a `-` is a mode (`chmod -w file`)
_CHMOD_OPTION = re.compile(r"-[cfvR]+|--(changes|silent|quiet|verbose|recursive|(no-)?preserve-root)")


def assess_bash(view: RuleView, spec: ToolSpec, command: str, *, sandboxed: bool) -> Assessment:
    names = frozenset({"Bash", spec.name, *spec.aliases})
    parsed = parse_command(command)
    if not parsed.ok:
        a = Assessment(read_only=False)
        whole = [command.strip()]
        a.hits("the command", view.bash_hit("deny", names, whole), view.bash_hit("ask", names, whole))
        a.guards.append(f"Vigil cannot check this command against the rules: {parsed.error}")
        return a
    where = Where((view.cwd,), view.home)
    reading = classify(parsed, where)
    a = Assessment(read_only=reading.read_only, runs_config=reading.runs_config)
    started = [inner for cmd in parsed.commands for inner in _command_rules(view, a, names, cmd)]
    whole = view.whole("allow", spec) is not None
    by_rule = [whole or view.bash_hit("allow", names, [cmd.full_text]) is not None for cmd in parsed.commands]
    _reads(view, a, reading, sandboxed, by_rule)
    _trees(view, a, parsed, reading, Where(reading.dirs, view.home) if reading.dirs is not None else None, sandboxed)
    after = Where(reading.dirs, view.home) if reading.dirs is not None else None
    for cmd in parsed.commands:
        _writes(view, a, cmd, after, sandboxed)
    _redirects(view, a, parsed, after, sandboxed)
    _network(view, a, parsed, after)
    _started_writes(view, a, started, after, sandboxed)
    _allowed(view, a, names, parsed, reading, after, command)
    return a


#: how deep launchers may nest (`env sudo su -c 'exec curl'`) before the program counts as unknown
MAX_LAUNCH_DEPTH = 6


def _spellings(cmd: SimpleCommand, depth: int = 0, moved: bool = False,
               inner: list[tuple[ParsedCommand, bool]] | None = None) -> tuple[list[str], list[str]]:
    """The spellings deny and ask rules are tried on, and the programs only known at run time.

    As written, without assignments, with the program's base name unquoted (`/usr/bin/curl`,
    `'curl'` and `c\\url` run curl), and whatever the command starts (`exec curl`, `env -i
    curl`, `sudo curl`, `find -exec curl`, `xargs -0 curl`, `su -c 'curl'`: see
    `bash_launchers`). What it starts is added to `inner`, with whether it starts elsewhere
    (`env -C DIR`), for the write checks."""
    texts = [cmd.full_text, cmd.text]
    unknown: list[str] = []
    name = word_text(cmd.words[0]) if cmd.words else None
    if cmd.words and name is None:
        unknown.append(cmd.words[0].source)
    if name:
        texts.append(" ".join([os.path.basename(name), *(w.source for w in cmd.args)]))
    started = launched(cmd)
    if started is None or depth > MAX_LAUNCH_DEPTH:
        return texts, [*unknown, cmd.text]
    for source in [" ".join(w.source for w in words) for words in started.commands] + started.strings:
        parsed = parse_command(source)
        if not parsed.ok:
            unknown.append(source)
            continue
        if inner is not None:
            inner.append((parsed, moved or started.moved))
        for command in parsed.commands:
            more, lost = _spellings(command, depth + 1, moved or started.moved, inner)
            texts += more
            unknown += lost
    return texts, unknown


def _command_rules(view: RuleView, a: Assessment, names: frozenset[str], cmd: SimpleCommand
                   ) -> list[tuple[ParsedCommand, bool]]:
    """Deny and ask rules against every spelling of the command; returns what it starts."""
    inner: list[tuple[ParsedCommand, bool]] = []
    texts, unknown = _spellings(cmd, inner=inner)
    a.hits(f"`{cmd.full_text}`", view.bash_hit("deny", names, texts), view.bash_hit("ask", names, texts))
    if unknown and (view.of("deny", names) or view.of("ask", names)):
        a.guards.append(f"the program `{unknown[0]}` is only known at run time: it may be one a deny or ask rule "
                        f"names")
    return inner


def _started_writes(view: RuleView, a: Assessment, started: list[tuple[ParsedCommand, bool]], where: Where | None,
                    sandboxed: bool) -> None:
    """What a launched command writes (`env sort -o F`, `sudo touch F`, `su -c 'echo > F'`): checked
    like the line's own writes; relative paths are unknown when it starts elsewhere."""
    for parsed, moved in started:
        here = None if moved else where
        for cmd in parsed.commands:
            _writes(view, a, cmd, here, sandboxed)
        _redirects(view, a, parsed, here, sandboxed)
        _network(view, a, parsed, here)


# ---- reads ---------------------------------------------------------------------------------------

def _private(view: RuleView, paths: tuple[str, ...], sandboxed: bool) -> bool:
    """Inside the sandbox /tmp is its own, empty and thrown away: nothing there is the host's —
    except the tree a working directory under /tmp sits in, which the sandbox shows read-only."""
    if not sandboxed:
        return False
    shown = tuple("/tmp/" + root[5:].split("/", 1)[0] for root in view.dirs.roots if inside(root, SANDBOX_PRIVATE))
    return all(inside(p, SANDBOX_PRIVATE) and not inside(p, shown) for p in paths)


def _reads(view: RuleView, a: Assessment, reading: Reading, sandboxed: bool, by_rule: list[bool]) -> None:
    """Deny rules always; the working directories unless an allow rule names the very command
    that reads (as Claude Code: `Bash(cat *)` lets `cat /etc/hostname` run; a write outside asks
    whatever rule allowed the command)."""
    for read in reading.reads:
        allowed = all(by_rule) if read.command < 0 else by_rule[read.command]
        for path in read.paths or ():
            paths = view.spell(path)
            view.check_read(a, path, READERS, deny_only=True)
            if not allowed and not _private(view, paths, sandboxed):
                view.check_outside_read(a, paths)
            if read.recursive and not sandboxed:
                rule = view.deny_under(paths)
                if rule is not None:
                    a.guards.append(f"`{read.source}` is searched recursively and the rule {rule.text} "
                                    f"({rule.source}) covers files below it; without the sandbox they would be read")


# ---- directories read, copied and moved --------------------------------------------------------

#: programs a rule may allow that copy or archive every file below their operands
COPIERS = frozenset({"tar", "zip", "7z", "cpio", "rsync", "scp", "pax"})
#: of these, the ones whose last operand is the destination, not a source
_LAST_IS_DESTINATION = frozenset({"cp", "mv", "ln", "rsync", "scp"})


def _trees(view: RuleView, a: Assessment, parsed: ParsedCommand, reading: Reading, where: Where | None,
           sandboxed: bool) -> None:
    """A directory operand is every file below it: `cat dir`, `tar c dir`, `cp -r dir x` read them,
    `mv dir x`, `ln`, `cp -l` give them a name no Read deny rule covers. Only with Read deny rules
    (there is nothing to find otherwise)."""
    if not view.of("deny", READERS):
        return
    for read in reading.reads:
        cmd = parsed.commands[read.command] if read.command >= 0 else None
        program = PROGRAMS.get(program_name(cmd.name)) if cmd is not None else None
        if (program is not None and program.operands == "names") or (cmd is not None and cmd.name == "git"):
            continue  # `ls dir` lists names (a recursive listing is checked with the reads); git reads what it tracks
        for path in read.paths or ():
            _carried(view, a, read.source, path, move=False, sandboxed=sandboxed)
    for cmd in parsed.commands:
        for word, move in _tree_operands(cmd):
            paths = expand_paths(word, where) if where is not None else None
            if paths is None:
                a.guards.append(f"`{cmd.full_text}` reads `{word.source}`, a path only known at run time, and Read "
                                f"deny rules exist")
                continue
            for path in paths:
                _carried(view, a, cmd.full_text, path, move=move, sandboxed=sandboxed)


def _tree_operands(cmd: SimpleCommand) -> list[tuple[Word, bool]]:
    """The operands whose files a mover, copier or archiver takes, and whether it moves them (or
    makes a hard link) rather than copying their content."""
    name = program_name(cmd.name)
    if name not in COPIERS and name not in ("cp", "mv", "ln"):
        return []
    words = _operands(cmd)
    if not words:
        return []
    flags = [word_text(w) or "" for w in cmd.args]
    if name == "ln" and any(_given_letter(f, "s") or _spells_long(f, "--symbolic") for f in flags):
        return []  # a symbolic link names the path, and rules follow links
    if name in _LAST_IS_DESTINATION and len(words) > 1:
        words = words[:-1]
    move = name in ("mv", "ln") or (name == "cp" and any(_given_letter(f, "l") or _spells_long(f, "--link")
                                                           for f in flags))
    return [(w, move) for w in words]


def _given_letter(flag: str, letter: str) -> bool:
    return flag.startswith("-") and not flag.startswith("--") and letter in flag


def _carried(view: RuleView, a: Assessment, source: str, path: str, *, move: bool, sandboxed: bool) -> None:
    """The checks of one path a command reads, copies or moves with everything below it."""
    if has_other_names(path):
        a.guards.append(f"{path} has other names (hard links): it may be a file a Read deny rule covers, under a "
                        f"name the rule does not see")
    if not os.path.isdir(path):
        return
    patterns = [view.pattern(r) for r in view.of("deny", READERS)]  # made once for the whole walk
    tree = look_under(path, lambda p: any(pattern.matches(p) for pattern in patterns))
    if tree.denied is not None:
        rule = view.path_hit("deny", READERS, view.spell(tree.denied))
        if move:
            a.deny_with(f"`{source}` gives {tree.denied} a new name, and reading it is denied by the rule "
                        f"{rule.text if rule else 'a Read deny rule'}", rule)
        elif not sandboxed:
            a.guards.append(f"`{source}` reads {path} and everything below it, {tree.denied} too, which the rule "
                            f"{rule.text if rule else 'a Read deny rule'} covers; without the sandbox it would be read")
    if tree.linked is not None:
        a.guards.append(f"{tree.linked} (below {path}) has other names (hard links): it may be a file a Read deny "
                        f"rule covers, under a name the rule does not see")
    if not tree.complete:
        a.guards.append(f"{path} holds too many files to look through for the Read deny rules")


# ---- writes --------------------------------------------------------------------------------------

def _operands(cmd: SimpleCommand) -> list | None:
    """The operand words of a writer, or None when they cannot be told apart from options or the
    command writes into a directory an option names (`cp -t DIR`)."""
    words = []
    only = False
    for word in cmd.args:
        text = word_text(word)
        if not only and text == "--":
            only = True
            continue
        if not only and text is not None and _names_target_dir(cmd, text):
            return None
        if not only and text is not None and text.startswith("-") and text != "-":
            continue
        words.append(word)
    return words


def _names_target_dir(cmd: SimpleCommand, text: str) -> bool:
    """`-t DIR`, `-rt DIR`, `--target-directory=DIR` or an abbreviation getopt accepts (`--targ=DIR`):
    the command writes into that directory, not into its last operand."""
    if cmd.name not in _TARGET_DIR_WRITERS or not text.startswith("-"):
        return False
    if text.startswith("--"):
        return _spells_long(text, "--target-directory")
    return "t" in text


def _spells_long(text: str, option: str) -> bool:
    """`--targ=x` is `--target-directory=x`: getopt takes any unambiguous abbreviation (an ambiguous
    one is an error, so counting it as the option errs on the safe side)."""
    name = text.split("=", 1)[0]
    return len(name) > 2 and option.startswith(name)


def _mode_first(cmd: SimpleCommand) -> bool:
    """Whether the first operand of chmod, chown or chgrp is the mode or the owner: not with
    `--reference=FILE`, nor when chmod's mode is spelt like an option (`chmod -w a b`)."""
    for word in cmd.args:
        text = word_text(word)
        if text == "--":
            break
        # a lone `-` counts as an option here: no chmod takes it as a mode or a file, and erring
        # towards "every operand is a file" costs nothing
        if text is None or not text.startswith("-"):
            continue
        if _spells_long(text, "--reference") or (cmd.name == "chmod" and not _CHMOD_OPTION.fullmatch(text)):
            return False
    return True


def _write_targets(cmd: SimpleCommand, where: Where | None) -> tuple[list[str], list[str]] | None:
    """(written, read) absolute paths of a writer, or None when they cannot be told."""
    words = _operands(cmd)
    if not words or where is None:  # no operand: `xargs touch` writes the files its input names
        return None
    if cmd.name in ("chmod", "chown", "chgrp") and _mode_first(cmd):
        words = words[1:]  # the mode or the owner
    resolved = [expand_paths(w, where) for w in words]
    if any(r is None for r in resolved):
        return None
    groups = [r for r in resolved if r is not None]
    if cmd.name in _TARGET_DIR_WRITERS and len(groups) > 1:
        groups[-1] = _into_directory(cmd, groups[:-1], groups[-1])
    if cmd.name == "cp":
        return [p for g in groups[-1:] for p in g], [p for g in groups[:-1] for p in g]
    return [p for g in groups for p in g], []


def _into_directory(cmd: SimpleCommand, sources: list[list[str]], target: list[str]) -> list[str]:
    """What a last operand that is an existing directory receives: `mv a dir` writes `dir/a`, not
    `dir` (so `cp notes.txt .` is no write to the project's root and the `.git` in it). With
    `-T` (`--no-target-directory`) the directory itself is replaced."""
    if len(target) != 1 or not os.path.isdir(target[0]) or _no_target_dir(cmd):
        return target
    return [os.path.join(target[0], os.path.basename(p)) for g in sources for p in g]


def _no_target_dir(cmd: SimpleCommand) -> bool:
    """`-T`, in a cluster (`-rT`) or long (`--no-target-directory`, `--no-t`), before any `--`.
    (A word only known at run time never gets here: its operands cannot be told.)"""
    texts = [word_text(word) or "" for word in cmd.args]
    options = texts[:texts.index("--")] if "--" in texts else texts
    return any(_spells_long(t, "--no-target-directory") or _SHORT_T.fullmatch(t) for t in options)


def _writes(view: RuleView, a: Assessment, cmd: SimpleCommand, where: Where | None, sandboxed: bool) -> None:
    _option_writes(view, a, cmd, where, sandboxed)
    if program_name(cmd.name) not in WRITERS:
        return
    targets = _write_targets(cmd, where)
    if targets is None:
        _unknown_write(view, a, f"the files `{cmd.full_text}` writes are only known at run time")
        return
    written, read = targets
    for path in written:
        _check_written(view, a, path, sandboxed)
        paths = view.spell(path)
        held = view.holds_protected(paths) if program_name(cmd.name) in _TREE_WRITERS else None
        if held is not None and view.mode != "bypassPermissions":
            a.guards.append(f"`{cmd.full_text}` would move or change {paths[-1]} and the protected {held} in it: "
                            f"always confirmed")
    for path in read:
        view.check_read(a, path, READERS, deny_only=True)
        if not _private(view, view.spell(path), sandboxed):
            view.check_outside_read(a, view.spell(path))


def _option_writes(view: RuleView, a: Assessment, cmd: SimpleCommand, where: Where | None, sandboxed: bool) -> None:
    """What any command writes by option or operand (`git log --output=F`, `sort -o F`, `uniq IN
    OUT`): the same checks as a writer's files, whatever rule allowed the command."""
    outputs = output_writes(cmd)
    if outputs.unknown is not None:
        _unknown_write(view, a, outputs.unknown)
    if not outputs.words:
        return
    resolved = [expand_paths(w, where) for w in outputs.words] if where is not None else [None]
    if any(r is None for r in resolved):
        _unknown_write(view, a, f"the files `{cmd.full_text}` writes are only known at run time")
        return
    for paths in resolved:
        for path in paths or ():
            _check_written(view, a, path, sandboxed)


def _check_written(view: RuleView, a: Assessment, path: str, sandboxed: bool) -> None:
    paths = view.spell(path)
    view.check_edit_guards(a, paths, EDIT_FAMILY)
    if not _private(view, paths, sandboxed):
        view.check_outside_write(a, paths, EDIT_FAMILY)


def _unknown_write(view: RuleView, a: Assessment, reason: str) -> None:
    """A write whose file is only known at run time asks wherever a known one could: outside
    bypassPermissions always (it may be a protected path, or outside the working directories); in
    bypassPermissions, where writes otherwise run unasked, only when an Edit deny or ask rule
    exists that it could slip past."""
    if view.mode == "bypassPermissions" and not (view.of("deny", EDIT_FAMILY) or view.of("ask", EDIT_FAMILY)):
        return
    a.guards.append(reason)


def _redirects(view: RuleView, a: Assessment, parsed: ParsedCommand, where: Where | None,
               sandboxed: bool) -> None:
    for redirect in parsed.redirects:
        if not redirect.writes:
            continue  # reads were checked with the rest of the line's reads
        targets = expand_paths(redirect.target, where) if where is not None else None
        if targets is None:
            _unknown_write(view, a, f"the redirection {redirect.op} {redirect.target.source} goes to a file "
                                    f"only known at run time")
            continue
        for target in targets:
            view.check_edit(a, target, EDIT_FAMILY, mode_may_allow=where is not None and len(where.dirs) == 1)
            if not _private(view, view.spell(target), sandboxed):
                view.check_outside_write(a, view.spell(target), EDIT_FAMILY)


# ---- network by redirection ----------------------------------------------------------------------

#: bash opens a socket, not a file, for a redirection to one of these (`echo x > /dev/tcp/HOST/PORT`)
NETWORK_DEVICES = ("/dev/tcp/", "/dev/udp/")


def _network(view: RuleView, a: Assessment, parsed: ParsedCommand, where: Where | None) -> None:
    """A redirection to `/dev/tcp/HOST/PORT` or `/dev/udp/…` is a network connection, not a file:
    it asks whatever rule allowed the command (a `WebFetch(domain:HOST)` deny rule denies it), as
    does an input redirection from a file only known at run time, which may be one. Only
    bypassPermissions, where any command may reach the network, runs them unasked."""
    for redirect in parsed.redirects:
        if redirect.op in (">&", "<&") and (redirect.target.value or "").rstrip("-").isdigit():
            continue  # a copy of a descriptor opens nothing
        literal = word_text(redirect.target)
        targets = expand_paths(redirect.target, where) if where is not None else None
        if targets is None and literal is not None:
            targets = [os.path.normpath(literal)]  # bash looks at the word itself, wherever it is
        if targets is None:
            if not redirect.writes and view.mode != "bypassPermissions":
                a.guards.append(f"the redirection {redirect.op} {redirect.target.source} reads from a place only "
                                f"known at run time (it may be a network connection)")
            continue
        for target in targets:
            if not target.startswith(NETWORK_DEVICES):
                continue
            host = target.split("/")[3] if target.count("/") >= 4 else ""
            rule = view.domain_hit("deny", frozenset({"WebFetch"}), host)
            if rule is not None:
                a.deny_with(f"connecting to {host} is denied by the rule {rule.text} ({rule.source})", rule)
            elif view.mode != "bypassPermissions":
                a.guards.append(f"the redirection {redirect.op} {redirect.target.source} opens a network connection "
                                f"to {host or 'a host only known at run time'}")


# ---- what allows the line ------------------------------------------------------------------------

def _exactly_allowed(view: RuleView, names: frozenset[str], line: str) -> bool:
    """Only a rule without wildcards (the line itself, as "always allow" saves it) allows a line
    whose syntax hides what it runs: `Bash(echo *)` would match the whole of
    `echo hi && [[ -v 'a[$(rm x)]' ]]`."""
    return any(not _has_wildcard(r.specifier or "") and bash_matches(r.specifier or "", line)
               for r in view.of("allow", names))


def _has_wildcard(specifier: str) -> bool:
    return re.search(r"(?<!\\)\*", specifier) is not None


def _allowed(view: RuleView, a: Assessment, names: frozenset[str], parsed: ParsedCommand, reading: Reading,
             where: Where | None, command: str) -> None:
    if reading.hidden and not _exactly_allowed(view, names, command.strip()):
        a.unallowed.append(f"Bash({escape_bash(command.strip())})")
    for cmd, known in zip(parsed.commands, reading.known, strict=True):
        rule = view.bash_hit("allow", names, [cmd.full_text])
        if rule is not None:
            a.allow_rules.append(rule)
            continue
        if known:
            continue
        if cmd.name in FS_COMMANDS and not cmd.assignments and where is not None and len(where.dirs) == 1:
            targets = _write_targets(cmd, where)
            if targets is not None and all(view.accepts_edit(view.spell(p)) for p in targets[0] + targets[1]):
                a.by_mode = True
                continue
        a.unallowed.append(f"Bash({escape_bash(cmd.full_text)})")
