"""Session events → everything the detail pane shows about one call. Plain Python, no Textual.

Memory stays bounded: live output is kept (a bounded tail) only while a call runs; once it has
settled, its display model (bounded by the runtime) and its artifact carry the output.
"""

from __future__ import annotations

import json
import os
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from tui_app.runtime.display import BashOutputDisplay, FileDiffDisplay, FileDiffsDisplay
from tui_app.runtime.events import (
    FileChangedExternally,
    HookRun,
    PermissionRequested,
    PermissionResolved,
    ToolCallError,
    ToolCallProgress,
    ToolCallRequested,
    ToolCallResult,
    ToolCallScheduled,
    ToolCallStarted,
    Warning,
)
from tui_app.runtime.messages import content_text
from tui_app.view_model.tool_rows import state_of_error, target_of_input
from widgets.text.formatting import fmt_bytes, fmt_duration

LIVE_OUTPUT_BYTES = 256 * 1024
MAX_TIMELINE_MESSAGES = 50
PATH_KEYS = ("file_path", "notebook_path", "path")


@dataclass(frozen=True)
class TimelineEntry:
    ts: float
    label: str
    detail: str = ""


@dataclass
class CallRecord:
    call_id: str
    tool: str = ""
    requested_input: Any = None
    resolved_input: dict[str, Any] | None = None
    permission: PermissionRequested | None = None
    resolution: PermissionResolved | None = None
    started: ToolCallStarted | None = None
    outcome: ToolCallResult | ToolCallError | None = None
    timeline: list[TimelineEntry] = field(default_factory=list)
    #: (stream, text) chunks of a running call, oldest dropped past LIVE_OUTPUT_BYTES
    live_output: deque[tuple[str, str]] = field(default_factory=deque)
    live_bytes: int = 0
    dropped_bytes: int = 0
    output_chunks: int = 0
    external_change: str | None = None
    version: int = 0

    @property
    def input(self) -> Any:
        """What runs: the resolved input once known, else what the model asked for."""
        return self.resolved_input if self.resolved_input is not None else self.requested_input

    @property
    def path(self) -> str | None:
        data = self.input
        if isinstance(data, dict):
            for key in PATH_KEYS:
                if isinstance(data.get(key), str):
                    return data[key]
        return None

    @property
    def diff(self) -> FileDiffDisplay | FileDiffsDisplay | None:
        for display in (
            self.outcome.display if self.outcome else None,
            self.permission.preview_display if self.permission else None,
        ):
            if isinstance(display, FileDiffDisplay | FileDiffsDisplay):
                return display
        return None

    @property
    def bash(self) -> BashOutputDisplay | None:
        display = self.outcome.display if self.outcome else None
        return display if isinstance(display, BashOutputDisplay) else None

    @property
    def command(self) -> str | None:
        data = self.input
        if isinstance(data, dict) and isinstance(data.get("command"), str):
            return data["command"]
        return None

    @property
    def has_output(self) -> bool:
        return self.bash is not None or self.output_chunks > 0 or self.command is not None

    def result_text(self, artifact_hint: str = "") -> str:
        """How the result was cut and where the rest is (and, with `artifact_hint`, how to open it),
        then exactly what the model received."""
        outcome = self.outcome
        if outcome is None:
            return ""
        text = content_text(outcome.model_content)
        notes = []
        if isinstance(outcome, ToolCallError):
            notes.append(
                f"error · phase {outcome.phase} · code {outcome.code} · side effects {outcome.side_effects}"
                + (" · retryable" if outcome.retryable else "")
            )
        strategy = getattr(outcome, "strategy", "truncate" if outcome.truncated else "inline")
        if outcome.truncated or strategy != "inline":
            notes.append(
                f"{strategy}: original {outcome.original_bytes:,} bytes, sent {outcome.sent_bytes:,} bytes to the model"
            )
        for artifact in outcome.artifacts:
            lines = f", {artifact.lines:,} lines" if artifact.lines is not None else ""
            notes.append(f"artifact {artifact.uri} ({fmt_bytes(artifact.bytes)}{lines})\n  path: {artifact.path}")
        if outcome.artifacts and artifact_hint:
            notes.append(artifact_hint)
        if not notes:
            return text
        # the notes first: under a 30 KB result nobody would find them
        return "\n".join(notes) + "\n" + "─" * 40 + " sent to the model:\n" + text

    def input_json(self) -> str:
        data = self.input
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except ValueError:
                return data
        return json.dumps(data, indent=2, ensure_ascii=False, default=str)

    def wait_and_exec(self) -> tuple[int | None, int | None]:
        """(permission wait, execution time) in ms, from the metrics or the events."""
        if self.outcome is not None and (self.outcome.metrics.exec_ms or self.outcome.metrics.permission_wait_ms):
            return self.outcome.metrics.permission_wait_ms, self.outcome.metrics.exec_ms
        wait = self.resolution.wait_ms if self.resolution is not None else None
        exec_ms = None
        if self.started is not None and self.outcome is not None and self.started.ts and self.outcome.ts:
            exec_ms = int((self.outcome.ts - self.started.ts) * 1000)
        return wait, exec_ms


def _same_path(a: str, b: str) -> bool:
    a, b = os.path.normpath(a), os.path.normpath(b)
    if a == b:
        return True
    # one side may be relative to the project
    return a.endswith(os.sep + b) or b.endswith(os.sep + a)


class CallRecords:
    def __init__(self) -> None:
        self.records: dict[str, CallRecord] = {}

    def get(self, call_id: str) -> CallRecord | None:
        return self.records.get(call_id)

    def _record(self, call_id: str) -> CallRecord:
        record = self.records.get(call_id)
        if record is None:
            record = self.records[call_id] = CallRecord(call_id)
        return record

    def apply(self, event: Any) -> list[CallRecord]:
        """Fold one event in; return the records it changed."""
        if isinstance(event, FileChangedExternally):
            return self._external(event)
        call_id = getattr(event, "call_id", None)
        if call_id is None:
            return []
        if isinstance(event, ToolCallProgress):
            record = self.records.get(call_id)
            if record is None or not self._progress(record, event):
                return []
        else:
            record = self._record(call_id)
            if not self._fold(record, event):
                return []
        record.version += 1
        return [record]

    def _external(self, event: FileChangedExternally) -> list[CallRecord]:
        changed = []
        for record in self.records.values():
            path = record.path
            if path and _same_path(path, event.path):
                record.external_change = event.change
                record.timeline.append(TimelineEntry(event.ts, "file changed outside Vigil", event.change))
                record.version += 1
                changed.append(record)
        return changed

    def _progress(self, record: CallRecord, event: ToolCallProgress) -> bool:
        if event.kind == "output":
            if record.output_chunks == 0:
                record.timeline.append(TimelineEntry(event.ts, "output started", event.stream or "stdout"))
            record.output_chunks += 1
            record.live_output.append((event.stream or "stdout", event.text))
            record.live_bytes += len(event.text)
            while record.live_bytes > LIVE_OUTPUT_BYTES and len(record.live_output) > 1:
                _, dropped = record.live_output.popleft()
                record.live_bytes -= len(dropped)
                record.dropped_bytes += len(dropped)
            return True
        messages = sum(1 for e in record.timeline if e.label == "progress")
        if messages < MAX_TIMELINE_MESSAGES:
            detail = event.text
            if event.progress is not None:
                amount = f"{event.progress:g}" + (f"/{event.total:g}" if event.total else "")
                detail = f"{amount} {detail}".strip()
            record.timeline.append(TimelineEntry(event.ts, "progress", detail))
            return True
        return False

    def _fold(self, record: CallRecord, event: Any) -> bool:
        add = record.timeline.append
        if isinstance(event, ToolCallRequested):
            record.tool = event.name
            record.requested_input = event.input
            add(TimelineEntry(event.ts, "requested", f"{event.name} {target_of_input(event.input)}".strip()))
        elif isinstance(event, ToolCallScheduled):
            size = len(event.groups[event.group]) if 0 <= event.group < len(event.groups) else 1
            together = f", runs with {size - 1} other call(s)" if size > 1 else ""
            add(
                TimelineEntry(
                    event.ts,
                    "scheduled",
                    f"batch {event.batch + 1}, group {event.group + 1} of {len(event.groups)}{together}",
                )
            )
        elif isinstance(event, PermissionRequested):
            record.permission = event
            record.resolved_input = event.input
            add(
                TimelineEntry(
                    event.ts,
                    "approval asked",
                    f"by {event.decided_by}: {event.reason}".rstrip(": ") + f" · risk {event.risk}",
                )
            )
        elif isinstance(event, PermissionResolved):
            record.resolution = event
            detail = f"by {event.decided_by}"
            if event.wait_ms:
                detail += f" after {fmt_duration(event.wait_ms)}"
            if event.rule:
                detail += f" · rule {event.rule}"
            if event.saved_rules:
                detail += f" · saved {', '.join(event.saved_rules)}"
            if event.reason:
                detail += f" · {event.reason}"
            if event.feedback:
                detail += f" · feedback: {event.feedback}"
            add(TimelineEntry(event.ts, "allowed" if event.decision == "allow" else "denied", detail))
        elif isinstance(event, HookRun):
            add(TimelineEntry(event.ts, f"hook {event.event}", f"{event.status} · {event.command}"))
        elif isinstance(event, ToolCallStarted):
            record.started = event
            record.tool = event.tool
            record.resolved_input = event.input
            timeout = f"timeout {fmt_duration(event.timeout_ms)}" if event.timeout_ms else "no timeout"
            add(TimelineEntry(event.ts, "started", timeout))
        elif isinstance(event, ToolCallResult | ToolCallError):
            record.outcome = event
            record.tool = event.tool or record.tool
            if event.display is not None:
                # the display model now carries the output; the live copy can go
                record.live_output.clear()
                record.live_bytes = 0
            size = fmt_bytes(event.original_bytes) if event.original_bytes else ""
            if isinstance(event, ToolCallResult):
                add(TimelineEntry(event.ts, "done", " · ".join(p for p in (size, event.strategy) if p)))
            else:
                add(TimelineEntry(event.ts, state_of_error(event), f"{event.phase}/{event.code}: {event.message}"))
        elif isinstance(event, Warning):
            add(TimelineEntry(event.ts, "warning", f"{event.code}: {event.message}"))
        else:
            return False
        return True
