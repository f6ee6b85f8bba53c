"""One MCP server connection, owned by one asyncio task.

The SDK's transports and sessions are anyio task groups and cancel scopes: they must be entered
and left by the same task ("Attempted to exit cancel scope in a different task"). So each server
gets an owner task that opens the transport and the ClientSession, does the handshake and the
tool listing, then waits for commands (refresh the tool list, close) or for the server to go
away. Tool calls come straight from the pipeline's tasks: the SDK correlates requests itself.

The server's stderr goes to a log file, never to the terminal (it would write over the TUI).
The SDK is imported here, lazily, only when a server is really started.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from tui_app.mcp.config import ServerConfig

Status = Literal["connecting", "connected", "failed", "disconnected", "needs-trust"]
ProgressFn = Callable[[float, "float | None", "str | None"], None]

CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
CLOSE_WAIT_S = 10.0
MAX_TOOL_PAGES = 100


class ServerUnavailable(Exception):
    """The server is not connected, or went away during the call (`MCPError -32000`)."""

    def __init__(self, message: str, *, during_call: bool = False) -> None:
        super().__init__(message)
        self.during_call = during_call


class CallTimedOut(Exception):
    """The SDK's read timeout fired; it has sent the server a cancellation."""


class CallRejected(Exception):
    """The server answered the call with a protocol error (or a result the SDK refused)."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


def describe_error(exc: BaseException) -> str:
    """The innermost meaningful message of an exception (task groups wrap everything)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    code = getattr(exc, "code", None)
    text = str(getattr(exc, "message", None) or exc).strip() or type(exc).__name__
    if isinstance(exc, TimeoutError) and text == "TimeoutError":
        text = "timed out"
    if isinstance(code, int) and type(exc).__name__ == "MCPError":
        text = f"{text} (MCPError {code})"
    return text


def last_log_line(path: Path, limit: int = 4096) -> str:
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - limit))
            tail = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in tail.splitlines() if line.strip() and not line.startswith("[vigil]")]
    return lines[-1][:300] if lines else ""


class _WatchedReadStream:
    """The transport's read stream, telling us when the server's side ends (the process exited,
    the stream closed): the SDK itself only notices at the next request."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except Exception:
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, Exception):
            self._on_end()
            raise

    async def __aenter__(self) -> _WatchedReadStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._inner.__aexit__(*exc)


class McpConnection:
    def __init__(self, config: ServerConfig, log_path: Path, *, startup_timeout_s: float,
                 on_tools_changed: Callable[[McpConnection], Awaitable[None] | None] | None = None,
                 on_lost: Callable[[McpConnection], None] | None = None,
                 client_version: str = "0.1.0") -> None:
        self.config = config
        self.log_path = log_path
        self.startup_timeout_s = startup_timeout_s
        self.on_tools_changed = on_tools_changed
        #: called when a connected server goes away on its own (not when we close it)
        self.on_lost = on_lost
        self.client_version = client_version
        self.status: Status = "disconnected"
        #: it started once: going away later is something a restart may mend
        self.was_connected = False
        self.message = ""
        self.tools: list[Any] = []
        self.server_name = ""
        self.protocol_version = ""
        self.startup_ms: int | None = None
        self._session: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._inbox: asyncio.Queue[str] | None = None
        self._ready: asyncio.Event | None = None
        self._closing = False

    @property
    def name(self) -> str:
        return self.config.name

    # ---- lifecycle (the owner task) -------------------------------------------------------------

    async def connect(self) -> None:
        """Start the owner task and wait until the server is connected or has failed. Never raises."""
        if self._owner is not None and not self._owner.done():
            return
        self.status, self.message, self._closing = "connecting", "", False
        self._inbox = asyncio.Queue()
        self._ready = asyncio.Event()
        self._owner = asyncio.create_task(self._own(), name=f"mcp-{self.name}")
        waiter = asyncio.create_task(self._ready.wait())
        await asyncio.wait({waiter, self._owner}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()

    async def close(self) -> None:
        owner = self._owner
        if owner is None or owner.done():
            return
        self._closing = True
        assert self._inbox is not None
        self._inbox.put_nowait("close")
        # the SDK's stdio shutdown is bounded (stdin close, TERM, KILL); this is a last resort
        done, _ = await asyncio.wait({owner}, timeout=CLOSE_WAIT_S)
        if not done:
            owner.cancel()
            await asyncio.gather(owner, return_exceptions=True)

    async def _own(self) -> None:
        started = time.perf_counter()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("a", encoding="utf-8", errors="replace") as errlog:
            errlog.write(f"[vigil] {time.strftime('%Y-%m-%d %H:%M:%S')} starting {self._describe_target()}\n")
            errlog.flush()
            try:
                await self._run(errlog, started)
            except Exception as exc:
                reason = describe_error(exc)
                if self._closing:  # a server that dies while we close it has still been closed
                    errlog.write(f"[vigil] while closing: {reason}\n")
                    self.status = "disconnected"
                    return
                if isinstance(_innermost(exc), TimeoutError) and self.status == "connecting":
                    reason = f"did not finish starting within {int(self.startup_timeout_s * 1000)} ms"
                self._fail(reason, errlog)
            finally:
                assert self._ready is not None
                self._session = None
                if self.status == "connected":
                    self.status = "disconnected"
                errlog.write(f"[vigil] {time.strftime('%Y-%m-%d %H:%M:%S')} connection {self.status}\n")
                self._ready.set()

    def _fail(self, reason: str, errlog: Any) -> None:
        errlog.write(f"[vigil] {reason}\n")
        errlog.flush()
        hint = last_log_line(self.log_path)
        self.status = "failed"
        self.message = f"{reason}; server said: {hint}" if hint and hint not in reason else reason
        was_up = self._ready is not None and self._ready.is_set()
        if was_up and not self._closing and self.on_lost is not None:
            self.on_lost(self)  # now, not after the transport has finished shutting down

    async def _run(self, errlog: Any, started: float) -> None:
        import anyio
        from mcp import ClientSession
        from mcp.types import Implementation

        inbox = self._inbox
        assert inbox is not None and self._ready is not None
        ended = False

        def on_end() -> None:
            nonlocal ended
            if not ended:
                ended = True
                inbox.put_nowait("ended")

        async def on_message(message: Any) -> None:
            if isinstance(message, Exception):
                errlog.write(f"[vigil] transport error: {describe_error(message)}\n")
                errlog.flush()
            elif getattr(message, "method", None) == "notifications/tools/list_changed":
                inbox.put_nowait("refresh")

        async def on_log(params: Any) -> None:
            errlog.write(f"[server log {params.level}] {params.data}\n")
            errlog.flush()

        async with self._transport(errlog) as (read, write):
            watched = _WatchedReadStream(read, on_end)
            client = ClientSession(watched, write, message_handler=on_message, logging_callback=on_log,
                                   client_info=Implementation(name="vigil", version=self.client_version))
            async with client as session:
                with anyio.fail_after(self.startup_timeout_s):
                    init = await session.initialize()
                    self.tools = await self._list_tools(session)
                self.server_name = " ".join(p for p in (init.server_info.name, init.server_info.version) if p)
                self.protocol_version = init.protocol_version
                self.startup_ms = int((time.perf_counter() - started) * 1000)
                self._session, self.status, self.message = session, "connected", ""
                self.was_connected = True
                self._ready.set()
                await self._serve(session, inbox, errlog)

    async def _serve(self, session: Any, inbox: asyncio.Queue[str], errlog: Any) -> None:
        while True:
            commands = [await inbox.get()]
            while not inbox.empty():  # a burst of notifications needs one listing
                commands.append(inbox.get_nowait())
            if "close" in commands:
                return
            if "ended" in commands:
                self._session = None
                self._fail("the server closed the connection (its process exited?)", errlog)
                return
            try:
                self.tools = await self._list_tools(session)
            except Exception as exc:
                errlog.write(f"[vigil] listing tools after a change failed: {describe_error(exc)}\n")
                continue
            if self.on_tools_changed is not None:
                result = self.on_tools_changed(self)
                if result is not None:
                    await result

    @staticmethod
    async def _list_tools(session: Any) -> list[Any]:
        from mcp.types import PaginatedRequestParams

        tools: list[Any] = []
        cursor = None
        for _ in range(MAX_TOOL_PAGES):
            page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    def _transport(self, errlog: Any) -> contextlib.AbstractAsyncContextManager[Any]:
        config = self.config
        if config.transport == "stdio":
            from mcp import StdioServerParameters, stdio_client

            from tui_app.runtime.processes.reaper import token_env

            # the SDK passes only a few variables on: the reaper's token goes explicitly
            params = StdioServerParameters(command=config.command, args=list(config.args),
                                           env={**token_env(), **config.env},
                                           cwd=config.cwd, encoding_error_handler="replace")
            return stdio_client(params, errlog=errlog)
        if config.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(config.url, headers=dict(config.headers) or None)
        return _http_transport(config)

    def _describe_target(self) -> str:
        config = self.config
        if config.transport == "stdio":
            return " ".join([config.command, *config.args])
        return f"{config.transport} {config.url}"

    # ---- calls (any task) -----------------------------------------------------------------------

    def unavailable_message(self) -> str:
        state = self.status if not self.message else f"{self.status}: {self.message}"
        return (f'MCP server "{self.name}" is not connected ({state}) (MCPError {CONNECTION_CLOSED}). '
                "It can be reconnected from the MCP servers list.")

    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float | None,
                   on_progress: ProgressFn | None = None) -> Any:
        """Call a tool; the SDK's CallToolResult, or ServerUnavailable / CallTimedOut / CallRejected."""
        from mcp.shared.exceptions import MCPError

        session = self._session
        if session is None or self.status != "connected":
            raise ServerUnavailable(self.unavailable_message())
        settled = False

        async def progress(value: float, total: float | None, message: str | None) -> None:
            # servers keep reporting on calls they were told to cancel (server-everything does)
            if not settled and on_progress is not None:
                on_progress(value, total, message)

        try:
            return await session.call_tool(tool, arguments, read_timeout_seconds=timeout_s,
                                           progress_callback=progress)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise CallTimedOut(describe_error(exc)) from None
            if exc.code == CONNECTION_CLOSED:
                raise ServerUnavailable(
                    f'MCP server "{self.name}" went away during the call: {exc.message} '
                    f"(MCPError {CONNECTION_CLOSED}). Whether the call had an effect is unknown.",
                    during_call=True) from None
            raise CallRejected(f"{exc.message} (MCPError {exc.code})", exc.code) from None
        except RuntimeError as exc:  # structured content that fails the tool's output schema
            raise CallRejected(str(exc)) from None
        finally:
            settled = True


def _innermost(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


@contextlib.asynccontextmanager
async def _http_transport(config: ServerConfig) -> Any:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers=dict(config.headers) or None) as http,
        streamable_http_client(config.url, http_client=http) as streams,
    ):
        yield streams
