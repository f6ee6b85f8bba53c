"""Atomic file writes that leave nothing behind in the user's tree, even after kill -9.

The target's directory is walked to once (`opened.walk_to`: one `openat` per component, links
followed by reading them) and everything happens in that directory's descriptor. The new content
goes into an *unnamed* file in the target's directory (`O_TMPFILE`, same file
system, so the final rename stays atomic): a crash while it is written, however long that takes
for a big file, leaves nothing at all. Only once it is complete and fsynced does it get a name,
`.NAME.vigil-XXXX.tmp`, for the microseconds until it is renamed over the target. Where the file
system has no `O_TMPFILE` (some network and FUSE file systems) the temp file is named from the
start.

Either way, a name that exists is first written down in a journal kept per process under
`VIGIL_HOME/pending-writes/` (held with `flock` while the process lives). The next Vigil to start
sweeps the journals whose process is gone, removes the temp files they list, and says so.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import os
import secrets
import stat
import threading
from pathlib import Path

from tui_app.runtime.files.opened import Place, walk_to
from tui_app.runtime.log.paths import vigil_home

_O_TMPFILE = getattr(os, "O_TMPFILE", 0)
_AT_EMPTY_PATH = 0x1000
#: whether unnamed files work here (turned off at the first sign they do not)
_unnamed: dict[str, object] = {"usable": bool(_O_TMPFILE) and os.path.isdir("/proc/self")}
#: errors that mean "this file system cannot make unnamed files", not "this write failed"
_NO_TMPFILE = {errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT}


def journal_dir() -> Path:
    return vigil_home() / "pending-writes"


class _Journal:
    """This process's list of temp files that exist right now (lines `+path` / `-path`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd = -1
        self._pid = 0
        self._path: Path | None = None
        self._open_names: set[str] = set()

    def _open(self) -> int:
        if self._fd >= 0 and self._pid == os.getpid():
            return self._fd
        directory = journal_dir()
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / f"{os.getpid()}.journal", os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                     0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # while held, sweepers know we live
        if self._pid == 0:
            atexit.register(self.close)
        self._fd, self._pid = fd, os.getpid()
        self._path = directory / f"{os.getpid()}.journal"
        return fd

    def note(self, sign: str, path: str) -> None:
        with self._lock:
            if sign == "+":
                self._open_names.add(path)
            else:
                self._open_names.discard(path)
            with contextlib.suppress(OSError):  # no journal: the write itself still goes on
                os.write(self._open(), f"{sign}{path}\n".encode("utf-8", "surrogateescape"))

    def close(self) -> None:
        """At a normal exit nothing is pending: the journal goes."""
        with self._lock:
            if self._fd < 0 or self._pid != os.getpid():
                return
            if not self._open_names and self._path is not None:
                with contextlib.suppress(OSError):
                    self._path.unlink()
            os.close(self._fd)
            self._fd = -1


_journal = _Journal()


def write_atomically(path: str, data: bytes, mode: int | None) -> int:
    """Write `data` to `path` so that a reader (and a crash) only ever sees the old file or the
    new one. A symlink keeps pointing at its file, which is what changes; an existing file keeps
    its mode, a new one gets 0o666 less the umask. Returns the new mtime_ns."""
    with walk_to(path, make_dirs=True) as place:
        return write_in(place, data, mode)


def write_in(place: Place, data: bytes, mode: int | None) -> int:
    """Write `data` over `place.name` in the walked directory: the temp file is made in that
    directory's descriptor and renamed there, so no link met on the way can redirect it."""
    directory = place.directory or "."
    temp_name = f".{place.name}.vigil-{secrets.token_hex(4)}.tmp"
    temp = os.path.join(directory, temp_name)
    new_mode = 0o666 if mode is None else 0o600
    named = False
    try:
        mtime_ns = _write_unnamed(place.dir_fd, temp_name, temp, data, mode, new_mode)
        if mtime_ns is None:
            _journal.note("+", temp)
            named = True
            fd = os.open(temp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, new_mode,
                         dir_fd=place.dir_fd)
            try:
                _fill(fd, data, mode)
                mtime_ns = os.fstat(fd).st_mtime_ns
            finally:
                os.close(fd)
        else:
            named = True
        os.replace(temp_name, place.name, src_dir_fd=place.dir_fd, dst_dir_fd=place.dir_fd)
    except BaseException:
        if named:
            with contextlib.suppress(OSError):
                os.unlink(temp_name, dir_fd=place.dir_fd)
        raise
    finally:
        if named:
            _journal.note("-", temp)
    return mtime_ns


def _write_unnamed(dir_fd: int, temp_name: str, temp: str, data: bytes, mode: int | None,
                   new_mode: int) -> int | None:
    """The content in an unnamed file, then named `temp_name`; None where that cannot be done here."""
    if not _unnamed["usable"]:
        return None
    try:
        fd = os.open(".", _O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, new_mode, dir_fd=dir_fd)  # umask applies
    except OSError as exc:
        if exc.errno in _NO_TMPFILE:
            _unnamed["usable"] = False
            return None
        raise
    try:
        _fill(fd, data, mode)
        mtime_ns = os.fstat(fd).st_mtime_ns
        _journal.note("+", temp)
        if not _link(fd, dir_fd, temp_name):
            _journal.note("-", temp)
            _unnamed["usable"] = False
            return None
        return mtime_ns
    finally:
        os.close(fd)


def _link(fd: int, dir_fd: int, name: str) -> bool:
    """Give the unnamed file behind `fd` a name in `dir_fd`: linkat(AT_EMPTY_PATH), else through /proc."""
    linkat = _libc_linkat()
    if linkat is not None and linkat(fd, b"", dir_fd, os.fsencode(name), _AT_EMPTY_PATH) == 0:
        return True
    try:
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)
        return True
    except OSError as exc:
        if exc.errno in (errno.EXDEV, errno.EPERM, errno.ENOENT, errno.EACCES, errno.EINVAL):
            return False
        raise


def _libc_linkat():  # type: ignore[no-untyped-def]
    if "linkat" not in _unnamed:
        try:
            import ctypes

            function = ctypes.CDLL(None, use_errno=True).linkat
            function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
            function.restype = ctypes.c_int
            _unnamed["linkat"] = function
        except (OSError, AttributeError):
            _unnamed["linkat"] = None
    return _unnamed["linkat"]


def _fill(fd: int, data: bytes, mode: int | None) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    if mode is not None:
        os.fchmod(fd, stat.S_IMODE(mode))
    os.fsync(fd)


def sweep_interrupted_writes() -> list[str]:
    """Remove the temp files of writes whose process died mid-write; the paths removed."""
    removed: list[str] = []
    try:
        journals = list(journal_dir().glob("*.journal"))
    except OSError:
        return removed
    for journal in journals:
        try:
            fd = os.open(journal, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its process is alive and may be writing right now
            pending: dict[str, None] = {}
            for line in journal.read_bytes().decode("utf-8", "surrogateescape").splitlines():
                if line.startswith("+"):
                    pending[line[1:]] = None
                elif line.startswith("-"):
                    pending.pop(line[1:], None)
            for temp in pending:
                if os.path.basename(temp).startswith(".") and temp.endswith(".tmp"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(temp)
                        removed.append(temp)
            with contextlib.suppress(OSError):
                journal.unlink()
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed
