"""The recorded sessions under `VIGIL_HOME/sessions/`: what each one was, read from its log.

A summary needs only a few events of a log, so lines are filtered on their `type` before any JSON
is parsed: listing hundreds of long sessions stays quick. A log that cannot be read at all is
listed with status `unreadable` rather than hidden.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from tui_app.runtime.events import parse_event
from tui_app.runtime.log.eventlog import read_incomplete
from tui_app.runtime.log.paths import sessions_dir
from tui_app.runtime.processes.session_lock import holder

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_WANTED = (b'"type":"SessionStarted"', b'"type":"TurnStarted"', b'"type":"TurnEnded"',
           b'"type":"SessionEnded"', b'"type":"AgentConnected"')


def valid_session_id(session_id: str) -> bool:
    """A session id is one safe path component (it names a directory under VIGIL_HOME)."""
    return bool(_SESSION_ID.fullmatch(session_id)) and ".." not in session_id


class UnknownSession(ValueError):
    """No recorded session has that id (or the prefix names several): the message says which."""


def resolve_session_id(given: str, root: Path | None = None) -> str:
    """The recorded session `given` names: its exact id, or the one id it is a unique prefix of
    (ids are long; `vigil replay 20261204-2007` is enough when only one starts so)."""
    root = root or sessions_dir()
    if not given or not valid_session_id(given):
        found = []
    elif (root / given / "events.jsonl").is_file():
        return given
    else:
        try:
            found = sorted(d.name for d in root.iterdir()
                           if d.name.startswith(given) and (d / "events.jsonl").is_file())
        except OSError:
            found = []
    if len(found) == 1:
        return found[0]
    if not found:
        raise UnknownSession(f"no recorded session {given!r} in {root} (see `vigil sessions`)")
    shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    raise UnknownSession(f"{given!r} names {len(found)} sessions ({shown}): give more of the id")


@dataclass(frozen=True)
class SessionSummary:
    id: str
    path: Path
    started: float | None = None
    cwd: str = ""
    provider: str = ""
    model: str = ""
    first_prompt: str = ""
    turns: int = 0
    #: the last turn's end (completed, error, interrupted …), `running` while a Vigil writes it,
    #: `cut short` when a turn started and never ended (a crash), `log incomplete: disk full` when
    #: its log could not be written, `no turns`, or `unreadable`
    status: str = "no turns"
    #: the process writing it now, when one is
    writer_pid: int | None = None


def summarize(session_id: str, path: Path) -> SessionSummary:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return SessionSummary(session_id, path, status="unreadable")
    started: float | None = None
    cwd = provider = model = prompt = ""
    turns, status, open_turn = 0, "no turns", False
    for line in data.split(b"\n"):
        if not any(marker in line for marker in _WANTED):
            continue
        try:
            event = parse_event(line)
        except (ValidationError, ValueError):
            continue  # a torn line: the reader of the full log reports it
        if event.type == "SessionStarted":
            if started is None:
                started, cwd = event.ts, event.cwd
            provider, model = event.provider, event.model
        elif event.type == "AgentConnected":
            model = event.model or model  # an external agent names its model once it runs
        elif event.type == "TurnStarted":
            turns += 1
            open_turn = True
            prompt = prompt or event.prompt
        elif event.type == "TurnEnded":
            open_turn, status = False, event.reason
    writer = holder(path)
    incomplete = read_incomplete(path)
    if incomplete is not None:
        status = f"log incomplete: {incomplete}"
    elif writer is not None:
        status = "running"
    elif open_turn:
        status = "cut short"
    return SessionSummary(session_id, path, started, cwd, provider, model, prompt, turns, status, writer)


def list_sessions(root: Path | None = None) -> list[SessionSummary]:
    """Every recorded session, newest first."""
    root = root or sessions_dir()
    if not root.is_dir():
        return []
    found = []
    for entry in root.iterdir():
        log = entry / "events.jsonl"
        if valid_session_id(entry.name) and log.is_file():
            found.append(summarize(entry.name, log))
    return sorted(found, key=lambda s: (s.started or 0.0, s.id), reverse=True)
