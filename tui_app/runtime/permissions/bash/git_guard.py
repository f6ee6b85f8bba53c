"""The git guard: a git command that runs without asking never runs a program the repository names.

git reads configuration the project controls — `.git/config` (planted in an unpacked archive, or
written by anyone who could), files it includes, `.gitmodules`, a repository-shaped folder
committed as plain files (HEAD, config, objects/, refs/) that `git clone` keeps — and some keys
there name programs git runs on its own: `core.fsmonitor` on every `git status`, `diff.external`
and textconv drivers on `git diff`/`log -p`/`show`, clean filters when a file looks changed,
`gpg.program` for signatures, pagers. So an auto-allowed `git status` is read-only only together
with the environment that keeps it so:

* `run_env` — what every command the classifier calls read-only runs with: command-line
  configuration (`GIT_CONFIG_COUNT`, which outranks every file) that switches off the keys an
  override can switch off (`RUN_CONFIG`), bare repositories found by discovery refused
  (`safe.bareRepository=explicit`), no transport (`protocol.allow=never`: credential helpers,
  ssh commands and proxies never start), submodules looked into only for their commit, a pager
  that is `cat`, no optional index writes.
* `git_problem` — why a git command at a place must ask, or None: the repository it would use
  is not the project's own (a nested, bare or planted one: unknown ground), or the configuration
  of the project's repository names a program no override switches off (`KEYS`: textconv, filter
  and diff drivers, gpg programs, hooks of transports …, anything else whose name says it runs a
  program), or an include cannot be read, or `.gitmodules` asks git to look inside a submodule.

The configuration is read with git's own parser (`git config --file F --list -z`, which runs
nothing), one file at a time, includes followed by hand as if every condition held.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

#: command-line configuration for auto-allowed commands: each switches off a key that names a
#: program (or makes git look into a repository whose configuration is not checked)
RUN_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("log.showSignature", "false"),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("safe.bareRepository", "explicit"),
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "dirty"),
    ("diff.submodule", "short"),
    ("status.submoduleSummary", "false"),
)
#: a pager that only prints; no optional writes (`git status` refreshing the index)
RUN_VARIABLES: Mapping[str, str] = {"GIT_PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0"}
#: variables that would run a program the user did not name here, or point git elsewhere
DROPPED_VARIABLES = ("GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND",
                     "GIT_PROXY_COMMAND")


def run_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` for a command the classifier called read-only: `RUN_CONFIG` added after whatever
    command-line configuration it already carries, the variables of `RUN_VARIABLES` set, those of
    `DROPPED_VARIABLES` and a relative `RIPGREP_CONFIG_PATH` (a project's file) removed."""
    out = {k: v for k, v in env.items() if k not in DROPPED_VARIABLES}
    if not os.path.isabs(out.get("RIPGREP_CONFIG_PATH", "/")):
        del out["RIPGREP_CONFIG_PATH"]  # a file of the project the command runs in; it may name `--pre`
    try:
        start = int(out.get("GIT_CONFIG_COUNT", "0") or "0")
    except ValueError:
        start = 0
    start = max(start, 0)
    for offset, (key, value) in enumerate(RUN_CONFIG):
        out[f"GIT_CONFIG_KEY_{start + offset}"] = key
        out[f"GIT_CONFIG_VALUE_{start + offset}"] = value
    out["GIT_CONFIG_COUNT"] = str(start + len(RUN_CONFIG))
    out.update(RUN_VARIABLES)
    return out


# ---- which keys name a program -------------------------------------------------------------------

#: key patterns (lower case; `*` any subsection) the run environment switches off, or that never
#: act for the auto-allowed subcommands (aliases never shadow a built-in command)
NEUTRALISED = ("core.fsmonitor", "core.hookspath", "core.pager", "pager.*", "core.editor", "sequence.editor",
               "log.showsignature", "alias.*", "credential.helper", "diff.ignoresubmodules", "diff.submodule",
               "status.submodulesummary", "submodule.recurse")
#: keys that name a program no override switches off (or point git at files the rules never see)
KEYS = ("diff.external", "diff.*.command", "diff.*.textconv", "filter.*.clean", "filter.*.smudge",
        "filter.*.process", "merge.*.driver", "gpg.program", "gpg.*.program", "gpg.ssh.defaultkeycommand",
        "core.sshcommand", "core.gitproxy", "core.askpass", "credential.*.helper", "core.alternaterefscommand",
        "uploadpack.packobjectshook", "remote.*.uploadpack", "remote.*.receivepack", "remote.*.vcs",
        "core.worktree", "interactive.difffilter", "sendemail.sendmailcmd", "sendemail.*.sendmailcmd")
#: the last word of a key that names a program, for keys no table lists
PROGRAM_WORDS = frozenset({"command", "cmd", "program", "driver", "textconv", "clean", "smudge", "process",
                           "helper", "editor", "pager", "sshcommand", "gitproxy", "askpass", "fsmonitor", "hookspath",
                           "hook", "path", "difffilter", "tool", "proxy"})
INCLUDES = ("include.path", "includeif.*.path")
#: `.gitmodules` keys: `ignore` other than these makes `git status` run git inside the submodule
QUIET_SUBMODULE = frozenset({"all", "dirty"})
MAX_INCLUDE_DEPTH = 10


def _matches(key: str, patterns: Iterable[str]) -> bool:
    """`filter.x.clean` against `filter.*.clean`: section and name compared without case, the
    subsection (which may hold dots) as a whole; `alias.*` is any name of a section without one."""
    section, _, rest = key.partition(".")
    sub, _, name = rest.rpartition(".")
    for pattern in patterns:
        p_section, _, p_rest = pattern.partition(".")
        p_sub, _, p_name = p_rest.rpartition(".")
        if section.lower() != p_section or (name.lower() != p_name and p_name != "*"):
            continue
        if (p_sub == "*" and sub) or (p_sub == "" and sub == ""):
            return True
        if p_sub not in ("", "*") and fnmatchcase(sub.lower(), p_sub):
            return True
    return False


def key_problem(key: str, value: str | None) -> str | None:
    """Why the repository's configuration setting `key` makes an auto-allowed git ask, or None."""
    if _matches(key, NEUTRALISED):
        return None
    if _matches(key, KEYS):
        return f"`{key}` names a program git would run"
    if key.rpartition(".")[2].lower() in PROGRAM_WORDS and not _matches(key, INCLUDES):
        return f"`{key}` may name a program git would run"
    if value is not None and value.lstrip().startswith("!"):
        return f"`{key}` runs a shell command (`!`)"
    return None


# ---- reading configuration -----------------------------------------------------------------------

class _Unreadable(Exception):
    pass


_cache: dict[tuple[str, int, int, int], list[tuple[str, str | None]]] = {}
_cache_lock = threading.Lock()


def config_entries(path: str) -> list[tuple[str, str | None]]:
    """(key, value) of one configuration file, as git reads it (None: a key without `=`), includes
    not followed; [] for a file that does not exist. Raises _Unreadable when git cannot read it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise _Unreadable(f"{path} cannot be read ({exc.strerror})") from None
    stamp = (path, st.st_mtime_ns, st.st_size, st.st_ino)
    with _cache_lock:
        if stamp in _cache:
            return _cache[stamp]
    git = _git_program()
    if git is None:
        raise _Unreadable("git is not installed, so its configuration cannot be read")
    try:
        # `--file`: that file only (no system or user configuration); the reader gets no environment
        done = subprocess.run([git, "config", "--file", path, "--no-includes", "--list", "-z"], cwd="/",
                              env={}, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _Unreadable(f"{path} could not be read by git ({exc})") from None
    if done.returncode != 0:
        raise _Unreadable(f"git cannot read {path}")
    entries: list[tuple[str, str | None]] = []
    for record in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if not record:
            continue
        key, newline, value = record.partition("\n")
        entries.append((key, value if newline else None))
    with _cache_lock:
        if len(_cache) > 256:
            _cache.clear()
        _cache[stamp] = entries
    return entries


SYSTEM_PATH = "/usr/bin:/bin:/usr/local/bin"


def _git_program() -> str | None:
    """The system's git (never one a relative PATH entry would find in the project)."""
    return shutil.which("git", path=SYSTEM_PATH)


def _include_target(value: str, including: str, home: str) -> str:
    if value == "~" or value.startswith("~/"):
        return home + value[1:]
    return os.path.normpath(os.path.join(os.path.dirname(including), value))


def config_problem(paths: Iterable[str], home: str, allowed: frozenset[str] = frozenset()) -> str | None:
    """The first reason the configuration files (and what they include) make git ask; keys in
    `allowed` (lower case) are let be."""
    stack = [(p, 0) for p in reversed(list(paths))]
    seen: set[str] = set()
    while stack:
        path, depth = stack.pop()
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = config_entries(path)
        except _Unreadable as exc:
            return str(exc)
        for key, value in entries:
            if _matches(key, INCLUDES):
                if not value:
                    continue
                if depth >= MAX_INCLUDE_DEPTH:
                    return f"{path} includes configuration too deeply to follow"
                stack.append((_include_target(value, path, home), depth + 1))
                continue
            why = None if key.lower() in allowed else key_problem(key, value)
            if why is not None:
                return f"the git configuration {path}: {why}"
    return None


# ---- which repository a command uses ---------------------------------------------------------------

@dataclass(frozen=True)
class Repository:
    #: the git directory (`.git`, a worktree's or submodule's, or a bare-shaped folder)
    git_dir: str
    #: the work tree's top (None: a bare-shaped folder)
    work_tree: str | None


def git_dir_shaped(path: str) -> bool:
    """Whether git would take `path` for a git directory. Looser than git (any HEAD, objects and
    refs, or a commondir), so that everything git would take is found."""
    if not os.path.lexists(os.path.join(path, "HEAD")):
        return False
    if os.path.lexists(os.path.join(path, "commondir")):
        return True
    return os.path.isdir(os.path.join(path, "objects")) and os.path.isdir(os.path.join(path, "refs"))


def _gitfile_target(path: str) -> str | None:
    """The directory a `.git` file points to (`gitdir: X`), or None when it is not one."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    first = head.splitlines()[0] if head else ""
    if not first.startswith("gitdir: "):  # git's own test: anything else is no pointer (git stops there)
        return None
    return os.path.normpath(os.path.join(os.path.dirname(path), first[8:].strip()))


def discover(start: str, env: Mapping[str, str] | None = None) -> Repository | None:
    """The repository git would use in `start` (git's discovery, walking up), or None."""
    env = os.environ if env is None else env
    if env.get("GIT_DIR"):
        git_dir = os.path.realpath(os.path.join(start, env["GIT_DIR"]))
        tree = env.get("GIT_WORK_TREE")
        return Repository(git_dir, os.path.realpath(os.path.join(start, tree)) if tree else None)
    here = os.path.realpath(start)
    while True:
        if os.path.isdir(here):
            dot = os.path.join(here, ".git")
            if os.path.isfile(dot):
                target = _gitfile_target(dot)
                return Repository(os.path.realpath(target) if target else os.path.realpath(dot), here)
            if git_dir_shaped(dot):
                return Repository(os.path.realpath(dot), here)
            if git_dir_shaped(here):
                return Repository(here, None)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _common_dir(git_dir: str) -> str:
    target = os.path.join(git_dir, "commondir")
    try:
        with open(target, encoding="utf-8", errors="replace") as handle:
            text = handle.read().strip()
    except OSError:
        return git_dir
    return os.path.normpath(os.path.join(git_dir, text)) if text else git_dir


#: what git itself writes into the configuration of a submodule it keeps under `modules/`
MODULE_KEYS = frozenset({"core.worktree"})
#: how deep submodule names (which may hold slashes) are looked for under `modules/`
MAX_MODULE_DEPTH = 6


def config_files(repo: Repository) -> list[str]:
    """The repository's own configuration files: the common config and the worktree's."""
    return [os.path.join(_common_dir(repo.git_dir), "config"), os.path.join(repo.git_dir, "config.worktree")]


def module_config_files(repo: Repository) -> list[str]:
    """The configuration files of the submodules git keeps under `modules/` (and theirs, nested),
    not descending into their object stores."""
    modules = os.path.join(_common_dir(repo.git_dir), "modules")
    files: list[str] = []
    for directory, dirnames, filenames in os.walk(modules):
        if git_dir_shaped(directory):
            if "config" in filenames:
                files.append(os.path.join(directory, "config"))
            dirnames[:] = [d for d in dirnames if d == "modules"]
        elif directory.count(os.sep) - modules.count(os.sep) >= MAX_MODULE_DEPTH:
            dirnames.clear()
    return files


def submodule_problem(repo: Repository) -> str | None:
    """`.gitmodules` (committed: it comes with a clone) may tell git to look inside a submodule,
    whose own configuration is not checked: then git asks."""
    if repo.work_tree is None:
        return None
    path = os.path.join(repo.work_tree, ".gitmodules")
    try:
        entries = config_entries(path)
    except _Unreadable as exc:
        return str(exc)
    for key, value in entries:
        section, _, rest = key.partition(".")
        name = rest.rpartition(".")[2]
        if section.lower() != "submodule":
            continue
        if name.lower() == "ignore" and (value or "").strip().lower() not in QUIET_SUBMODULE:
            return f"{path} makes git look inside a submodule (`{key}`), whose configuration Vigil does not check"
    return None


def owned_git_dirs(own: Iterable[str], env: Mapping[str, str] | None = None) -> set[str]:
    """The git directories of the repositories the working directories `own` are in."""
    return {r.git_dir for r in (discover(d, env) for d in own) if r is not None}


def unknown_git_dir(git_dir: str, owned: set[str]) -> str | None:
    if os.path.realpath(git_dir) in owned:
        return None
    return f"git would use the repository {git_dir}, which is not the project's own: its configuration may run programs"


def repository_problem(dirs: Iterable[str], own: Iterable[str], env: Mapping[str, str] | None = None) -> str | None:
    """Why a git command run in any of `dirs` would use a repository other than the project's own
    (a nested, bare-shaped or planted one: unknown ground), or None."""
    owned = owned_git_dirs(own, env)
    for directory in dirs:
        repo = discover(directory, env)
        why = unknown_git_dir(repo.git_dir, owned) if repo is not None else None
        if why is not None:
            return why
    return None


def git_problem(dirs: Iterable[str], own: Iterable[str], home: str,
                env: Mapping[str, str] | None = None) -> str | None:
    """Why an auto-allowed git command run in any of `dirs` must ask, or None: the repository is
    not the project's own (`own` are the working directories), or its configuration names a
    program the run environment does not switch off."""
    why = repository_problem(dirs, own, env)
    if why is not None:
        return why
    for directory in dirs:
        repo = discover(directory, env)
        if repo is None:
            continue
        why = (config_problem(config_files(repo), home)
               or config_problem(module_config_files(repo), home, MODULE_KEYS) or submodule_problem(repo))
        if why is not None:
            return why
    return None
