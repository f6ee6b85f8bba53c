"""One open per access: a file tool opens a path once and then only uses what it opened.

Checking a path and opening it again lets anything that runs meanwhile (a background command, a
sandboxed build) swap a symlink or a directory in between: the check sees one file, the read or
the write gets another. So a read opens the file once (`O_PATH`, nothing is read yet, a FIFO
never blocks), asks the kernel what it opened (`/proc/self/fd/N`: the real path, whatever links
led there) and `fstat`s it (device, inode, link count); the caller checks *that*, and the bytes
come from the same inode (reopened through `/proc/self/fd/N`, which cannot be swapped).

A write walks to the file's directory one component at a time from `/` (`openat` with
`O_NOFOLLOW | O_DIRECTORY`): a symlink on the way is read with `readlinkat` and followed by the
walk itself, so the directory the walk ends in is a descriptor, not a name. The current content
is opened in that directory with `O_NOFOLLOW`, the new content goes into a temp file created in
it (`O_TMPFILE`, or `O_EXCL`), and `renameat` puts it over the name, directory descriptor to
directory descriptor. A link flipped during the write can change nothing: the rename replaces a
name in the checked directory and never follows a link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from dataclasses import dataclass

_O_PATH = getattr(os, "O_PATH", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
#: symlinks followed in one walk before it gives up (the kernel's own limit)
MAX_LINKS = 40


class PathChanged(OSError):
    """What a walk or an open found is not what it can safely use (a link where none may be)."""


@dataclass(frozen=True)
class Identity:
    """What a descriptor names: the real path and the inode behind it."""

    real: str
    device: int
    inode: int
    links: int
    mode: int

    @property
    def regular(self) -> bool:
        return stat.S_ISREG(self.mode)

    @property
    def directory(self) -> bool:
        return stat.S_ISDIR(self.mode)


_PROC = os.path.isdir("/proc/self/fd")
#: macOS names a descriptor's path with fcntl(F_GETPATH) instead of /proc
_F_GETPATH = 50 if sys.platform == "darwin" else 0


def fd_path(fd: int) -> str:
    """The kernel's real path of an open descriptor ('' when it cannot tell, or it was deleted)."""
    if not _PROC:
        return _fd_path_by_fcntl(fd)
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""
    if not target.startswith("/") or target.endswith(" (deleted)"):
        return ""
    return target


def _fd_path_by_fcntl(fd: int) -> str:
    if not _F_GETPATH:
        return ""  # no way to ask: the checks refuse what they cannot name (fail closed)
    import fcntl

    try:
        raw = fcntl.fcntl(fd, _F_GETPATH, bytes(1024))
    except OSError:
        return ""
    return os.fsdecode(raw.split(b"\0", 1)[0])


def identity(fd: int) -> Identity:
    info = os.fstat(fd)
    return Identity(fd_path(fd), info.st_dev, info.st_ino, info.st_nlink, info.st_mode)


class OpenedFile:
    """A file opened once for reading: `who` says what it is; `read_handle()` reads that inode."""

    def __init__(self, path: str) -> None:
        self.path = path
        flags = (_O_PATH or os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY) | os.O_CLOEXEC
        self._fd = os.open(path, flags)
        try:
            self.who = identity(self._fd)
        except BaseException:
            os.close(self._fd)
            raise

    def read_handle(self):  # type: ignore[no-untyped-def]
        """A binary file object on the very inode that was opened and checked."""
        if not self.who.regular:
            raise PathChanged(errno.EINVAL, "not a regular file", self.path)
        # through /proc the same inode is opened again for reading (an O_PATH descriptor cannot read)
        fd = os.open(f"/proc/self/fd/{self._fd}", os.O_RDONLY | os.O_CLOEXEC) if _O_PATH else os.dup(self._fd)
        return os.fdopen(fd, "rb")

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> OpenedFile:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _components(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


class Place:
    """Where a write lands: a directory descriptor and a name in it (not a symlink when walked)."""

    def __init__(self, dir_fd: int, name: str) -> None:
        self.dir_fd = dir_fd
        self.name = name

    @property
    def directory(self) -> str:
        return fd_path(self.dir_fd)

    @property
    def real(self) -> str:
        """The real path the write would land at, asked of the directory descriptor now."""
        directory = self.directory
        return os.path.join(directory, self.name) if directory else ""

    def open_current(self) -> tuple[bytes, Identity] | None:
        """The file's bytes and identity now, opened by name in the walked directory without
        following a link; None when there is no such file."""
        try:
            fd = os.open(self.name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | _O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=self.dir_fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathChanged(errno.ELOOP, "became a symbolic link while it was written",
                                  self.name) from None
            raise
        with os.fdopen(fd, "rb") as handle:
            who = identity(fd)
            if not who.regular:
                return b"", who
            return handle.read(), who

    def close(self) -> None:
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1

    def __enter__(self) -> Place:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def walk_to(path: str, *, make_dirs: bool = False) -> Place:
    """Walk an absolute path from `/`, one `openat(O_NOFOLLOW | O_DIRECTORY)` per directory,
    following each symlink met (the last component's too) by reading it, never by name. Missing
    directories are made on the way when `make_dirs`."""
    if not os.path.isabs(path):
        raise ValueError(f"not an absolute path: {path}")
    pending = _components(path)
    if not pending:
        raise IsADirectoryError(errno.EISDIR, "is a directory", path)
    fd = os.open("/", _O_PATH | _O_DIRECTORY | os.O_CLOEXEC)
    links = 0
    try:
        while True:
            name = pending.pop(0)
            if name == ".." or pending:
                try:
                    following = os.open(name, _O_PATH | _O_DIRECTORY | _O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                except FileNotFoundError:
                    if not make_dirs or name == "..":
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, dir_fd=fd)
                    pending.insert(0, name)
                    continue
                except OSError as exc:
                    if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                        raise
                    target = _link_of(name, fd)
                    if target is None:
                        raise NotADirectoryError(errno.ENOTDIR, "a parent is not a directory", path) from None
                    links += 1
                    if links > MAX_LINKS:
                        raise OSError(errno.ELOOP, "too many levels of symbolic links", path) from None
                    fd = _restart(fd, target)
                    pending[:0] = _components(target)
                    continue
                os.close(fd)
                fd = following
                if not pending:
                    raise IsADirectoryError(errno.EISDIR, "is a directory", path)
                continue
            target = _link_of(name, fd)
            if target is None:
                return Place(fd, name)
            links += 1
            if links > MAX_LINKS:
                raise OSError(errno.ELOOP, "too many levels of symbolic links", path)
            fd = _restart(fd, target)
            pending[:0] = _components(target)
            if not pending:
                raise IsADirectoryError(errno.EISDIR, "is a directory", path)
    except BaseException:
        os.close(fd)
        raise


def _link_of(name: str, dir_fd: int) -> str | None:
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOENT):
            return None  # not a link (or nothing there yet)
        raise


def _restart(fd: int, target: str) -> int:
    """An absolute link target starts the walk again at `/`; a relative one goes on where it is."""
    if not target.startswith("/"):
        return fd
    os.close(fd)
    return os.open("/", _O_PATH | _O_DIRECTORY | os.O_CLOEXEC)
