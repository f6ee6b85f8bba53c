"""Which shell command lines only read, what they read, and the Bash tool's flags for one command.

    from tui_app.runtime.permissions.bash.readonly import bash_flags, classify

    BASH = ToolSpec(name="Bash", ..., flags_for=lambda data: bash_flags(data["command"]))

The classifier is a convenience, not the boundary: whatever it lets run without asking runs in the
sandbox where there is one. It is still built not to be talked into running anything:

* Only a few kinds of syntax: simple commands joined by `;` `&&` `||` `|`, subshells, `!`, quotes,
  `$'…'`, input redirections and output to /dev/null. No command, process or arithmetic
  substitution anywhere (bash runs a `$( )` even inside a quoted array subscript: `test -v
  'a[$(rm x)]'`), no `[[ ]]`, no `${x:-…}`, no loops, functions, heredocs or assignments but a
  few harmless locale ones.
* Every simple command is on the known list (`bash_programs`) with only its known-safe options;
  `xargs` and `nohup` are never stripped away for it.
* Every word is known: plain parameters other than `$PWD` and `$HOME` are not (`$_` is the last
  word of the previous command, so `: -v; printf "$_" …` would smuggle `-v` in); a glob may not
  expand into a name that starts with `-`.
* git runs with its configuration-driven programs switched off, and asks in a repository other
  than the project's own or whose configuration names a program nothing switches off (see
  `git_guard`).
* What it reads is worked out (globs, `~`, `$PWD` and every `cd` resolved, see `bash_words`), so
  that deny rules and the working-directory check see the real paths; a path that cannot be
  known makes the line not read-only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tui_app.runtime.contract import ToolFlags
from tui_app.runtime.permissions.bash.git_guard import git_problem, repository_problem
from tui_app.runtime.permissions.bash.parse import ParsedCommand, SimpleCommand, Word, parse_command
from tui_app.runtime.permissions.bash.programs import Use, program_use
from tui_app.runtime.permissions.bash.words import Where, expand_paths, glob_names, word_text

READ_ONLY_BASH_FLAGS = ToolFlags(read_only=True, concurrency_safe=True, side_effect_scope="none",
                                 needs_approval=False, risk="low")
BASH_FLAGS = ToolFlags(read_only=False, concurrency_safe=False, side_effect_scope="system",
                       needs_approval=True, risk="medium")
DESTRUCTIVE_BASH_FLAGS = BASH_FLAGS.model_copy(update={"destructive": True, "risk": "high"})

SAFE_ASSIGNMENTS = frozenset({"LANG", "LANGUAGE", "TZ", "NO_COLOR", "COLUMNS", "TERM"})
#: the syntax a read-only line may use (tree-sitter-bash node types)
ALLOWED_NODES = frozenset({
    "program", "comment", "list", "pipeline", "command", "command_name", "word", "string", "string_content",
    "raw_string", "concatenation", "number", "simple_expansion", "expansion", "variable_name", "ansi_c_string",
    "file_redirect", "file_descriptor", "redirected_statement", "subshell", "negated_command",
    "herestring_redirect", "variable_assignment",
})
#: wrappers the rule matcher strips, but after which the program reads what it is fed
UNSAFE_WRAPPERS = frozenset({"xargs", "nohup"})
#: where flags are computed without a working directory: no file matches any glob there
NOWHERE = Where(("/nonexistent-vigil-cwd",), "/nonexistent-vigil-home")


@dataclass(frozen=True)
class ReadPath:
    """Something a read-only line reads: the paths it may be (None: only known at run time)."""

    source: str
    paths: tuple[str, ...] | None
    #: a directory read with everything below it (grep -r, rg …)
    recursive: bool
    #: which simple command of the line reads it (-1: a redirection of the line)
    command: int


@dataclass
class Reading:
    read_only: bool
    #: why not, in words (the first reason found)
    reason: str = ""
    #: what the known commands of the line read (also when the line as a whole is not read-only)
    reads: list[ReadPath] = field(default_factory=list)
    #: the directories the line may end up in (after its `cd`s); None once one is unknown
    dirs: tuple[str, ...] | None = None
    #: for each simple command of the line: is it a known read-only command on its own? (An input
    #: redirection from a path only known at run time makes every command of the line unknown:
    #: redirections are the line's, not tied to the command they feed.)
    known: list[bool] = field(default_factory=list)
    #: syntax in which bash may run commands no simple command shows (`[[ ]]`, `$(( ))`, `${x:…}`)
    hidden: list[str] = field(default_factory=list)
    #: why a git command of the line could run a program its repository's configuration names
    #: (see `git_guard`): such a line is never auto-allowed, by the sandbox neither
    runs_config: list[str] = field(default_factory=list)

    def refuse(self, reason: str) -> None:
        if self.read_only:
            self.read_only, self.reason = False, reason


#: syntax that evaluates array subscripts or arithmetic, and so can run a `$( )` hidden in a quoted word
HIDDEN_EXECUTION = frozenset({"test_command", "arithmetic_expansion", "expansion_with_operator", "subscript",
                              "arithmetic_command", "c_style_for_statement"})


def classify(parsed: ParsedCommand, where: Where | None = None) -> Reading:
    """Is the line read-only, and what do its known commands read? See the module docstring."""
    if parsed.error is not None:
        return Reading(False, parsed.error)
    where = where or NOWHERE
    reading = Reading(True)
    reading.hidden = sorted(parsed.node_types & HIDDEN_EXECUTION)
    odd = sorted(parsed.node_types - ALLOWED_NODES)
    if odd:
        reading.refuse(f"it uses shell syntax that is never auto-allowed ({', '.join(odd)})")
    for redirect in parsed.redirects:
        if redirect.writes:
            reading.refuse(f"it writes to {redirect.target.source}")
    lost = False  # a `cd` to a place only known at run time
    dirs = where.dirs  # where the line may be by now (after its known `cd`s)
    for index, cmd in enumerate(parsed.commands):
        here = Where(dirs, where.home)
        why = _command_problem(cmd, here)
        use = why or program_use(cmd)
        problem = _git_guard(cmd, use, here, where.dirs, lost)
        if problem is not None:
            reading.runs_config.append(problem)
            use = use if isinstance(use, str) else problem
        if isinstance(use, str):
            reading.refuse(use)
            reading.known.append(False)
            lost = lost or cmd.name in MOVERS
            continue
        known = True
        for word, recursive in use.reads:
            found = _read(word, here, lost, recursive, index)
            if found.paths is None:
                reading.refuse(f"it reads `{word.source}`, a path only known at run time")
                known = False
            else:
                reading.reads.append(found)
        if use.implicit_dot:
            if lost:
                reading.refuse("it reads a directory only known at run time (after `cd`)")
                known = False
            else:
                reading.reads.append(ReadPath(".", here.dirs, use.recursive, index))
        reading.known.append(known)
        if use.moves:
            target = _cd_target(use.cd, here)
            if target is None:
                lost = True
            else:
                dirs = tuple(dict.fromkeys((*here.dirs, *target)))
    for redirect in parsed.redirects:
        if redirect.reads:
            found = _read(redirect.target, Where(dirs, where.home), lost, False)
            if found.paths is None:
                reading.refuse(f"it reads `{redirect.target.source}`, a path only known at run time")
                # no command of the line may then run on its own (`cat < $CREDENTIALS`, `cd - && wc < .env`)
                reading.known = [False] * len(reading.known)
            else:
                reading.reads.append(found)
    reading.dirs = None if lost else dirs
    return reading


MOVERS = frozenset({"cd", "pushd", "popd"})


def _command_problem(cmd: SimpleCommand, where: Where) -> str | None:
    for assignment in cmd.assignments:
        name, _, value = assignment.partition("=")
        if (name not in SAFE_ASSIGNMENTS and not name.startswith("LC_")) or any(c in value for c in "$`~"):
            return f"it sets {name}"
    unsafe = UNSAFE_WRAPPERS.intersection(cmd.wrappers)
    if unsafe:
        return f"`{sorted(unsafe)[0]}` runs a command with arguments only known at run time"
    if not cmd.words:
        return "it only sets variables"
    for word in cmd.words:
        names = glob_names(word, where)
        if names is None:
            return f"`{word.source}` is only known at run time"
        if any(n.startswith("-") for n in names) and _glob_first(word):
            return f"`{word.source}` matches a file whose name starts with `-` (it would be read as an option)"
    if word_text(cmd.words[0]) is None:
        return f"the program `{cmd.words[0].source}` is only known at run time"
    return None


#: git's options and variables that point it at another repository or work tree
GIT_ELSEWHERE = ("-C", "--git-dir", "--work-tree")
GIT_ELSEWHERE_VARIABLES = frozenset({"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
                                     "GIT_OBJECT_DIRECTORY", "GIT_CEILING_DIRECTORIES", "GIT_NAMESPACE"})


def _git_guard(cmd: SimpleCommand, use: Use | str, here: Where, own: tuple[str, ...], lost: bool) -> str | None:
    """Why a git command, in any spelling, could run what a repository's configuration names
    (see `git_guard`), or None. A read-only one runs with the guard's environment, and asks when
    the configuration names a program that environment does not switch off; any other (it asks
    anyway, but the sandbox's auto-allow would run it) when its repository is not the project's
    own: the project's configuration is the project's business there, as its code is."""
    texts = [word_text(w) for w in cmd.words]
    start = next((i for i, t in enumerate(texts) if t is not None and os.path.basename(t) == "git"), None)
    if start is None:
        return None
    if lost:
        return "git runs in a directory only known at run time (after `cd`)"
    if not isinstance(use, str) and cmd.name == "git":
        return git_problem(here.dirs, own, here.home)
    return _elsewhere_git(cmd, texts, start, here, own)


def _elsewhere_git(cmd: SimpleCommand, texts: list[str | None], start: int, here: Where,
                   own: tuple[str, ...]) -> str | None:
    """Why the repository a git command at `start` (`env git`, `GIT_DIR=x git`, `git -C x`,
    `/usr/bin/git`) would use is not the project's own, or None."""
    named = [a.partition("=")[0] for a in cmd.assignments]
    named += [t.partition("=")[0] for t in texts[:start] if t is not None and "=" in t]
    pointing = sorted(n for n in named if n in GIT_ELSEWHERE_VARIABLES or n.startswith("GIT_CONFIG"))
    if pointing:
        return f"${pointing[0]} points git at another repository or configuration, which Vigil cannot check"
    dirs = here.dirs
    args = cmd.words[start + 1:]
    i = 0
    while i < len(args):
        text = texts[start + 1 + i]
        if text is None or not text.startswith("-"):
            break
        option, eq, _ = text.partition("=")
        if option in GIT_ELSEWHERE:
            if option != "-C":
                return f"git is pointed at a repository by {option}: Vigil cannot check what its configuration runs"
            if i + 1 >= len(args):
                return None
            found = expand_paths(args[i + 1], Where(dirs, here.home))
            if found is None:
                return "git -C names a directory only known at run time"
            dirs = tuple(found)
            i += 2
            continue
        i += 2 if option in GIT_VALUE_OPTIONS and not eq else 1
    return repository_problem(dirs, own)


def _glob_first(word: Word) -> bool:
    """The word starts with a wildcard: what it expands to may start with anything, `-` too.
    (Asked only of a word that may expand to names, so one made of pieces.)"""
    kind, text = word.pieces[0]
    return kind == "raw" and text[:1] in ("*", "?", "[")


def _read(word: Word, where: Where, lost: bool, recursive: bool, command: int = -1) -> ReadPath:
    text = word_text(word)
    if lost and not (text is not None and text.startswith("/")):
        return ReadPath(word.source, None, recursive, command)
    if text == "-":
        return ReadPath(word.source, (), recursive, command)  # stdin
    paths = expand_paths(word, where)
    return ReadPath(word.source, tuple(paths) if paths is not None else None, recursive, command)


def _cd_target(word: Word | None, where: Where) -> list[str] | None:
    if word is None:
        return [where.home]
    if word_text(word) == "-":
        return None
    return expand_paths(word, where)


def is_read_only(parsed: ParsedCommand) -> bool:
    """Read-only by its shape alone (no paths resolved): the flags' answer."""
    return classify(parsed).read_only


#: git's own options that take the next word as their value (`git -C dir push -f`; `--exec-path`
#: takes one only after `=`)
GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                               "--super-prefix"})


def _is_destructive(command: SimpleCommand) -> bool:
    """Whether the command is one that destroys what cannot be got back (high risk in the approval)."""
    values = [w.value or "" for w in command.words]
    if not values:
        return False
    name, rest = values[0], values[1:]
    if name == "rm":
        return _given(rest, "rRf", ("--recursive", "--force"))
    if name in ("dd", "mkfs", "shred", "wipefs") or name.startswith("mkfs."):
        return True
    if name == "git":
        sub, args = _git_subcommand(rest)
        if sub == "reset":
            return _given(args, "", ("--hard",))
        if sub == "clean":
            return _given(args, "f", ("--force",))
        if sub == "push":  # a forced push, a deleted or mirrored remote branch (`--force` is a prefix)
            return (_given(args, "fd", ("--force-with-lease", "--force-if-includes", "--delete", "--mirror"))
                    or any(a.startswith(("+", ":")) for a in args))
    return False


def _git_subcommand(args: list[str]) -> tuple[str, list[str]]:
    """git's subcommand and its arguments, past git's own options."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in GIT_VALUE_OPTIONS else 1
    return (args[i], args[i + 1:]) if i < len(args) else ("", [])


def _given(args: list[str], short: str, long: tuple[str, ...]) -> bool:
    """Whether one of the options is given: a short one alone or in a cluster (`-rf`, `-xdf`), a long
    one whole, with a value or abbreviated as getopt allows (`--force-with-lease=main`, `--recur`)."""
    for arg in args:
        if arg == "--":
            return False
        if arg.startswith("--"):
            head = arg.partition("=")[0]
            if any(option.startswith(head) for option in long):
                return True
        elif arg.startswith("-") and any(c in arg for c in short):
            return True
    return False


def bash_flags(command: str) -> ToolFlags:
    """The flags of one Bash call, computed from its command (see the module docstring)."""
    parsed = parse_command(command)
    if is_read_only(parsed):
        return READ_ONLY_BASH_FLAGS
    if any(_is_destructive(c) for c in parsed.commands):
        return DESTRUCTIVE_BASH_FLAGS
    return BASH_FLAGS
