"""One writer per session: an exclusive `flock` on a file next to the session's log.

The kernel drops the lock when the holder dies, however it dies (kill -9 included), so a crashed
session can always be resumed and a live one never gets a second writer. The holder's PID is
written into the lock file, so the refusal can say who holds it. The descriptor is
close-on-exec: a child process never inherits (and so never keeps) the lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path


class SessionInUse(Exception):
    """Another process writes this session's log."""

    def __init__(self, session_id: str, pid: int | None) -> None:
        holder = f"process {pid}" if pid else "another process"
        super().__init__(f"session {session_id} is open in another Vigil ({holder}); only one Vigil may "
                         f"write a session at a time. See it read-only with `vigil replay {session_id}`.")
        self.session_id = session_id
        self.pid = pid


def lock_path(log_path: str | Path) -> Path:
    log_path = Path(log_path)
    return log_path.with_name(log_path.name + ".lock")


def _recorded_pid(fd: int) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        data = os.pread(fd, 32, 0)
        return int(data.split()[0]) if data.strip() else None
    return None


class SessionLock:
    def __init__(self, log_path: str | Path, session_id: str) -> None:
        self.path = lock_path(log_path)
        self.session_id = session_id
        self._fd = -1

    @property
    def held(self) -> bool:
        return self._fd >= 0

    def acquire(self) -> None:
        """Take the lock or raise SessionInUse naming the holder. Idempotent."""
        if self._fd >= 0:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _recorded_pid(fd)
            os.close(fd)
            raise SessionInUse(self.session_id, pid) from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        with contextlib.suppress(OSError):  # a full disk may refuse the PID; the lock itself holds
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = -1


def holder(log_path: str | Path) -> int | None:
    """The PID of the process writing this log now (0 when it is held but the PID is unknown),
    or None when nobody holds it. A probe: takes and drops a shared lock, never waits."""
    path = lock_path(log_path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _recorded_pid(fd) or 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
