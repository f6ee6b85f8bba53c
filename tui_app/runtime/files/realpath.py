"""The real path of a file, asked of the kernel when it can answer.

`os.path.realpath` walks the path in Python, one `lstat` (and `readlink`) per component; a call's
permission check and its file state each need the real path, so that walk was a large part of a
Read's cost. On Linux an existing path is opened with O_PATH (nothing is read, nothing blocks on a
FIFO) and `/proc/self/fd/N` names what the kernel resolved: the same answer in three system calls.
Anything else (no /proc, a path that does not exist, a dangling link, another platform) takes
`os.path.realpath`, whose answer stands.
"""

from __future__ import annotations

import os

_O_PATH = getattr(os, "O_PATH", 0)
_FAST = _O_PATH != 0 and os.path.isdir("/proc/self/fd")


def real_path(path: str) -> str:
    if _FAST and path:
        try:
            fd = os.open(path, _O_PATH | os.O_CLOEXEC)
        except (OSError, ValueError):
            return os.path.realpath(path)
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        finally:
            os.close(fd)
        # a file deleted meanwhile reads "… (deleted)"; only a plain absolute path is an answer
        if target.startswith("/") and not target.endswith(" (deleted)"):
            return target
    return os.path.realpath(path)


def kernel_absolute(path: str) -> str:
    """An absolute path with its `..` taken as the kernel takes them: after the symlink before
    each one. `link/../x` names `x` beside the link's *target*, never beside the link, so a
    lexical normalisation would check one file and let the kernel open another. The part after
    the last `..` holds none and is only tidied (`.`, doubled slashes)."""
    parts = path.split("/")
    if ".." not in parts:
        return os.path.normpath(path)
    last = len(parts) - 1 - parts[::-1].index("..")
    head = "/".join(parts[: last + 1]) or "/"
    rest = "/".join(parts[last + 1 :])
    resolved = real_path(head)
    return os.path.normpath(os.path.join(resolved, rest)) if rest.strip("/") else resolved
