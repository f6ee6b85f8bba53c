"""Session events → one row per tool call: the table's view-model. Plain Python, no Textual.

The reducer only ever moves a row forward: once a call has settled (done, failed, denied,
cancelled), a late event for it (a progress chunk flushed after the result) cannot reopen it.

A subagent's calls (events with an `agent_id`) are rows too, under the Agent call that started
the subagent (`parent`), which counts them (`children`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Literal

from tui_app.runtime.events import (
    PermissionRequested,
    PermissionResolved,
    SubagentStarted,
    ToolCallError,
    ToolCallProgress,
    ToolCallRequested,
    ToolCallResult,
    ToolCallScheduled,
    ToolCallStarted,
)

CallState = Literal["queued", "awaiting approval", "running", "done", "failed", "denied", "cancelled"]
STATES: tuple[CallState, ...] = ("queued", "awaiting approval", "running", "done", "failed", "denied", "cancelled")
STATE_GLYPHS = {
    "queued": "○",
    "awaiting approval": "◆",
    "running": "▶",
    "done": "✓",
    "failed": "✗",
    "denied": "⊘",
    "cancelled": "–",
}
SETTLED: frozenset[str] = frozenset({"done", "failed", "denied", "cancelled"})

DENIED_CODES = frozenset({"permission_denied", "user_denied", "hook_denied", "no_permission_client"})
CANCELLED_CODES = frozenset({"cancelled", "aborted_before_dispatch", "turn_stopped"})

#: input keys that name what a call works on, in the order they are tried
TARGET_KEYS = ("file_path", "notebook_path", "path", "command", "url", "pattern", "query", "uri", "description")


def target_of_input(data: Any) -> str:
    """The one-line target of a call before the runtime has resolved it (ToolCallStarted carries
    the tool's own target later)."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            return ""
    if not isinstance(data, dict):
        return ""
    for key in TARGET_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    for value in data.values():
        if isinstance(value, str) and value:
            return value
    return ""


def state_of_error(event: ToolCallError) -> CallState:
    if event.code in DENIED_CODES:
        return "denied"
    if event.code in CANCELLED_CODES:
        return "cancelled"
    return "failed"


@dataclass
class ToolRow:
    call_id: str
    number: int
    tool: str
    target: str = ""
    state: CallState = "queued"
    group: str = ""
    started_ts: float | None = None
    duration_ms: int | None = None
    output_bytes: int = 0
    #: 0..1 when the tool reports progress with a total
    progress: float | None = None
    error_code: str | None = None
    #: Bash: runs in the sandbox (True), outside it (False), or no sandbox in the picture (None)
    sandboxed: bool | None = None
    #: bumped on every change; the table's line cache keys on it
    version: int = 0
    #: the Agent call whose subagent made this call (None: the session's own agent)
    parent: str | None = None
    #: calls its subagents made (an Agent call)
    children: int = 0

    @property
    def tool_label(self) -> str:
        """The tool, marked ▣ when it runs in the sandbox and □ when it runs outside one."""
        mark = {True: " ▣", False: " □"}.get(self.sandboxed, "") if self.sandboxed is not None else ""
        return self.tool + mark

    @property
    def settled(self) -> bool:
        return self.state in SETTLED

    def elapsed_ms(self, now: float | None = None) -> int | None:
        """Final duration once settled, live elapsed time while running."""
        if self.duration_ms is not None:
            return self.duration_ms
        if self.state == "running" and self.started_ts is not None:
            return max(0, int(((now or time.time()) - self.started_ts) * 1000))
        return None


class ToolRows:
    """Rows in the order the model proposed the calls."""

    def __init__(self) -> None:
        self.rows: list[ToolRow] = []
        self.by_id: dict[str, ToolRow] = {}
        #: subagent → the Agent call that started it
        self.agent_calls: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def get(self, call_id: str) -> ToolRow | None:
        return self.by_id.get(call_id)

    def _row(self, call_id: str, tool: str = "") -> ToolRow:
        row = self.by_id.get(call_id)
        if row is None:
            row = ToolRow(call_id=call_id, number=len(self.rows) + 1, tool=tool)
            self.rows.append(row)
            self.by_id[call_id] = row
        return row

    def apply(self, event: Any) -> ToolRow | None:
        """Fold one session event in; return the row it changed (None when nothing changed)."""
        call_id = getattr(event, "call_id", None)
        if isinstance(event, SubagentStarted):
            if call_id is not None and event.agent_id is not None:
                self.agent_calls[event.agent_id] = call_id
            return None
        handler = _HANDLERS.get(type(event))
        if call_id is None or handler is None:
            return None
        if isinstance(event, ToolCallProgress) and call_id not in self.by_id:
            return None
        fresh = call_id not in self.by_id
        row = self._row(call_id, getattr(event, "tool", "") or getattr(event, "name", ""))
        if fresh and getattr(event, "agent_id", None) is not None:
            row.parent = self.agent_calls.get(event.agent_id)
            parent = self.by_id.get(row.parent) if row.parent else None
            if parent is not None:
                parent.children += 1
                parent.version += 1
        # a read started early may finish before its batch is scheduled; its group still counts
        if row.settled and not isinstance(event, ToolCallResult | ToolCallError | ToolCallScheduled):
            return None
        if not handler(row, event):
            return None
        row.version += 1
        return row


def _requested(row: ToolRow, event: ToolCallRequested) -> bool:
    row.tool = event.name or row.tool
    row.target = row.target or target_of_input(event.input)
    return True


def _scheduled(row: ToolRow, event: ToolCallScheduled) -> bool:
    members = event.groups[event.group] if 0 <= event.group < len(event.groups) else []
    row.group = f"g{event.group + 1}" + (f" ∥{len(members)}" if len(members) > 1 else "")
    return True


def _asked(row: ToolRow, event: PermissionRequested) -> bool:
    row.state = "awaiting approval"
    row.tool = event.tool or row.tool
    if event.sandboxed is not None:
        row.sandboxed = event.sandboxed
    row.target = target_of_input(event.input) or row.target
    return True


def _resolved(row: ToolRow, event: PermissionResolved) -> bool:
    if event.decision == "deny":
        row.state = "denied"
        return True
    if row.state == "awaiting approval":
        row.state = "queued"
        return True
    return False


def _started(row: ToolRow, event: ToolCallStarted) -> bool:
    row.state = "running"
    row.tool = event.tool or row.tool
    row.sandboxed = event.sandboxed
    row.target = event.target or target_of_input(event.input) or row.target
    row.started_ts = event.ts or time.time()
    if not row.group:
        row.group = f"g{event.group + 1}"
    return True


def _progress(row: ToolRow, event: ToolCallProgress) -> bool:
    if event.kind == "output":
        row.output_bytes += len(event.text.encode("utf-8", "replace"))
        return True
    if event.kind == "progress" and event.progress is not None and event.total:
        row.progress = max(0.0, min(1.0, event.progress / event.total))
        return True
    return False


def _finished(row: ToolRow, event: ToolCallResult | ToolCallError) -> bool:
    if isinstance(event, ToolCallResult):
        row.state = "done"
        row.error_code = None
    else:
        row.state = state_of_error(event)
        row.error_code = event.code
        exit_code = getattr(event.display, "exit_code", None)
        if event.code == "execution_failed" and isinstance(exit_code, int):
            row.error_code = f"exit {exit_code}"  # what a shell user looks for
    metrics = event.metrics
    if row.started_ts is None and not metrics.exec_ms:
        row.duration_ms = None  # it never ran: the time it waited for a decision is not a run time
    elif metrics.exec_ms or metrics.total_ms:
        row.duration_ms = metrics.exec_ms or metrics.total_ms
    elif row.started_ts is not None and event.ts:
        row.duration_ms = max(0, int((event.ts - row.started_ts) * 1000))
    size = event.original_bytes or metrics.bytes_out
    if size:
        row.output_bytes = size
    row.progress = None
    return True


_HANDLERS: dict[type, Any] = {
    ToolCallRequested: _requested,
    ToolCallScheduled: _scheduled,
    PermissionRequested: _asked,
    PermissionResolved: _resolved,
    ToolCallStarted: _started,
    ToolCallProgress: _progress,
    ToolCallResult: _finished,
    ToolCallError: _finished,
}
