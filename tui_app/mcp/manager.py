"""The MCP service of a session: starts the configured servers, keeps their tools registered,
reports their status, reconnects on request, closes them at the end.

The session starts services before it freezes its first tool menu, so the tools of every server
that came up in time are on the model's first menu. After that the menu changes only when a
server says its tool list changed (or a server is reconnected with different tools): then the
registry is updated and the session records a new ToolMenu.

A server the session may not start yet (`may_start` says no: a project's own server in a project
the user has not trusted) is listed as `needs-trust` and never started, not by a reconnect
either.

For the screen ("MCP servers" in the palette): `servers()` lists name, status, tool names and the
path of each server's stderr log; `read_log(name)` returns its tail; `reconnect(name)`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_app.mcp.config import ConfigProblem, McpConfig
from tui_app.mcp.connection import McpConnection, Status
from tui_app.mcp.projection import (
    MAX_TOOL_NAME_CHARS,
    InvalidToolSchema,
    fingerprint,
    full_tool_name,
    make_tool_spec,
    tool_name,
    tool_timeout_ms,
)
from tui_app.runtime.events import McpServerStatus, Warning
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.results.sanitize import neutralize

if TYPE_CHECKING:
    from collections.abc import Callable

    from tui_app.runtime.session import Session

DEFAULT_STARTUP_TIMEOUT_MS = 30_000
LOG_TAIL_BYTES = 64 * 1024
#: a server that went away is restarted by a call at most this often
REVIVE_INTERVAL_S = 60.0
_SDK_LOGGERS = ("mcp", "client")  # the SDK's client session logs under the bare name "client"
NEEDS_TRUST = "not started: the project is not trusted (see README, Trusting a project)"


def startup_timeout_from_env(env: dict[str, str] | None = None) -> int:
    """`MCP_TIMEOUT` (ms), as in Claude Code; 30000 by default."""
    value = (env if env is not None else os.environ).get("MCP_TIMEOUT", "")
    try:
        parsed = int(value)
    except ValueError:
        return DEFAULT_STARTUP_TIMEOUT_MS
    return parsed if parsed > 0 else DEFAULT_STARTUP_TIMEOUT_MS


@dataclass(frozen=True)
class ServerInfo:
    """One server as the screen lists it."""

    name: str
    transport: str
    status: Status
    message: str
    tools: tuple[str, ...]
    log_path: str | None
    source: str
    startup_ms: int | None = None
    #: what the server calls itself ("name version") and the protocol revision it speaks
    server: str = ""
    protocol_version: str = ""


class McpManager:
    def __init__(self, config: McpConfig, registry: ToolRegistry, *, log_dir: Path,
                 hides_tool: Callable[[str], bool] | None = None, startup_timeout_ms: int | None = None,
                 may_start: Callable[[str], bool] | None = None) -> None:
        self.config = config
        #: whether a server may be started now (asked each time one would be)
        self.may_start = may_start or (lambda _name: True)
        self.registry = registry
        self.log_dir = log_dir
        self.hides_tool = hides_tool or (lambda _name: False)
        timeout_ms = startup_timeout_ms if startup_timeout_ms is not None else startup_timeout_from_env()
        self.connections: dict[str, McpConnection] = {}
        taken: set[Path] = set()
        for name, server in config.servers.items():
            log_path = self._log_path(name, taken)
            taken.add(log_path)
            self.connections[name] = McpConnection(server, log_path, startup_timeout_s=timeout_ms / 1000,
                                                   on_tools_changed=self._tools_changed, on_lost=self._lost)
        #: model-facing tool name → (server, fingerprint of the MCP tool)
        self._registered: dict[str, tuple[str, str]] = {}
        self.session: Session | None = None
        self.supports_images = False
        self._log_handler: logging.Handler | None = None
        #: until the first menu is built, tool-list changes only update the connection's list
        self._started = False
        #: server → when a call last restarted it (at most one restart per REVIVE_INTERVAL_S)
        self._revived_at: dict[str, float] = {}
        self._revive_locks: dict[str, asyncio.Lock] = {}

    # ---- lifecycle ------------------------------------------------------------------------------

    async def astart(self, session: Session) -> None:
        """Connect every server (concurrently, each within the startup timeout) and register tools."""
        self.session = session
        self.supports_images = bool(getattr(getattr(session, "model", None), "supports_images", False))
        for problem in self.config.file_problems:
            self._warn("mcp_config_invalid", str(problem), problem)
        for problem in self.config.unset:
            self._warn("mcp_config_unset_variable", str(problem), problem)
        for name, problem in self.config.invalid.items():
            self._emit(McpServerStatus(server=name, status="failed", message=f"invalid configuration: {problem}"))
        starting = [c for c in self.connections.values() if self.may_start(c.name)]
        for connection in self.connections.values():
            if connection not in starting:
                self._emit(McpServerStatus(server=connection.name, status="needs-trust", message=NEEDS_TRUST))
        if not starting:
            self._started = True
            return
        self._route_sdk_logs()
        for connection in starting:
            self._emit(McpServerStatus(server=connection.name, status="connecting",
                                       log_path=str(connection.log_path)))
        await asyncio.gather(*(c.connect() for c in starting))
        for connection in starting:
            self._sync_tools(connection)
            self._emit_status(connection)
        self._started = True

    async def aclose(self) -> None:
        connections = [c for c in self.connections.values() if c.status in ("connecting", "connected")]
        await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)
        for connection in connections:
            self._emit_status(connection, "closed with the session")
        if self._log_handler is not None:
            for name in _SDK_LOGGERS:
                logger = logging.getLogger(name)
                logger.removeHandler(self._log_handler)
                logger.propagate = True
            self._log_handler.close()
            self._log_handler = None

    async def reconnect(self, name: str) -> ServerInfo:
        connection = self.connections.get(name)
        if connection is None:
            raise KeyError(f"no MCP server named {name!r}")
        if not self.may_start(name):
            self._emit(McpServerStatus(server=name, status="needs-trust", message=NEEDS_TRUST))
            return self.info(name)
        await connection.close()
        self._emit(McpServerStatus(server=name, status="connecting", log_path=str(connection.log_path)))
        await connection.connect()
        self._emit_status(connection)
        if self._sync_tools(connection) and self.session is not None:
            self.session.refresh_tool_menu()
        return self.info(name)

    async def revive(self, name: str) -> bool:
        """A call for a server that was up and went away: start it again, at most once per
        REVIVE_INTERVAL_S (a server that dies on every call is not restarted in a loop). True
        when it is connected afterwards."""
        connection = self.connections.get(name)
        if connection is None or not self.may_start(name):
            return False
        lock = self._revive_locks.setdefault(name, asyncio.Lock())
        async with lock:  # parallel calls to a dead server restart it once
            if connection.status == "connected":
                return True
            last = self._revived_at.get(name)
            if (not connection.was_connected or connection.status not in ("failed", "disconnected")
                    or (last is not None and time.monotonic() - last < REVIVE_INTERVAL_S)):
                return False
            self._revived_at[name] = time.monotonic()
            why = connection.message or connection.status
            self._warn("mcp_server_restarted", f'MCP server "{name}" had stopped ({why}); a call to it starts it again')
            await self.reconnect(name)
            return connection.status == "connected"

    # ---- what the screen asks -------------------------------------------------------------------

    def servers(self) -> list[ServerInfo]:
        return [self.info(name) for name in [*self.connections, *self.config.invalid]]

    def info(self, name: str) -> ServerInfo:
        if name in self.config.invalid:
            problem = self.config.invalid[name]
            return ServerInfo(name=name, transport="?", status="failed", message=f"invalid configuration: {problem}",
                              tools=(), log_path=None, source=problem.source)
        connection = self.connections[name]
        tools = tuple(t for t, (server, _) in self._registered.items() if server == name)
        held = not self.may_start(name)
        return ServerInfo(name=name, transport=connection.config.transport,
                          status="needs-trust" if held else connection.status,
                          message=NEEDS_TRUST if held else neutralize(connection.message), tools=tools,
                          log_path=str(connection.log_path),
                          source=connection.config.source, startup_ms=connection.startup_ms,
                          server=neutralize(connection.server_name), protocol_version=connection.protocol_version)

    def log_path(self, name: str) -> Path | None:
        connection = self.connections.get(name)
        return connection.log_path if connection is not None else None

    def read_log(self, name: str, max_bytes: int = LOG_TAIL_BYTES) -> str:
        """The tail of a server's stderr log, made safe for a terminal."""
        path = self.log_path(name)
        if path is None or not path.exists():
            return ""
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            data = f.read()
        return neutralize(data.decode("utf-8", errors="replace"))

    # ---- tools ----------------------------------------------------------------------------------

    def _lost(self, connection: McpConnection) -> None:
        """A server that was up went away (it crashed, or its connection broke)."""
        self._emit_status(connection)

    def _tools_changed(self, connection: McpConnection) -> None:
        """Called by a connection's owner task after it re-listed its tools."""
        if not self._started:
            return  # astart registers the newest listing itself (server-everything changes at once)
        if self._sync_tools(connection):
            self._emit_status(connection, "tool list changed")
            if self.session is not None:
                self.session.refresh_tool_menu()

    def _sync_tools(self, connection: McpConnection) -> bool:
        """Make the registry hold exactly this server's current tools. True when anything changed."""
        if connection.status != "connected":
            # a server that went away keeps its tools: they fail with a clear error, and the
            # model's menu (and the provider's prompt cache) does not change under it
            return False
        server = connection.config
        wanted = {tool_name(server.name, tool.name): (tool, fingerprint(tool)) for tool in connection.tools}
        changed = False
        for name, (owner, _) in list(self._registered.items()):
            if owner == server.name and (name not in wanted or wanted[name][1] != self._registered[name][1]):
                self.registry.unregister(name)
                del self._registered[name]
                changed = True
        for name, (tool, print_) in wanted.items():
            if self._registered.get(name, ("", ""))[0] == server.name:
                continue  # unchanged (changed ones were unregistered above)
            if self.registry.resolve(name) is not None:
                self._warn("mcp_tool_name_collision",
                           f'MCP server "{server.name}": tool {tool.name!r} would be named {name}, '
                           "which is already taken; it was left out")
                continue
            if len(full_tool_name(server.name, tool.name)) > MAX_TOOL_NAME_CHARS:
                self._warn("mcp_tool_renamed", f'MCP server "{server.name}": tool {tool.name!r} is offered as {name} '
                                               f"(tool names are at most {MAX_TOOL_NAME_CHARS} characters)")
            try:
                spec = make_tool_spec(server.name, tool, connection, timeout_ms=tool_timeout_ms(server.timeout_ms),
                                      supports_images=lambda: self.supports_images,
                                      revive=partial(self.revive, server.name))
            except InvalidToolSchema as exc:
                self._warn("mcp_tool_skipped", f'MCP server "{server.name}": tool {tool.name!r} left out: {exc}')
                continue
            self.registry.register(spec)
            if self.hides_tool(name):
                self.registry.hide(name)
            self._registered[name] = (server.name, print_)
            changed = True
        return changed

    # ---- events ---------------------------------------------------------------------------------

    def _emit(self, event: Any) -> None:
        if self.session is not None:
            self.session.emit(event)

    def _emit_status(self, connection: McpConnection, note: str = "") -> None:
        count = sum(1 for server, _ in self._registered.values() if server == connection.name)
        message = neutralize(connection.message) or note
        self._emit(McpServerStatus(server=connection.name, status=connection.status, tools=count,
                                   message=message, log_path=str(connection.log_path)))

    def _warn(self, code: str, message: str, problem: ConfigProblem | None = None) -> None:
        detail = {"source": problem.source, "server": problem.server} if problem is not None else {}
        self._emit(Warning(code=code, message=message, detail=detail))

    def _log_path(self, name: str, taken: set[Path]) -> Path:
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        path, n = self.log_dir / f"{stem}.stderr.log", 1
        while path in taken:  # "a/b" and "a_b" keep separate logs
            n += 1
            path = self.log_dir / f"{stem}-{n}.stderr.log"
        return path

    def _route_sdk_logs(self) -> None:
        """The SDK logs through `logging`; with no handler Python prints warnings to stderr, over
        the TUI. They go to a file next to the servers' logs instead."""
        if self._log_handler is not None:
            return
        self.log_dir.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(self.log_dir / "sdk.log", encoding="utf-8", delay=True)
        handler.setLevel(logging.WARNING)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        for name in _SDK_LOGGERS:
            logger = logging.getLogger(name)
            logger.addHandler(handler)
            logger.propagate = False
        self._log_handler = handler
