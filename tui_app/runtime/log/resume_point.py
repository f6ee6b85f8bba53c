"""Where a recorded session ran and how it was set when it stopped: its cwd, its working
directories, its permission mode and its external agent's own session id, read from its log in one
pass. A resumed session goes on there and so
(docs/architecture.md §8: the log is the single source of truth)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tui_app.runtime.log.eventlog import read_events


@dataclass(frozen=True)
class ResumePoint:
    #: "" when the log records no start (nothing to go on from)
    cwd: str
    permission_mode: str
    #: the working directories beside the cwd (--add-dir, "Add directory", a hook's addDirectories)
    directories: tuple[str, ...] = field(default_factory=tuple)
    #: the external agent's own session id, as the log last recorded it (for its --resume)
    agent_session_id: str | None = None


def resume_point(log: Path) -> ResumePoint:
    cwd = mode = agent_session_id = None
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
        elif event.type == "AgentConnected" and event.agent_session_id:
            agent_session_id = event.agent_session_id
    return ResumePoint(cwd=cwd or "", permission_mode=mode or "default", directories=directories,
                       agent_session_id=agent_session_id)
