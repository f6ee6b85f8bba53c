"""Working directories: the session's cwd plus `permissions.additionalDirectories`, `--add-dir` and
the "Add directory" action. Outside them every read and every write asks, in every mode but
bypassPermissions (Claude Code's rule); acceptEdits lets edits run only inside them; the sandbox
makes them (and nothing else but a private /tmp) writable.

A path is inside when every spelling of it is: the absolute one (`~` expanded, each `..` taken
after the links before it, as the kernel does) and the real one (symlinks resolved), so
`link-to-etc/passwd` and `sub/../../x` are outside, and a sibling `proj-evil/` is never inside
`proj/` (the check is per path component, not a prefix of the string). Readable-only roots (the
session's own artifacts) count for reads, never for writes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable

from tui_app.runtime.files.realpath import kernel_absolute
from tui_app.runtime.permissions.path_rules import nfc


def inside(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


class WorkingDirs:
    def __init__(self, cwd: str, additional: Iterable[str] = (), readable: Iterable[str] = ()) -> None:
        self.cwd = os.path.normpath(os.path.abspath(cwd))
        self._lock = threading.Lock()
        self._dirs: tuple[str, ...] = ()
        self._readable: tuple[str, ...] = ()
        self.add([self.cwd, *additional])
        self.add_readable(readable)

    # ---- the lists ------------------------------------------------------------------------------

    @property
    def dirs(self) -> tuple[str, ...]:
        """The working directories as given (normalised, absolute), cwd first."""
        return self._dirs

    @property
    def roots(self) -> tuple[str, ...]:
        """Every spelling of every working directory (as given, and real)."""
        return tuple(dict.fromkeys(s for d in self._dirs for s in self.spellings(d)))

    @property
    def readable_roots(self) -> tuple[str, ...]:
        return self.roots + tuple(dict.fromkeys(s for d in self._readable for s in self.spellings(d)))

    def spellings(self, directory: str) -> tuple[str, str]:
        """A directory as given (`~`, relative to the cwd) and as it really is."""
        path = kernel_absolute(os.path.join(self.cwd, os.path.expanduser(directory)))
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            real = path
        return nfc(path), nfc(real)

    def add(self, directories: Iterable[str]) -> list[str]:
        """Add working directories; returns the ones that were new."""
        added = []
        with self._lock:
            for directory in directories:
                path = self.spellings(directory)[0]
                if path not in self._dirs:
                    self._dirs += (path,)
                    added.append(path)
        return added

    def add_readable(self, directories: Iterable[str]) -> None:
        with self._lock:
            for directory in directories:
                path = self.spellings(directory)[0]
                if path not in self._readable:
                    self._readable += (path,)

    def remove(self, directories: Iterable[str]) -> None:
        """Drop working directories (the cwd always stays)."""
        gone = {self.spellings(d)[0] for d in directories} - {self.cwd}
        with self._lock:
            self._dirs = tuple(d for d in self._dirs if d not in gone)

    # ---- questions --------------------------------------------------------------------------------

    def contains(self, paths: tuple[str, ...]) -> bool:
        """Every spelling of one path (see `path_rules.spellings`) is inside a working directory."""
        roots = self.roots
        return bool(paths) and all(inside(p, roots) for p in paths)

    def may_read(self, paths: tuple[str, ...]) -> bool:
        roots = self.readable_roots
        return bool(paths) and all(inside(p, roots) for p in paths)

    def describe(self) -> str:
        return ", ".join(self._dirs)
