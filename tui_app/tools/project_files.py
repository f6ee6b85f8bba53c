"""The files of a project as the user sees them: what `rg --files` lists (its .gitignore files
respected, hidden files and .git left out), relative to the root, sorted. Used by the `@` picker
and the file tree; the Python walk of the Grep tool stands in when there is no rg.

The listing runs in a child process of its own group with a deadline, so a project on a slow or
huge disk never holds anything up for long: what was listed by then is returned, marked partial.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

from tui_app.tools.grep.python_backend import Filters, walk
from tui_app.tools.grep.rg_backend import find_rg

#: the same ignore files as Grep (see rg_backend.BASE_ARGS): .gitignore in and above the tree
RG_FILES_ARGS = ("--files", "--no-config", "--no-require-git", "--no-ignore-global", "--no-ignore-exclude",
                 "--no-ignore-dot", "--no-messages", "--null")
DEFAULT_LIMIT = 500_000
DEFAULT_DEADLINE_S = 20.0


@dataclass(frozen=True)
class ProjectFiles:
    root: str
    #: paths relative to the root, "/"-separated, sorted
    paths: list[str]
    #: the listing stopped early (the limit or the deadline)
    partial: bool = False
    backend: str = "rg"


def list_project_files(root: str, *, limit: int = DEFAULT_LIMIT, deadline_s: float = DEFAULT_DEADLINE_S,
                       rg: str | None = None) -> ProjectFiles:
    rg = rg if rg is not None else find_rg()
    if rg:
        return _with_rg(rg, root, limit, deadline_s)
    return _with_walk(root, limit, deadline_s)


def _with_rg(rg: str, root: str, limit: int, deadline_s: float) -> ProjectFiles:
    process = subprocess.Popen([rg, *RG_FILES_ARGS], cwd=root, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, start_new_session=True)
    timer = threading.Timer(deadline_s, _kill_group, args=(process,))
    timer.daemon = True
    timer.start()
    chunks: list[bytes] = []
    size = 0
    partial = False
    try:
        assert process.stdout is not None
        while True:
            chunk = process.stdout.read(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += chunk.count(b"\0")
            if size >= limit:
                partial = True
                _kill_group(process)
                break
    finally:
        timer.cancel()
        if process.poll() is None:
            _kill_group(process)
        process.wait()
    if process.returncode not in (0, 1) and not partial:
        partial = process.returncode < 0  # killed by the deadline
    raw = b"".join(chunks).split(b"\0")
    names = [os.fsdecode(p) for p in raw if p]
    names = [p[2:] if p.startswith("./") else p for p in names[:limit]]
    if os.sep != "/":
        names = [p.replace(os.sep, "/") for p in names]
    names.sort()
    return ProjectFiles(root, names, partial, "rg")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _with_walk(root: str, limit: int, deadline_s: float) -> ProjectFiles:
    stop = threading.Event()
    ends = time.monotonic() + deadline_s
    names: list[str] = []
    partial = False
    for path in walk(Filters(root, None, None), stop):
        names.append(os.path.relpath(path, root).replace(os.sep, "/"))
        if len(names) >= limit or (len(names) % 1000 == 0 and time.monotonic() > ends):
            partial = True
            stop.set()
            break
    names.sort()
    return ProjectFiles(root, names, partial, "walk")


def with_directories(paths: list[str]) -> list[str]:
    """The files and every directory above them ("src/", "src/app/"), sorted."""
    directories: set[str] = set()
    for path in paths:
        cut = path.rfind("/")
        while cut > 0:
            directory = path[:cut + 1]
            if directory in directories:
                break
            directories.add(directory)
            cut = path.rfind("/", 0, cut)
    return sorted([*paths, *directories])
