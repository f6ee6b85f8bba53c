"""The hook scripts as they were when the session started: before a hook runs, every script its
command names is checked to be still the same file: the same real path, device, inode, size
and change time (ctime, which no program can set back). A script that changed since (the
folder swapped, the file replaced by a command that got past the sandbox, a script that did not
exist yet and appeared) is not run: the hook fails visibly and decides nothing, like one that
could not start (docs/architecture.md, the security boundary). Restart Vigil to use a script you
changed on purpose.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

#: the digest of a path that is not a readable file
MISSING = "missing"


def digest(path: str) -> str:
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except (OSError, ValueError):
        return MISSING
    return f"{real}:{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_ctime_ns}:{st.st_mode:o}"


def seal(paths: Iterable[str]) -> dict[str, str]:
    return {path: digest(path) for path in dict.fromkeys(paths)}


def broken(sealed: Mapping[str, str]) -> str | None:
    """The first sealed path whose content is not what it was, or None."""
    return next((path for path, was in sealed.items() if digest(path) != was), None)
