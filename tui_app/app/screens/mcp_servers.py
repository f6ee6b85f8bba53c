"""The MCP servers of the session: status, tool count, message, log path, the stderr log of the one
selected, and a reconnect.

A live session is asked for its facts (the servers' state) and told to reconnect one, through its
port; a replay shows the last status the log recorded for each server and reads the stderr log it
points to. Everything a server wrote (its name, messages, log) is untrusted text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from tui_app.runtime.commands import ReconnectMcp
from tui_app.runtime.results.sanitize import neutralize
from widgets.text.formatting import tilde
from widgets.text.line_render import load_css
from widgets.text.text_view import TextView
from widgets.text.untrusted import one_line

LOG_TAIL_BYTES = 64 * 1024
STATUS_STYLES = {"connected": "green", "connecting": "yellow", "failed": "bold red", "disconnected": "dim",
                 "needs-trust": "bold yellow"}


@dataclass(frozen=True)
class ServerRow:
    name: str
    status: str
    tools: int
    message: str
    log_path: str | None
    transport: str = ""


class ServerSource(Protocol):
    #: whether the servers can be reconnected from here
    live: bool

    async def servers(self) -> list[ServerRow]: ...

    async def log(self, name: str) -> str: ...

    async def reconnect(self, name: str) -> None: ...


class LiveServers:
    """A live session's servers: its facts, and ReconnectMcp, through the session's port."""

    live = True

    def __init__(self, controls: Any) -> None:
        self.controls = controls
        self._logs: dict[str, str | None] = {}

    async def servers(self) -> list[ServerRow]:
        facts = await self.controls.refresh()
        self._logs = {s.name: s.log_path for s in facts.mcp_servers}
        return [ServerRow(s.name, s.status, s.tools, s.message, s.log_path, s.transport) for s in facts.mcp_servers]

    async def log(self, name: str) -> str:
        path = self._logs.get(name)
        return await asyncio.to_thread(log_tail, Path(path)) if path else ""

    async def reconnect(self, name: str) -> None:
        reply = await self.controls.ask(ReconnectMcp(server=name))
        if not reply.ok:
            raise RuntimeError(reply.message)


class RecordedServers:
    """What the log said last about each server (a replay: nothing to reconnect)."""

    live = False

    def __init__(self, statuses: Mapping[str, Any]) -> None:
        self.statuses = dict(statuses)

    async def servers(self) -> list[ServerRow]:
        return [ServerRow(s.server, s.status, s.tools, s.message, s.log_path) for s in self.statuses.values()]

    async def log(self, name: str) -> str:
        status = self.statuses.get(name)
        if status is None or not status.log_path:
            return ""
        return await asyncio.to_thread(log_tail, Path(status.log_path))

    async def reconnect(self, name: str) -> None:
        raise RuntimeError("a replay cannot reconnect anything")


def log_tail(path: Path, max_bytes: int = LOG_TAIL_BYTES) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - max_bytes))
            data = handle.read()
    except OSError:
        return ""
    return neutralize(data.decode("utf-8", errors="replace"))


def _cell(text: str, style: str = "", limit: int = 60) -> Text:
    return Text(one_line(text, limit), style=style)


class McpServersScreen(ModalScreen[None]):
    DEFAULT_CSS = load_css("mcp_servers")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close"),
        Binding("r", "reconnect", "Reconnect"),
        Binding("g", "refresh", "Refresh"),
    ]

    def __init__(self, source: ServerSource) -> None:
        super().__init__()
        self.source = source
        self.rows: list[ServerRow] = []
        self.selected: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="mcp-box"):
            yield Static(Content(""), id="mcp-title")
            yield DataTable(id="mcp-servers", cursor_type="row")
            yield Static(Content(""), id="mcp-log-title")
            yield TextView(id="mcp-log")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("server", "status", "tools", "transport", "message")
        live = "r reconnects the selected server" if self.source.live else "recorded statuses (read-only replay)"
        self.query_one("#mcp-title", Static).update(Content(f"MCP servers — {live} · g refreshes · Esc closes"))
        self.refresh_servers()
        table.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.source.live if action == "reconnect" else True

    # ---- loading ----------------------------------------------------------------------------

    @work(exclusive=True, group="mcp-list")
    async def refresh_servers(self) -> None:
        self.rows = await self.source.servers()
        table = self.query_one(DataTable)
        table.clear()
        for row in self.rows:
            table.add_row(_cell(row.name, "bold", 40), _cell(row.status, STATUS_STYLES.get(row.status, "")),
                          Text(str(row.tools)), _cell(row.transport or "?", "", 12), _cell(row.message, "", 120),
                          key=row.name)
        if not self.rows:
            self.query_one("#mcp-log-title", Static).update(Content("No MCP servers in this session."))
            self.query_one(TextView).set_text("")
            return
        names = [row.name for row in self.rows]
        index = names.index(self.selected) if self.selected in names else 0
        table.move_cursor(row=index)
        await self.show_log(names[index])

    async def show_log(self, name: str) -> None:
        self.selected = name
        row = next((r for r in self.rows if r.name == name), None)
        path = row.log_path if row is not None else None
        title = (f"stderr of {one_line(name, 40)}: {one_line(tilde(path), 200)} (the server's own text)" if path
                 else f"{one_line(name, 40)} has no stderr log")
        self.query_one("#mcp-log-title", Static).update(Content(title))
        text = await self.source.log(name) if path else ""
        view = self.query_one(TextView)
        view.set_text(text or "(empty)")
        view.scroll_end(animate=False)

    @on(DataTable.RowHighlighted, "#mcp-servers")
    async def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        name = str(event.row_key.value) if event.row_key is not None else None
        if name and name != self.selected:
            await self.show_log(name)

    # ---- actions ----------------------------------------------------------------------------

    def action_refresh(self) -> None:
        self.refresh_servers()

    @work(exclusive=True, group="mcp-reconnect")
    async def action_reconnect(self) -> None:
        name = self.selected
        if not self.source.live or name is None:
            return
        self.notify(f"Reconnecting {one_line(name, 40)}…", markup=False, timeout=3)
        try:
            await self.source.reconnect(name)
        except Exception as exc:  # the server's own failure shows in its status and log
            self.notify(f"Reconnect of {one_line(name, 40)} failed: {one_line(str(exc), 200)}", severity="error",
                        markup=False)
        self.refresh_servers()
