"""Where a recorded session ran and how it was set when it stopped: its cwd, its working
directories and its permission mode, read from its log. A resumed session goes on there and so
(docs/architecture.md §8: the log is the single source of truth)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tui_app.runtime.log.eventlog import read_events


@dataclass(frozen=True)
class ResumePoint:
    cwd: str
    permission_mode: str
    #: the working directories beside the cwd (--add-dir, "Add directory", a hook's addDirectories)
    directories: tuple[str, ...] = field(default_factory=tuple)


def resume_point(log: Path) -> ResumePoint | None:
    """None when the log records no start (nothing to go on from)."""
    cwd = mode = None
    directories: tuple[str, ...] = ()
    for event in read_events(log).events:
        if event.type == "SessionStarted":
            cwd = cwd or event.cwd  # a resumed session records a start each time: the first is where it ran
            mode = event.permission_mode
            directories = tuple(event.directories)
        elif event.type == "PermissionModeChanged":
            mode = event.mode
        elif event.type == "WorkingDirectoriesChanged":
            directories = tuple(d for d in event.directories if d != cwd)
    if cwd is None:
        return None
    return ResumePoint(cwd=cwd, permission_mode=mode or "default", directories=directories)
