"""The commands a command starts with its own arguments, for deny and ask rules.

`Bash(curl *)` denied must hold however the line gets curl started: `exec curl x`, `env -i A=1
curl x`, `sudo -u me curl x`, `setsid curl x`, `find . -exec curl x ;`, `xargs -0 curl`, `watch
curl x`, `busybox wget x`, `su -c 'curl x'`. The parser already strips the plain wrappers
(`timeout nice nohup time stdbuf command builtin`, bare `xargs`) and reads `bash -c`, `eval` and
`trap` strings; this module names what the other launchers start.

    inner = launched(command)   # [] starts nothing; None: starts something that cannot be told

A program is "only known at run time" when its word expands (`$C x`, `${C} x`, `$(echo curl) x`,
`c*rl x`, `{curl,x}`), or when a wrapper's options cannot be read (`timeout $T curl x`): then no
deny rule can be matched, and the caller asks wherever one exists. See docs/architecture.md §12.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_app.runtime.permissions.bash.parse import XARGS_VALUE_OPTIONS, SimpleCommand, Word, program_name
from tui_app.runtime.permissions.bash.words import word_text


@dataclass(frozen=True)
class Launcher:
    #: short options that take a value (`-u USER`, glued `-uUSER` too)
    short_value: str = ""
    #: long options that take a value (`--user=X` or `--user X`)
    long_value: frozenset[str] = frozenset()
    #: words to skip after the options before the command (`taskset MASK cmd`, `chroot DIR cmd`)
    skip: int = 0
    #: `NAME=VALUE` words may come before the command (env, sudo)
    assignments: bool = False
    #: options whose value is a shell string it runs (`su -c 'curl x'`, `env -S 'curl x'`)
    string_short: str = ""
    string_long: frozenset[str] = frozenset()
    #: it runs its operands joined as one shell string (watch)
    joins: bool = False
    #: its operands are a command (not for su: `su USER` starts a login shell, and only its `-c`
    #: string is a command, wherever it stands)
    runs_operands: bool = True
    #: options that start the command in another directory (`env -C DIR`), or always (chroot)
    chdir_short: str = ""
    chdir_long: frozenset[str] = frozenset()
    chdir_always: bool = False


def _s(text: str) -> frozenset[str]:
    return frozenset(text.split())


LAUNCHERS: dict[str, Launcher] = {
    "env": Launcher(
        short_value="uCP",
        long_value=_s("unset chdir"),
        assignments=True,
        string_short="S",
        string_long=_s("split-string"),
        chdir_short="C",
        chdir_long=_s("chdir"),
    ),
    "exec": Launcher(short_value="a"),
    "sudo": Launcher(
        short_value="ugCDhprtUT",
        long_value=_s("user group close-from chdir host prompt role type other-user command-timeout"),
        assignments=True,
        chdir_short="D",
        chdir_long=_s("chdir"),
    ),
    "doas": Launcher(short_value="uC"),
    "setsid": Launcher(),
    "ionice": Launcher(short_value="cnp", long_value=_s("class classdata pid pgid uid")),
    "taskset": Launcher(skip=1),
    "chroot": Launcher(long_value=_s("userspec groups"), skip=1, chdir_always=True),
    "unshare": Launcher(short_value="SG", long_value=_s("setuid setgid root wd propagation"), chdir_long=_s("root wd")),
    "nsenter": Launcher(
        short_value="tSGrw", long_value=_s("target setuid setgid root wd"), chdir_short="rw", chdir_long=_s("root wd")
    ),
    "strace": Launcher(short_value="abeEIoOpPsSuUX", long_value=_s("output")),
    "ltrace": Launcher(short_value="aAeEfFlnopsuLx", long_value=_s("output")),
    "flock": Launcher(
        short_value="wEx",
        long_value=_s("timeout conflict-exit-code"),
        skip=1,
        string_short="c",
        string_long=_s("command"),
    ),
    "su": Launcher(
        string_short="c",
        string_long=_s("command session-command"),
        runs_operands=False,
    ),
    "runuser": Launcher(
        string_short="c",
        string_long=_s("command session-command"),
        runs_operands=False,
    ),
    "script": Launcher(
        string_short="c",
        string_long=_s("command"),
        runs_operands=False,
    ),
    "watch": Launcher(short_value="nq", long_value=_s("interval equexit"), joins=True),
    "busybox": Launcher(),
    "caffeinate": Launcher(short_value="tw"),
    "xargs": Launcher(
        short_value="".join(o[1] for o in XARGS_VALUE_OPTIONS),
        long_value=_s("arg-file delimiter eof replace max-lines max-args max-procs max-chars process-slot-var"),
    ),
}
#: the wrappers the parser strips: still here, their options could not be read
STRIPPED = frozenset({"time", "nohup", "builtin", "command", "nice", "stdbuf", "timeout"})
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass
class Started:
    """What a command starts: whole commands (as words) and shell strings."""

    commands: list[tuple[Word, ...]]
    strings: list[str]
    #: they start in another directory (or another root) than the line's
    moved: bool = False


def launched(cmd: SimpleCommand) -> Started | None:
    """What `cmd` starts with its arguments (see the module docstring); None when it cannot be told."""
    name = program_name(cmd.name)
    if name == "find":
        return _find(cmd.args)
    if name in STRIPPED and cmd.args:
        first = word_text(cmd.args[0])
        if name == "command" and first is not None and first.startswith("-") and first.strip("-p") != "":
            return Started([], [])  # `command -v x` asks where x is
        return None  # the parser could not read the wrapper's options (`timeout $T curl`)
    launcher = LAUNCHERS.get(name)
    if launcher is None:
        return Started([], [])
    return _start(launcher, cmd.args)


def _start(launcher: Launcher, args: tuple[Word, ...]) -> Started | None:
    started = Started([], [], moved=launcher.chdir_always)
    i = 0
    while i < len(args):
        text = word_text(args[i])
        if text is None:
            return None  # an option or the program, only known at run time
        if text == "--":
            i += 1
            break
        if not text.startswith("-"):
            break  # (a lone `-` is an option: env's `-i`)
        i += 1
        if text.startswith("--"):
            option, eq, value = text[2:].partition("=")
            is_string = bool(option) and any(o.startswith(option) for o in launcher.string_long)
            takes = is_string or (bool(option) and any(o.startswith(option) for o in launcher.long_value))
            if takes and not eq:
                if i >= len(args):
                    return started
                known = word_text(args[i])
                i += 1
                if known is None:
                    return None
                value = known
            if is_string:
                started.strings.append(value)
            started.moved |= bool(option) and any(o.startswith(option) for o in launcher.chdir_long)
            continue
        cluster = text[1:]
        for j, letter in enumerate(cluster):
            started.moved |= letter in launcher.chdir_short
            if letter in launcher.short_value or letter in launcher.string_short:
                glued = cluster[j + 1 :]
                if not glued:
                    if i >= len(args):
                        return started
                    known = word_text(args[i])
                    i += 1
                    if known is None:
                        return None
                    glued = known
                if letter in launcher.string_short:
                    started.strings.append(glued)
                break
    # `flock FILE -c CMD`, `su USER -c CMD`: a string option may come after the operands
    if (launcher.string_short or launcher.string_long) and not _late_strings(launcher, args[i:], started):
        return None
    while launcher.assignments and i < len(args) and _is_assignment(word_text(args[i])):
        i += 1
    rest = args[i + launcher.skip :] if launcher.runs_operands else ()
    if rest:
        if launcher.joins:
            texts = [word_text(w) for w in rest]
            if any(t is None for t in texts):
                return None
            started.strings.append(" ".join(t or "" for t in texts))
        else:
            started.commands.append(tuple(rest))
    return started


def _late_strings(launcher: Launcher, args: tuple[Word, ...], started: Started) -> bool:
    """The shell strings of options after the operands; False when one is only known at run time."""
    for i, word in enumerate(args):
        text = word_text(word)
        following = word_text(args[i + 1]) if i + 1 < len(args) else ""
        if text is None:
            continue
        value: str | None = None
        if text.startswith("--"):
            option, eq, glued = text[2:].partition("=")
            if option and any(o.startswith(option) for o in launcher.string_long):
                value = glued if eq else following
        elif text.startswith("-") and any(c in launcher.string_short for c in text[1:]):
            letter = next(c for c in text[1:] if c in launcher.string_short)
            value = text[text.index(letter) + 1 :] or following
        else:
            continue
        if value is None:
            return False
        started.strings.append(value)
    return True


def _is_assignment(text: str | None) -> bool:
    """`NAME=VALUE` before env's or sudo's command: like them, any word with a `=` (`1A=x` too)."""
    return text is not None and "=" in text


def _find(args: tuple[Word, ...]) -> Started:
    """`find … -exec PROG ARGS ;` (or `+`): each PROG ARGS is a command."""
    started = Started([], [])
    i = 0
    while i < len(args):
        if word_text(args[i]) in FIND_EXEC:
            j = i + 1
            while j < len(args) and word_text(args[j]) not in (";", "+"):
                j += 1
            if j > i + 1:
                started.commands.append(tuple(args[i + 1 : j]))
            i = j
        i += 1
    return started
