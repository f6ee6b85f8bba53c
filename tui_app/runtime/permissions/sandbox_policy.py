"""The sandbox policy: which Bash calls run sandboxed, and what the sandbox lets them touch.

Settings use Claude Code's `sandbox` key (any settings file; scalars: the highest file wins,
lists are merged):

    enabled                   sandbox Bash commands (Vigil: on wherever bubblewrap works, unless false)
    autoAllowBashIfSandboxed  a sandboxed command runs without asking (deny and ask rules still
                              apply). Default: true when `enabled` is set true, as in Claude Code;
                              when the sandbox is only on by Vigil's default, auto-allow stays with
                              the read-only classifier and every other command asks as before
    excludedCommands          commands that run outside the sandbox (and then ask as usual)
    allowUnsandboxedCommands  (default true) the model may ask to run one command outside
                              (Bash input `dangerouslyDisableSandbox: true`), which always asks
    failIfUnavailable         no bubblewrap → Bash fails instead of running unsandboxed
    network.allowedDomains    hosts the sandbox's proxy lets through (`*.x.com`: subdomains);
                              `WebFetch(domain:…)` allow rules count too, deny rules block
    network.allowLocalBinding, allowUnixSockets, allowAllUnixSockets, httpProxyPort,
    socksProxyPort            accepted; see README (the sandbox has its own loopback)
    filesystem.allowWrite / denyWrite / denyRead / allowRead   extra paths (`allowRead` also
                              shows a credential path the sandbox hides, see below)
    env.keep                  (Vigil) variables a command keeps although they look like secrets

What a sandboxed command sees (`layout`): the root filesystem read-only; the working directories
(and `allowWrite`) writable; a private /tmp; every path a Read deny rule (or `denyRead`) covers
masked; settings files, hook scripts, `.mcp.json`, `.claude/`, `.vigil/`, the whole `.git/`
(a worktree's `.git` file, the git directory it points to and the common one too) and shell rc
files read-only — `.mcp.json`, `.claude/` and `.vigil/` get an empty read-only placeholder while
a command runs when they do not exist yet, so nothing can create them either (removed afterwards
when still empty). Every directory between a writable root and a protected path is *pinned*
(bound onto itself, still writable): a mount point cannot be renamed or removed, so no command
can swap the folder a hook script sits in for one of its own (docs/architecture.md, the
security boundary). The home directory is read-only without its credentials, Vigil's and
Claude Code's state and the session's sockets (`sandbox_secrets`): they are hidden unless
`filesystem.allowRead` names them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tui_app.runtime.permissions.bash.parse import parse_command
from tui_app.runtime.permissions.path_rules import PROTECTED_FILES, PathPattern, literal_prefix
from tui_app.runtime.permissions.rules import bash_matches, domain_matches
from tui_app.runtime.permissions.sandbox_secrets import scrub_env, secret_paths
from tui_app.runtime.permissions.working_dirs import WorkingDirs, inside

#: sockets of daemons that act for whoever connects (a container or a system bus is a way out):
#: hidden unless `network.allowAllUnixSockets` or listed in `network.allowUnixSockets`. Other
#: Unix sockets in the filesystem stay reachable (no seccomp filter yet; see README).
DAEMON_SOCKETS = ["/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock",
                  "/run/podman/podman.sock", "/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket",
                  "/run/snapd.socket", "/run/user/0/docker.sock"]
#: entries walked to find what a wildcard deny rule covers; past this the masks are incomplete
MAX_WALK = 20_000
#: names at the top of every writable root that nothing in the sandbox may write or create
ROOT_PROTECTED_DIRS = (".claude", ".vigil")
ROOT_PROTECTED_FILES = (".mcp.json",)


@dataclass(frozen=True)
class SandboxSettings:
    enabled: bool | None = None
    auto_allow: bool | None = None
    excluded_commands: tuple[str, ...] = ()
    allow_unsandboxed: bool = True
    fail_if_unavailable: bool = False
    allowed_domains: tuple[str, ...] = ()
    allow_local_binding: bool = False
    allow_unix_sockets: tuple[str, ...] = ()
    allow_all_unix_sockets: bool = False
    http_proxy_port: int | None = None
    socks_proxy_port: int | None = None
    allow_write: tuple[str, ...] = ()
    deny_write: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()
    allow_read: tuple[str, ...] = ()
    env_keep: tuple[str, ...] = ()


_BOOLS = {"enabled": "enabled", "autoAllowBashIfSandboxed": "auto_allow",
          "allowUnsandboxedCommands": "allow_unsandboxed", "failIfUnavailable": "fail_if_unavailable"}
_NET_BOOLS = {"allowLocalBinding": "allow_local_binding", "allowAllUnixSockets": "allow_all_unix_sockets"}
_NET_PORTS = {"httpProxyPort": "http_proxy_port", "socksProxyPort": "socks_proxy_port"}
_NET_LISTS = {"allowedDomains": "allowed_domains", "allowUnixSockets": "allow_unix_sockets"}
_FS_LISTS = {"allowWrite": "allow_write", "denyWrite": "deny_write", "denyRead": "deny_read",
             "allowRead": "allow_read"}


def parse_sandbox(layers: Iterable[tuple[str, str, Any]], home: str) -> tuple[SandboxSettings, list[dict[str, Any]]]:
    """Merge the `sandbox` objects of the settings files, lowest priority first: (source, the
    directory relative paths are relative to, value). Returns the settings and the problems
    (file, reason); a wrong value is reported and left out."""
    values: dict[str, Any] = {}
    lists: dict[str, list[str]] = {}
    errors: list[dict[str, Any]] = []

    def bad(source: str, key: str, want: str) -> None:
        errors.append({"file": source, "line": None, "reason": f"`sandbox.{key}` must be {want}"})

    def add_list(source: str, key: str, name: str, value: Any, base: str | None) -> None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            bad(source, key, "a list of strings")
            return
        items = lists.setdefault(name, [])
        for item in value:
            item = _path(item, base, home) if base is not None else item
            if item not in items:
                items.append(item)

    for source, base, data in layers:
        if not isinstance(data, dict):
            bad(source, "", "an object")
            continue
        for key, name in _BOOLS.items():
            if key in data:
                if isinstance(data[key], bool):
                    values[name] = data[key]
                else:
                    bad(source, key, "true or false")
        if "excludedCommands" in data:
            add_list(source, "excludedCommands", "excluded_commands", data["excludedCommands"], None)
        network = data.get("network", {})
        if not isinstance(network, dict):
            bad(source, "network", "an object")
            network = {}
        for key, name in _NET_BOOLS.items():
            if key in network:
                if isinstance(network[key], bool):
                    values[name] = network[key]
                else:
                    bad(source, f"network.{key}", "true or false")
        for key, name in _NET_PORTS.items():
            if key in network:
                port = network[key]
                if isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536:
                    values[name] = port
                else:
                    bad(source, f"network.{key}", "a port number")
        for key, name in _NET_LISTS.items():
            if key in network:
                add_list(source, f"network.{key}", name, network[key], None)
        filesystem = data.get("filesystem", {})
        if not isinstance(filesystem, dict):
            bad(source, "filesystem", "an object")
            filesystem = {}
        for key, name in _FS_LISTS.items():
            if key in filesystem:
                add_list(source, f"filesystem.{key}", name, filesystem[key], base)
        env = data.get("env", {})
        if not isinstance(env, dict):
            bad(source, "env", "an object")
            env = {}
        if "keep" in env:
            add_list(source, "env.keep", "env_keep", env["keep"], None)
    return SandboxSettings(**values, **{k: tuple(v) for k, v in lists.items()}), errors


def _path(text: str, base: str, home: str) -> str:
    if text == "~" or text.startswith("~/"):
        text = home + text[1:]
    elif text.startswith("//"):
        text = text[1:]
    return os.path.normpath(os.path.join(base, text))


@dataclass(frozen=True)
class SandboxLayout:
    """What one sandboxed command may touch (see the module docstring)."""

    writable: tuple[str, ...]
    masked_dirs: tuple[str, ...] = ()
    masked_files: tuple[str, ...] = ()
    readonly: tuple[str, ...] = ()
    #: (path, "dir" | "file"): protected names that do not exist yet
    placeholders: tuple[tuple[str, str], ...] = ()
    #: every path the deny rules cover is masked (False: a wildcard rule reached too far to walk)
    complete: bool = True
    #: directories above protected paths, bound onto themselves so they cannot be moved away
    pinned: tuple[str, ...] = ()
    #: credential files shown as an empty read-only file (credential directories are in `masked_dirs`)
    empty_files: tuple[str, ...] = ()
    #: read-only paths inside a hidden directory that are shown all the same (`allowRead`, and the
    #: session's artifacts in Vigil's home: a background command's output file)
    shown: tuple[str, ...] = ()


@dataclass(frozen=True)
class NetworkRules:
    allowed: tuple[str, ...] = ()
    denied: tuple[str, ...] = ()
    http_proxy_port: int | None = None

    def verdict(self, host: str) -> str | None:
        """"deny", "allow", or None when nothing decides (ask)."""
        host = host.rstrip(".").lower()
        if any(domain_matches(d, host) for d in self.denied):
            return "deny"
        if any(domain_matches(d, host) for d in self.allowed):
            return "allow"
        return None


@dataclass
class SandboxPolicy:
    """The sandbox as the permission policy and the Bash tool both see it."""

    settings: SandboxSettings
    dirs: WorkingDirs
    home: str
    #: Read deny rules as patterns (live: rules added later count)
    read_denials: Callable[[], list[PathPattern]] = lambda: []
    #: settings files and hook scripts (live)
    protected: Callable[[], Iterable[str]] = lambda: ()
    #: `WebFetch(domain:…)` allow and deny rules (live): (allowed, denied)
    web_domains: Callable[[], tuple[list[str], list[str]]] = lambda: ([], [])
    #: can bubblewrap run here? None until probed
    available: bool | None = None
    unavailable_reason: str = ""
    #: socat is there to relay the proxy (else sandboxed commands have no network at all)
    network_available: bool = False
    #: domains the user allowed for the rest of the session
    session_domains: set[str] = field(default_factory=set)
    #: saves an "always allow" answer for a host: (host, rules, destination)
    remember: Callable[[str, list[str], str], None] | None = None
    #: Vigil's own state and settings directories: hidden like the credentials
    state_dirs: tuple[str, ...] = ()
    #: the environment whose credential variables name more paths to hide
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)

    @property
    def enabled(self) -> bool:
        return self.settings.enabled is not False

    @property
    def active(self) -> bool:
        return self.enabled and self.available is True

    @property
    def auto_allow(self) -> bool:
        if self.settings.auto_allow is not None:
            return self.settings.auto_allow
        return self.settings.enabled is True

    @property
    def status(self) -> str:
        """"on", "off" (settings turned it off), "unavailable"."""
        if not self.enabled:
            return "off"
        return "on" if self.available else "unavailable"

    @property
    def required(self) -> bool:
        return self.enabled and self.settings.fail_if_unavailable

    def unsandboxed_requested(self, data: dict[str, Any]) -> bool:
        """The model asked to run this one outside, and settings allow asking."""
        return data.get("dangerouslyDisableSandbox") is True and self.settings.allow_unsandboxed

    def excluded(self, command: str) -> bool:
        """Every simple command of the line that matches `excludedCommands` runs unsandboxed:
        the line does when any does (a convenience, not a boundary: such a line asks as usual)."""
        patterns = self.settings.excluded_commands
        if not patterns:
            return False
        parsed = parse_command(command)
        texts = [c.text for c in parsed.commands] or [command.strip()]
        return any(t == p or t.startswith(p + " ") or bash_matches(p, t) for p in patterns for t in texts)

    def runs_sandboxed(self, data: dict[str, Any]) -> bool:
        command = data.get("command")
        if not self.active or not isinstance(command, str):
            return False
        return not self.unsandboxed_requested(data) and not self.excluded(command)

    def command_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """A Bash command's environment: the secrets left out, but for `env.keep`."""
        return scrub_env(env, self.settings.env_keep)

    def network(self) -> NetworkRules:
        allowed, denied = self.web_domains()
        return NetworkRules(tuple(dict.fromkeys([*self.settings.allowed_domains, *allowed, *self.session_domains])),
                            tuple(denied), self.settings.http_proxy_port)

    # ---- the filesystem -----------------------------------------------------------------------

    def layout(self) -> SandboxLayout:
        writable = [os.path.realpath(d) for d in self.dirs.roots if os.path.isdir(d)]
        writable += [os.path.realpath(p) for p in self.settings.allow_write if os.path.exists(p)]
        writable = _outermost(writable)
        masked_dirs, masked_files, unwalked = self._masks()
        hidden_dirs, empty_files = self._secrets(writable)
        # inside a hidden directory, what settings or the session name is shown all the same
        # (a working directory is never inside a hidden one: `_secrets` leaves such a one shown)
        named = list(self.dirs.readable_roots) + list(self.settings.allow_read)
        shown = [p for p in dict.fromkeys(os.path.realpath(d) for d in named) if os.path.exists(p)
                 and any(inside(p, (h,)) and p != h for h in hidden_dirs) and not inside(p, tuple(masked_dirs))]
        masked_dirs = _outermost(masked_dirs + hidden_dirs)
        empty_files = [f for f in empty_files if not inside(f, tuple(masked_dirs)) and f not in masked_files]
        masked_files = [f for f in masked_files if not inside(f, tuple(masked_dirs))]
        readonly: list[str] = []
        placeholders: list[tuple[str, str]] = []
        for root in writable:
            for name in ROOT_PROTECTED_DIRS:
                _protect(os.path.join(root, name), "dir", readonly, placeholders)
            for name in ROOT_PROTECTED_FILES:
                _protect(os.path.join(root, name), "file", readonly, placeholders)
            for name in PROTECTED_FILES:
                if os.path.lexists(os.path.join(root, name)):
                    readonly.append(os.path.join(root, name))
            for path, kind in _git_protected(root):
                _protect(path, kind, readonly, placeholders)
        for name in PROTECTED_FILES:
            readonly.append(os.path.join(self.home, name))
        readonly += list(self.protected()) + list(self.settings.deny_write)
        readonly = _outermost(p for p in dict.fromkeys(os.path.realpath(p) for p in readonly)
                              if os.path.exists(p) and inside(p, writable))
        placeholders = [(p, k) for p, k in dict.fromkeys(placeholders) if inside(p, tuple(writable))]
        pinned = _pins([*readonly, *(p for p, _k in placeholders)], writable, readonly, masked_dirs)
        return SandboxLayout(tuple(writable), tuple(masked_dirs), tuple(masked_files), tuple(readonly),
                             tuple(placeholders), not unwalked, tuple(pinned), tuple(empty_files), tuple(shown))

    def mask_gap(self) -> str:
        """Why the sandbox cannot hide every path the Read deny rules cover ("" when it can): a
        wildcard rule whose tree is too large to search. A command must then ask (fail closed)."""
        unwalked = self._masks()[2]
        if not unwalked:
            return ""
        return (f"the sandbox cannot hide every file the Read deny rule {unwalked[0]} covers (more than "
                f"{MAX_WALK} entries to search), so the command could read them")

    def _secrets(self, writable: list[str]) -> tuple[list[str], list[str]]:
        """Credential directories and files to hide: all that exist, but what `allowRead` shows
        and what holds a working directory (the user chose to work there)."""
        shown = tuple(os.path.realpath(p) for p in self.settings.allow_read)
        dirs: list[str] = []
        files: list[str] = []
        for path in secret_paths(self.home, self.environ, self.state_dirs):
            if inside(path, shown) or any(inside(root, (path,)) for root in writable):
                continue
            (dirs if os.path.isdir(path) else files).append(path)
        return dirs, files

    def _masks(self) -> tuple[list[str], list[str], list[str]]:
        """The masked directories and files, and the patterns whose matches could not all be found."""
        dirs: list[str] = []
        files: list[str] = []
        unwalked: list[str] = []
        allowed = [p for p in self.settings.allow_read]

        def mask(path: str) -> None:
            real = os.path.realpath(path)
            if any(inside(real, (a,)) for a in allowed):
                return
            (dirs if os.path.isdir(real) else files).append(real)

        if not self.settings.allow_all_unix_sockets:
            for path in DAEMON_SOCKETS:
                if os.path.lexists(path) and path not in self.settings.allow_unix_sockets:
                    files.append(os.path.realpath(path))
        for path in self.settings.deny_read:
            if os.path.lexists(path):
                mask(path)
        for pattern in self.read_denials():
            text = pattern.pattern
            prefix = literal_prefix(text)
            if not _wild(text):  # one path (a directory with all it holds)
                if os.path.lexists(prefix.rstrip("/") or "/"):
                    mask(prefix)
                continue
            if text.endswith("/**") and not _wild(text[:-3]) and os.path.isdir(prefix):
                mask(prefix)
                continue
            found, whole = _walk_matches(prefix or "/", pattern)
            if not whole:
                unwalked.append(f"Read({pattern.specifier})")
            for path in found:
                mask(path)
        return _outermost(dirs), [f for f in dict.fromkeys(files) if not inside(f, tuple(dirs))], unwalked


def _wild(pattern: str) -> bool:
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] in "*?[":
            return True
        i += 1
    return False


INSTALL_HINT = "install bubblewrap and socat (Debian/Ubuntu: apt-get install bubblewrap socat)"


def unavailable_message(sandbox: SandboxPolicy) -> str:
    """What the user must know at start when the sandbox is not what they would expect ("" if all is well)."""
    if not sandbox.enabled:
        return ""
    if not sandbox.available:
        if sandbox.required:
            return (f"No sandbox: {sandbox.unavailable_reason}. sandbox.failIfUnavailable is set, so Bash commands "
                    f"will not run; {INSTALL_HINT}.")
        return (f"No sandbox: {sandbox.unavailable_reason}. Bash commands run unsandboxed, and only a short list of "
                f"read-only commands runs without asking; {INSTALL_HINT}.")
    if not sandbox.network_available:
        return "The sandbox has no network: socat is not installed (apt-get install socat)."
    return ""


def _protect(path: str, kind: str, readonly: list[str], placeholders: list[tuple[str, str]]) -> None:
    if os.path.lexists(path):
        readonly.append(path)
    elif os.path.isdir(os.path.dirname(path)):
        placeholders.append((path, kind))


def _git_protected(root: str) -> list[tuple[str, str]]:
    """What controls the git that runs later on the host, for a repository at `root`: the whole
    `.git` directory — or a worktree's `.git` file, the git directory it points to and the
    common directory that one names (each as a whole tree)."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return [(dot_git, "dir")]
    if not os.path.isfile(dot_git):
        return []
    found = [(dot_git, "file")]
    for path in git_pointers(root):
        if os.path.isdir(path):
            found.append((path, "dir"))
    return found


def git_pointers(root: str) -> list[str]:
    """The directories a worktree's `.git` file leads to: its `gitdir:` and that one's `commondir`."""
    try:
        with open(os.path.join(root, ".git"), encoding="utf-8") as handle:
            line = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return []
    if not line.startswith("gitdir:"):
        return []
    git_dir = os.path.normpath(os.path.join(root, line[7:].strip()))
    found = [git_dir]
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            found.append(os.path.normpath(os.path.join(git_dir, handle.read().strip())))
    except (OSError, UnicodeDecodeError):
        pass
    return found


def _pins(protected: Iterable[str], writable: list[str], readonly: list[str], masked: list[str]) -> list[str]:
    """Every directory strictly between a writable root and a protected path, except those that
    are already read-only or masked (a mount point of their own, or inside one)."""
    pins: list[str] = []
    fixed = tuple(readonly) + tuple(masked)
    for path in protected:
        root = next((w for w in writable if inside(path, (w,))), None)
        if root is None:
            continue
        parent = os.path.dirname(path)
        while parent != root and inside(parent, (root,)) and parent not in pins:
            if not inside(parent, fixed):
                pins.append(parent)
            parent = os.path.dirname(parent)
    return sorted(pins)


def _walk_matches(top: str, pattern: PathPattern) -> tuple[list[str], bool]:
    """Existing paths under `top` the pattern matches (not descending into a match)."""
    found: list[str] = []
    seen = 0
    stack = [top.rstrip("/") or "/"]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except (OSError, ValueError):
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_WALK:
                return found, False
            if pattern.matches(entry.path):
                found.append(entry.path)
            elif entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return found, True


def _outermost(paths: Iterable[str]) -> list[str]:
    """Each path once, and none that lies inside another one of them."""
    unique = sorted(dict.fromkeys(os.path.normpath(p) for p in paths), key=len)
    kept: list[str] = []
    for path in unique:
        if not inside(path, tuple(kept)):
            kept.append(path)
    return kept
