"""Where the host listens and what it locks.

The socket is `$XDG_RUNTIME_DIR/vigil/host.sock`, else `VIGIL_HOME/host.sock`; when `VIGIL_HOME` is
set its own socket is used, so every `VIGIL_HOME` (a test's, a second profile) has its own host.
The lock (`VIGIL_HOME/host.lock`) is always under `VIGIL_HOME`: one host per home.
"""

from __future__ import annotations

import os
from pathlib import Path

from tui_app.runtime.log.paths import vigil_home

#: sun_path holds 108 bytes on Linux, the last one a NUL
SUN_PATH_MAX = 107


class SocketPathTooLong(Exception):
    """The socket's path does not fit in sun_path: told to the user with what to do about it."""


def socket_path() -> Path:
    if os.environ.get("VIGIL_HOME"):
        return vigil_home() / "host.sock"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "vigil" / "host.sock"
    return vigil_home() / "host.sock"


def lock_path() -> Path:
    return vigil_home() / "host.lock"


def log_path() -> Path:
    """The host's own stderr (the sessions log to their own files)."""
    return vigil_home() / "host.log"


def hosted_path(session_id: str) -> Path:
    """How a hosted session was started (to resume it after a crash)."""
    from tui_app.runtime.log.paths import session_dir

    return session_dir(session_id) / "hosted.json"


def checked(path: Path) -> str:
    """`path` as a string a Unix socket can be bound to or connected to; SocketPathTooLong if not."""
    text = os.fsencode(str(path))
    if len(text) > SUN_PATH_MAX:
        raise SocketPathTooLong(
            f"the host's socket path {path} is {len(text)} bytes, longer than a Unix socket allows "
            f"({SUN_PATH_MAX}): set VIGIL_HOME (or XDG_RUNTIME_DIR) to a shorter directory"
        )
    return str(path)
