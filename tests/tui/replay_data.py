"""Recorded sessions for the replay tests: what a session's log holds (no text deltas: they are
never logged), with fixed ids and times, written through the real log writer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tui.session_data import CWD, SHELL, T0, chat_events
from tui_app.runtime import events as ev
from tui_app.runtime.log.eventlog import EventLogWriter
from tui_app.runtime.log.paths import events_path

SESSION = "20250101-120000-abc123"


def _at(cls: Any, dt: float, turn: str, **fields: Any) -> Any:
    return cls(session_id=SESSION, ts=T0 + dt, turn_id=turn, **fields)


def two_turns() -> list[Any]:
    """Turn 1: the mid-session batch of session_data (an Edit waiting for approval, a command
    running), then the Edit approved and done, the command finished; turn 2: a failing command
    and a short answer; then the session ends."""
    first = [e for e in chat_events() if e.type != "AssistantTextDelta"]
    edit = {"file_path": f"{CWD}/calc/stats.py", "old_string": "return ordered[middle]",
            "new_string": "if len(ordered) % 2: ..."}
    rest = [
        _at(ev.PermissionResolved, 6.0, "t1", call_id="toolu_05", request_id="perm-1", decision="allow",
            decided_by="user", wait_ms=3000),
        _at(ev.ToolCallStarted, 6.1, "t1", call_id="toolu_05", tool="Edit", input=edit, target=edit["file_path"],
            flags=SHELL, group=2),
        _at(ev.ToolCallResult, 6.2, "t1", call_id="toolu_05", tool="Edit", model_content="The file has been updated.",
            metrics=ev.CallMetrics(total_ms=3100, exec_ms=12, bytes_out=27)),
        _at(ev.ToolCallResult, 7.0, "t1", call_id="toolu_06", tool="Bash", model_content="built",
            metrics=ev.CallMetrics(total_ms=3000, exec_ms=3000, bytes_out=40)),
        _at(ev.AssistantText, 7.1, "t1", step=2, index=0, text="The median now averages the two middle values."),
        _at(ev.ModelStepEnded, 7.1, "t1", step=2, stop_reason="end_turn", usage={"input_tokens": 900,
                                                                                 "output_tokens": 40}),
        _at(ev.TurnEnded, 7.2, "t1", reason="completed", steps=2),
        _at(ev.TurnStarted, 60.0, "t2", prompt="Now run the linter."),
        _at(ev.AssistantText, 60.5, "t2", step=1, index=0, text="Running ruff."),
        _at(ev.ToolCallRequested, 60.5, "t2", call_id="toolu_10", step=1, index=0, name="Bash",
            input={"command": "ruff check ."}),
        _at(ev.ToolCallStarted, 60.6, "t2", call_id="toolu_10", tool="Bash", input={"command": "ruff check ."},
            target="ruff check .", flags=SHELL, group=0),
        _at(ev.ToolCallProgress, 60.7, "t2", call_id="toolu_10", kind="output", stream="stdout",
            text="calc/stats.py:3:1: F401 unused import\n"),
        _at(ev.ToolCallError, 61.0, "t2", call_id="toolu_10", tool="Bash", phase="execute", code="execution_failed",
            message="Exit code 1", model_content="Exit code 1\ncalc/stats.py:3:1: F401 unused import",
            metrics=ev.CallMetrics(total_ms=400, exec_ms=400, bytes_out=38)),
        _at(ev.AssistantText, 61.2, "t2", step=2, index=0, text="One unused import is left; say if I should drop it."),
        _at(ev.TurnEnded, 61.3, "t2", reason="completed", steps=2),
        ev.SessionEnded(session_id=SESSION, ts=T0 + 70),
    ]
    return [e.model_copy(update={"seq": seq}) for seq, e in enumerate([*first, *rest], 1)]


def write_log(events: list[Any], session_id: str = SESSION) -> Path:
    """The events as a session's log under VIGIL_HOME (set it first)."""
    path = events_path(session_id)
    writer = EventLogWriter(path)
    for event in events:
        writer.write(event)
    writer.close()
    return path


def position_after(events: list[Any], kind: str, call_id: str | None = None) -> int:
    """The timeline position right after the first `kind` event (of `call_id`)."""
    for index, event in enumerate(events):
        if event.type == kind and (call_id is None or getattr(event, "call_id", None) == call_id):
            return index + 1
    raise AssertionError(f"no {kind} {call_id or ''} in the log")
