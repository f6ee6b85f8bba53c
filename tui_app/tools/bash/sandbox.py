"""Running one Bash command inside bubblewrap: the argv that wraps it, the environment it gets, and
what is set up around it (the network proxy, placeholders for protected files that do not exist).

The policy (what is writable, masked, read-only; which calls are sandboxed) is the runtime's
`SandboxPolicy`; this module only turns a `SandboxLayout` into bwrap arguments:

    bwrap --die-with-parent --unshare-all --unshare-user --disable-userns
          --ro-bind / /  --dev /dev  --proc /proc  --tmpfs /tmp
          --bind W W            every writable root
          --bind D D            directories above protected paths (pinned: a mount point cannot
                                be renamed or removed, so a hook's folder cannot be swapped)
          --ro-bind P P         protected paths inside them
          --tmpfs D --remount-ro D   masked directories, and protected names that do not exist yet
          --ro-bind /dev/null F      masked files (reading them fails: Permission denied)
          --ro-bind S S              readable directories inside hidden ones (the session's artifacts)
          --ro-bind EMPTY F          credential files (an empty read-only file: tools that read
                                     `~/.npmrc` or `~/.docker/config.json` go on without it)
          --ro-bind SOCK /tmp/.vigil-proxy.sock
          --chdir CWD -- bash -c BRIDGE bash COMMAND

Mounts are applied shallow first, so a mask inside a writable root lands on top of it. The
network namespace has only a loopback: a `socat` started first inside relays 127.0.0.1:3128 to
Vigil's proxy (`net_proxy`), which lets through the allowed domains and asks for new ones; the
usual proxy variables point there. `--die-with-parent` ends everything if Vigil dies; ending the
command's process group ends the sandbox too (the whole PID namespace goes with its first process).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache

from tui_app.runtime.permissions.bash.parse import parse_command
from tui_app.runtime.permissions.bash.readonly import classify
from tui_app.runtime.permissions.sandbox_policy import SandboxLayout, SandboxPolicy
from tui_app.runtime.permissions.working_dirs import inside
from tui_app.runtime.processes import reaper
from tui_app.tools.bash.net_proxy import DomainAsker, NetProxy

PROXY_PORT = 3128
PROXY_SOCKET = "/tmp/.vigil-proxy.sock"
#: the relay starts before the command; the command waits (a few ms) until it listens, yielding
#: the CPU between tries (a read with a timeout on a terminal that never speaks)
BRIDGE = (f"socat TCP-LISTEN:{PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:{PROXY_SOCKET} "
          f"</dev/null >/dev/null 2>&1 &\n"
          "{ exec 7<>/dev/ptmx; } 2>/dev/null; i=0\n"
          f"until {{ exec 9<>/dev/tcp/127.0.0.1/{PROXY_PORT}; }} 2>/dev/null; do "
          "i=$((i+1)); [ $i -ge 20000 ] && break; read -t 0.0005 -u 7 2>/dev/null; done\n"
          "exec 9>&- 7>&-\n"
          'exec "$0" -c "$1"\n')
BASE_FLAGS = ("--die-with-parent", "--unshare-all", "--unshare-user", "--disable-userns")


@dataclass(frozen=True)
class Probe:
    available: bool
    reason: str = ""
    #: socat is there: the network can go through the proxy (else it is closed altogether)
    network: bool = False
    flags: tuple[str, ...] = BASE_FLAGS


@cache
def _bwrap() -> str:
    return shutil.which("bwrap") or "bwrap"


@cache
def probe() -> Probe:
    """Can bubblewrap run a command here? Asked once per process (a few milliseconds)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Probe(False, "bubblewrap (bwrap) is not installed")
    last = ""
    for flags in (BASE_FLAGS, BASE_FLAGS[:-1]):  # --disable-userns needs bubblewrap 0.8
        try:
            done = subprocess.run([bwrap, *flags, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                   "--tmpfs", "/tmp", "--", "true"], capture_output=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Probe(False, f"bwrap could not run: {exc}")
        if done.returncode == 0:
            return Probe(True, network=shutil.which("socat") is not None, flags=flags)
        last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        last = last[0]
    return Probe(False, f"bwrap cannot create a sandbox here ({last})")


# ---- placeholders ----------------------------------------------------------------------------------

#: empty mount points bwrap created for protected paths that did not exist (`.vigil`, `.mcp.json`)
_placeholders: set[str] = set()
#: sandboxed commands between the reading of their layout and their end
_active = [0]
_placeholder_lock = threading.Lock()


def _enter() -> None:
    """A command is about to read its layout. From here until it ends no placeholder is removed:
    a layout read now may already show another command's placeholder as an existing directory
    to bind, and that bind fails if the directory vanishes before bwrap starts."""
    with _placeholder_lock:
        _active[0] += 1


def _leave(placeholders: tuple[tuple[str, str], ...]) -> None:
    """A command ended; the last one running removes the placeholders that are still empty."""
    with _placeholder_lock:
        _placeholders.update(path for path, _kind in placeholders)
        _active[0] -= 1
        if _active[0] > 0:
            return
        for path in sorted(_placeholders, key=len, reverse=True):
            with contextlib.suppress(OSError):
                os.rmdir(path)  # only ever succeeds while it is still the empty placeholder
            reaper.unwatch_placeholder(path)
        _placeholders.clear()


# ---- the argv ----------------------------------------------------------------------------------------

def mount_args(layout: SandboxLayout, proxy_socket: str | None, empty_file: str = "/dev/null") -> list[str]:
    """bwrap's filesystem arguments for a layout, shallow paths first. `empty_file`: an empty
    read-only file on the host, shown in place of each credential file."""
    masked = tuple(layout.masked_dirs)
    ops: list[tuple[int, int, list[str]]] = []
    # a working directory under /tmp: the host's tree it sits in is shown read-only around it, so
    # that a write next to it fails as anywhere else instead of landing in the private /tmp, unseen
    shown = tuple(dict.fromkeys("/tmp/" + root[5:].split("/", 1)[0] for root in layout.writable
                                if inside(root, ("/tmp",)) and root.count("/") > 2))

    def relevant(path: str) -> bool:
        # under the private /tmp only what is brought in exists
        return not inside(path, ("/tmp",)) or inside(path, layout.writable + shown)

    def add(path: str, rank: int, args: list[str]) -> None:
        ops.append((path.rstrip("/").count("/"), rank, args))

    for top in shown:
        add(top, -1, ["--ro-bind", top, top])
    for root in layout.writable:
        add(root, 0, ["--bind", root, root])
    for path in layout.pinned:
        if relevant(path) and not inside(path, masked):
            add(path, 0, ["--bind", path, path])
    for path in layout.readonly:
        if relevant(path) and not inside(path, masked):
            add(path, 1, ["--ro-bind", path, path])
    for path, _kind in layout.placeholders:
        # an empty read-only directory, even where a file is protected (`.mcp.json`): git and
        # grep do not see an empty directory, and nothing can be created in its place
        if not inside(path, masked):
            add(path, 2, ["--tmpfs", path, "--remount-ro", path])
    # a hidden directory with something shown inside gets its mount points made first, then is
    # made read-only once they are bound
    holding = {path for path in masked if any(inside(s, (path,)) and s != path for s in layout.shown)}
    for path in masked:
        if relevant(path):
            add(path, 3, ["--tmpfs", path] + ([] if path in holding else ["--remount-ro", path]))
    for path in layout.masked_files:
        if relevant(path) and not inside(path, masked):
            add(path, 3, ["--ro-bind", "/dev/null", path])
    for path in layout.empty_files:
        if relevant(path) and not inside(path, masked):
            add(path, 3, ["--ro-bind", empty_file, path])
    for path in layout.shown:
        if relevant(path):
            add(path, 4, ["--ro-bind", path, path])
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for _depth, _rank, op in sorted(ops, key=lambda o: (o[0], o[1])):
        args += op
    for path in sorted(holding):
        if relevant(path):
            args += ["--remount-ro", path]
    if proxy_socket is not None:
        args += ["--ro-bind", proxy_socket, PROXY_SOCKET]
    return args


def sandbox_env(env: dict[str, str], network: bool) -> dict[str, str]:
    out = dict(env)
    out["TMPDIR"] = "/tmp"
    out["VIGIL_SANDBOX"] = "1"
    proxy = f"http://127.0.0.1:{PROXY_PORT}"
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        if network:
            out[name] = proxy
        else:
            out.pop(name, None)
    if network:
        out["NO_PROXY"] = out["no_proxy"] = "localhost,127.0.0.1,::1"
    return out


@dataclass
class Launch:
    """One sandboxed command: how to wrap its argv, its environment, and what to tidy up."""

    wrap: Callable[[list[str]], list[str]]
    env: dict[str, str]
    layout: SandboxLayout
    proxy: NetProxy | None = None
    closed: bool = False
    #: settings let the model ask to run a command outside (allowUnsandboxedCommands)
    unsandboxed_allowed: bool = True

    @property
    def blocked_hosts(self) -> list[str]:
        return sorted(self.proxy.blocked) if self.proxy is not None else []

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            if self.proxy is not None:
                await self.proxy.close()
        finally:
            _leave(self.layout.placeholders)


def needs_network(command: str) -> bool:
    """Whether the command may use the network: anything but the known read-only programs (which
    read local files only) might. A line that cannot be read might too."""
    parsed = parse_command(command)
    return not parsed.ok or not all(classify(parsed).known)


@cache
def _socket_dir() -> str:
    """A private directory for this process's proxy sockets (one socket per sandboxed command).
    A Unix socket's path may not be longer than 107 bytes: a deep $TMPDIR is passed over."""
    candidates = [os.environ.get("XDG_RUNTIME_DIR") or "", tempfile.gettempdir(), "/tmp"]
    base = next((c for c in candidates if c and len(c) < 60 and os.path.isdir(c) and os.access(c, os.W_OK)),
                None)
    path = tempfile.mkdtemp(prefix="vigil-sbx-", dir=base)
    atexit.register(_remove_dir, path)
    return path


def _remove_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(path)


@cache
def _empty_file() -> str:
    """An empty read-only file of this process's, bound over credential files."""
    path = os.path.join(_socket_dir(), "empty")
    with open(path, "w"):
        pass
    os.chmod(path, 0o444)
    atexit.register(_remove_file, path)
    return path


def _remove_file(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


_socket_numbers = itertools.count(1)


async def prepare(policy: SandboxPolicy, cwd: str, env: dict[str, str], command: str,
                  ask: DomainAsker | None = None) -> Launch:
    """Set up the sandbox of one command (its proxy, its placeholders) and say how to start it.
    The network relay starts only for commands that may need it: for the known read-only
    programs the network is simply closed, which saves starting socat."""
    found = probe()
    if not found.available:
        raise OSError(f"the sandbox cannot start: {found.reason}")
    bwrap = _bwrap()
    _enter()
    try:
        layout = policy.layout()
        for path, _kind in layout.placeholders:
            reaper.watch_placeholder(path)  # bwrap creates it; a Vigil killed now leaves it to the reaper
        proxy = None
        if found.network and needs_network(command):
            path = os.path.join(_socket_dir(), f"p{next(_socket_numbers)}.sock")
            proxy = NetProxy(policy, path, command=command, ask=ask)
            await proxy.start()
    except BaseException:
        _leave(())
        raise
    launch = Launch(wrap=lambda argv: argv, env=sandbox_env(policy.command_env(env), proxy is not None),
                    layout=layout, proxy=proxy, unsandboxed_allowed=policy.settings.allow_unsandboxed)
    empty = _empty_file() if layout.empty_files else "/dev/null"
    prefix = [bwrap, *found.flags, *mount_args(layout, proxy.path if proxy else None, empty), "--chdir", cwd, "--"]

    def wrap(argv: list[str]) -> list[str]:
        if proxy is None:
            return prefix + argv
        shell, flag, script = argv  # [bash, -c, COMMAND]
        assert flag == "-c"
        return [*prefix, shell, "-c", BRIDGE, shell, script]

    launch.wrap = wrap
    return launch


#: an asker the Bash tool builds for one call: may this command reach `host`?
Asker = Callable[[str, int], Awaitable[bool]]
