"""No orphans, however Vigil dies: the client side of the reaper process (`reaper_process.py`).

`ensure_reaper()` starts it once per Vigil process (on the first session or the first spawn) and
puts Vigil's token in `os.environ`, so every process Vigil starts from then on, and everything
those start, carries it. `watch_group` / `unwatch_group` tell it about the process groups Vigil
starts (Bash commands, background tasks, hooks), and `watch_placeholder` about the empty mount
points the sandbox leaves in a project while a command runs. Vigil's own clean-up still ends its children
first on every normal path; the reaper is for the paths where Vigil gets no say (kill -9, an
abort, an interpreter that dies in C code), and it acts within a second.

Why a process and not PR_SET_PDEATHSIG on each child: the death signal reaches only the direct
child (not the `sleep` a shell started), and it fires when the *thread* that forked the child
exits, which in the TUI is a worker thread, not the process.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import sys
import threading
from pathlib import Path
from subprocess import Popen as _Popen  # bound at import: the reaper is no tool process to count

ENV_NAME = "VIGIL_REAPER"
SCRIPT = Path(__file__).with_name("reaper_process.py")

_lock = threading.Lock()
_state: dict[str, object] = {}


def ensure_reaper() -> bool:
    """Start the reaper if it is not running for this process; False where it cannot run (no
    /proc, or the spawn failed: Vigil still ends its children itself on every normal exit)."""
    with _lock:
        if _state.get("pid") == os.getpid():
            return True
        if not os.path.isdir("/proc/self"):
            return False
        token = f"{os.getpid()}-{secrets.token_hex(8)}"
        read_end, write_end = os.pipe()  # both close-on-exec: only Vigil holds the write end
        try:
            env = {k: v for k, v in os.environ.items() if k != ENV_NAME}  # an outer reaper leaves it be
            process = _Popen(
                [sys.executable, "-I", "-S", str(SCRIPT), str(os.getpid()), token],
                stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True, env=env)
        except OSError:
            os.close(write_end)
            return False
        finally:
            os.close(read_end)
        _state.update(pid=os.getpid(), fd=write_end, process=process, token=token)
        os.environ[ENV_NAME] = token
        return True


def token_env() -> dict[str, str]:
    """The token for a spawn that does not pass Vigil's environment on (the MCP SDK's whitelist)."""
    token = _state.get("token") if _state.get("pid") == os.getpid() else None
    return {ENV_NAME: token} if isinstance(token, str) else {}


def reaper_pid() -> int | None:
    process = _state.get("process")
    return process.pid if isinstance(process, subprocess.Popen) and _state.get("pid") == os.getpid() else None


def _send(line: str) -> None:
    fd = _state.get("fd")
    if not isinstance(fd, int) or _state.get("pid") != os.getpid():
        return
    with contextlib.suppress(OSError):  # a reaper that died cannot help; Vigil's own clean-up still runs
        os.write(fd, line.encode())


def watch_group(pgid: int) -> None:
    if ensure_reaper():
        _send(f"+{pgid}\n")


def unwatch_group(pgid: int) -> None:
    _send(f"-{pgid}\n")


def watch_placeholder(path: str) -> None:
    """An empty directory the sandbox creates in the project as a mount point (`.mcp.json/` …):
    if Vigil dies before it removes it, the reaper does, once the sandbox is gone (if still empty)."""
    if ensure_reaper():
        _send(f"d{os.fsencode(path).hex()}\n")


def unwatch_placeholder(path: str) -> None:
    _send(f"u{os.fsencode(path).hex()}\n")
