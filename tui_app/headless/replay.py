"""`vigil replay ID`: print a recorded session from its log, as text or stream-json.

Nothing is executed and no model is called: the log is the session, and the printers are the same
ones a live headless run uses, fed with the recorded events instead of live ones.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import IO, Any

from tui_app.headless.stream_json import OutputFormat, Transcript
from tui_app.headless.transcript import transcript_printer
from tui_app.runtime.agent import TurnResult
from tui_app.runtime.events import AgentConnected, SessionStarted, ToolMenu, TurnEnded, TurnStarted
from tui_app.runtime.log.catalog import UnknownSession, resolve_session_id
from tui_app.runtime.log.eventlog import read_events
from tui_app.runtime.log.paths import events_path
from tui_app.runtime.messages import ToolDefinition
from tui_app.runtime.results.sanitize import neutralize

UNFINISHED = "The recording ends before this turn did (the session was cut short)."


@dataclass
class _Model:
    model: str = ""
    provider: str = ""


@dataclass
class RecordedSession:
    """What the printers ask of a session, taken from the log."""

    id: str
    cwd: str = ""
    permission_mode: str = "default"
    model: _Model = field(default_factory=_Model)
    tool_menu: list[ToolDefinition] = field(default_factory=list)

    @property
    def model_name(self) -> str:
        return self.model.model

    @property
    def provider_name(self) -> str:
        return self.model.provider

    #: a replay prices nothing
    base_url: str | None = None

    def started(self, event: SessionStarted) -> None:
        self.cwd, self.permission_mode = event.cwd, event.permission_mode
        self.model = _Model(event.model, event.provider)


def replay(session_id: str, fmt: OutputFormat = "text", out: IO[str] | None = None,
           err: IO[str] | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        session_id = resolve_session_id(session_id)
    except UnknownSession as exc:
        err.write(neutralize(f"vigil: {exc}") + "\n")
        return 2
    path = events_path(session_id)
    read = read_events(path)
    for warning in read.warnings:
        err.write(f"vigil: {neutralize(warning)}\n")
    printer = _stream_json if fmt == "stream-json" else _text
    printer(session_id, read.events, out)
    return 0


def _text(session_id: str, events: list[Any], out: IO[str]) -> None:
    show = transcript_printer(out)
    open_turn = False
    for event in events:
        if isinstance(event, SessionStarted):
            verb = "resumed" if event.resumed_from else "started"
            out.write(f"Session {session_id} {verb} · {event.provider} {neutralize(event.model)} · "
                      f"{neutralize(event.cwd)}\n")
        elif isinstance(event, AgentConnected) and (event.capabilities is None or event.capabilities.own_tools):
            out.write(f"{neutralize(event.agent)} {neutralize(event.version)} · model {neutralize(event.model)} · "
                      f"its session {neutralize(event.agent_session_id)}\n")
        elif isinstance(event, TurnStarted):
            open_turn = True
            out.write(f"\n> {neutralize(event.prompt)}\n")
        elif isinstance(event, TurnEnded):
            open_turn = False
            line = f"[{event.reason}] {event.steps} model steps"
            out.write(f"{line} · {neutralize(event.message)}\n" if event.message else f"{line}\n")
        else:
            show(event)
    if open_turn:
        out.write(f"[cut short] {UNFINISHED}\n")
    out.flush()


def _stream_json(session_id: str, events: list[Any], out: IO[str]) -> None:
    session = RecordedSession(session_id)
    transcript = Transcript(session, "stream-json", out)  # type: ignore[arg-type]
    pending_init = False
    turn: TurnResult | None = None
    step_text: list[str] = []
    for event in events:
        if isinstance(event, SessionStarted):
            session.started(event)
            pending_init = True  # once the run's tool menu is known
            continue
        if isinstance(event, ToolMenu):
            session.tool_menu = list(event.tools)
            if not pending_init:
                continue
        if pending_init:
            transcript.init_line()
            pending_init = False
        if isinstance(event, ToolMenu):
            continue
        if isinstance(event, TurnStarted):
            turn = TurnResult(turn_id=event.turn_id or "", reason="error")
            transcript.write({"type": "user", "session_id": session_id, "message": {
                "role": "user", "content": [{"type": "text", "text": event.prompt}]}})
            continue
        transcript.on_event(event)
        if turn is None:
            continue
        if event.type == "ModelStepStarted":
            step_text = []
        elif event.type == "AssistantText":
            step_text.append(event.text)
        elif event.type == "ModelStepEnded" and step_text:
            turn.text = "".join(step_text)
        elif isinstance(event, TurnEnded):
            turn.reason, turn.steps, turn.usage = event.reason, event.steps, dict(event.usage)
            turn.error = event.message or None
            transcript.write(transcript.result_object(turn, event.duration_ms))
            transcript.denials = []
            turn = None
    if pending_init:
        transcript.init_line()
    if turn is not None:
        turn.error = UNFINISHED
        transcript.write(transcript.result_object(turn, 0))
