"""Where Vigil keeps things: `VIGIL_HOME` or the platform's user data dir."""

from __future__ import annotations

import os
from pathlib import Path


def vigil_home() -> Path:
    override = os.environ.get("VIGIL_HOME")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("vigil", appauthor=False))


def sessions_dir() -> Path:
    return vigil_home() / "sessions"


def session_dir(session_id: str) -> Path:
    return sessions_dir() / session_id


def events_path(session_id: str) -> Path:
    return session_dir(session_id) / "events.jsonl"
