"""One session's view model: every event is folded here once, and the chat, the tool table, the
detail pane, the header, the side panels, the dialogs and the replay render what it holds.

`apply(event)` returns a `Change`: the row and the records the event changed, whether the header
changed, the requests it settled and the file or todo list it changed, so each widget redraws only
what it shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tui_app.runtime.events import (
    AgentCommandsChanged,
    AgentModeChanged,
    ConversationCompacted,
    McpServerStatus,
    MemoryLoaded,
    SettingsLoaded,
    TodoUpdated,
)
from tui_app.view_model.call_records import CallRecord, CallRecords
from tui_app.view_model.files import ChangedFile, SessionFiles
from tui_app.view_model.header import HeaderState
from tui_app.view_model.pending import PendingRequests, Settled
from tui_app.view_model.tool_rows import ToolRow, ToolRows


@dataclass
class Reports:
    """What the session reported about itself: settings files, MCP servers, memory files, how
    often the conversation was compacted, an external agent's own modes and commands (ACP)."""

    settings: list[SettingsLoaded] = field(default_factory=list)
    mcp: dict[str, McpServerStatus] = field(default_factory=dict)
    memory: list[MemoryLoaded] = field(default_factory=list)
    compactions: int = 0
    agent_modes: AgentModeChanged | None = None
    agent_commands: AgentCommandsChanged | None = None

    def apply(self, event: Any) -> bool:
        if isinstance(event, SettingsLoaded):
            self.settings.append(event)
        elif isinstance(event, McpServerStatus):
            self.mcp[event.server] = event
        elif isinstance(event, MemoryLoaded):
            self.memory.append(event)
        elif isinstance(event, ConversationCompacted) and event.trigger != "clear" and event.agent_id is None:
            self.compactions += 1
        elif isinstance(event, AgentModeChanged):
            self.agent_modes = event
        elif isinstance(event, AgentCommandsChanged):
            self.agent_commands = event
        else:
            return False
        return True


@dataclass(slots=True)
class Change:
    """What one event changed in the view."""

    row: ToolRow | None = None
    records: list[CallRecord] = field(default_factory=list)
    header: bool = False
    settled: list[Settled] = field(default_factory=list)
    #: a file the session (or something outside it) changed, or the todo list written
    files: ChangedFile | TodoUpdated | None = None


class SessionView:
    def __init__(self, *, tag: str = "", cwd: str = "") -> None:
        self.rows = ToolRows()
        self.records = CallRecords()
        self.header = HeaderState(tag=tag, cwd=cwd)
        self.reports = Reports()
        self.requests = PendingRequests()
        self.files = SessionFiles(cwd or None)
        #: events folded so far
        self.applied = 0

    @classmethod
    def folded(cls, events: Iterable[Any], *, tag: str = "", cwd: str = "") -> SessionView:
        """A view of `events` from the start (a replay stepping back)."""
        view = cls(tag=tag, cwd=cwd)
        for event in events:
            view.apply(event)
        return view

    def apply(self, event: Any) -> Change:
        self.applied += 1
        self.reports.apply(event)
        return Change(
            row=self.rows.apply(event),
            records=self.records.apply(event),
            header=self.header.apply(event),
            settled=self.requests.apply(event),
            files=self.files.apply(event),
        )
