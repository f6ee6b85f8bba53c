"""The host's wire: JSON lines over a stream, both ways, with request/response ids, notifications
and cancellation — one symmetric `Peer` for the host and for its clients.

    {"id": 7, "method": "attach", "params": {...}}       a request (answered once, by id)
    {"id": 7, "result": {...}}                           its answer
    {"id": 7, "error": {"code": "...", "message": "..."}}
    {"method": "event", "params": {...}}                 a notification (no answer)
    {"method": "$/cancel", "params": {"id": 7}}          the asker gave up: the handler is cancelled

A line that is not JSON, or not one of these, is answered with an error (`id` null) and the
connection goes on: a bad client never takes the host down. The first request of a client is
`hello` with its WIRE_VERSION; a host speaking another version refuses it with a clear message.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Awaitable, Callable
from typing import Any

#: bumped whenever a method or a message changes shape
WIRE_VERSION = 1
#: one line may carry a whole diff or a big tool result
MAX_LINE = 64 * 1024 * 1024
CANCEL = "$/cancel"

Handler = Callable[[dict[str, Any]], Awaitable[Any]]
NotifyHandler = Callable[[str, dict[str, Any]], Any]
#: (session id, the event's own JSON): events skip the generic decoding (a replay has thousands)
EventHandler = Callable[[str, bytes], Any]
#: how every event notification starts (the host writes them so: `event_line_prefix`)
EVENT_PREFIX = b'{"method":"event","params":{"session":'
_EVENT_MIDDLE = b',"event":'
READ_CHUNK = 1 << 18


def event_line_prefix(session_id: str) -> str:
    """The start of an event notification of `session_id`; the event's JSON and `}}` follow."""
    return EVENT_PREFIX.decode() + dumps(session_id) + _EVENT_MIDDLE.decode()


def split_event(line: bytes) -> tuple[str, bytes] | None:
    """(session id, event JSON) of an event notification written after `event_line_prefix`."""
    middle = line.find(_EVENT_MIDDLE, len(EVENT_PREFIX))
    if middle < 0 or not line.endswith(b"}}"):
        return None
    quoted = line[len(EVENT_PREFIX) : middle]
    if len(quoted) < 2 or quoted[:1] != b'"' or quoted[-1:] != b'"' or b"\\" in quoted:
        return None  # session ids are plain words; anything else takes the generic way
    return quoted[1:-1].decode("utf-8", "replace"), line[middle + len(_EVENT_MIDDLE) : -2]


class WireError(Exception):
    """An error to answer a request with (raised by a handler), or the answer a peer got."""

    def __init__(self, code: str, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class ConnectionLost(WireError):
    def __init__(self, message: str = "the connection to the host was lost") -> None:
        super().__init__("connection_lost", message)


def version_mismatch(theirs: Any) -> WireError:
    return WireError(
        "version_mismatch",
        (
            f"this host speaks wire version {WIRE_VERSION} and the client version {theirs}: they are different Vigil "
            "versions. Stop the host (`vigil host stop`, which ends its sessions) and run the client again, or use the "
            "vigil the host was started from."
        ),
        {"host": WIRE_VERSION, "client": theirs},
    )


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Peer:
    """One end of a connection. `handlers` answer the other end's requests; `on_notify` hears its
    notifications. `run()` reads until the other end goes away."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        handlers: dict[str, Handler] | None = None,
        on_notify: NotifyHandler | None = None,
        on_event: EventHandler | None = None,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.handlers = dict(handlers or {})
        self.on_notify = on_notify
        self.on_event = on_event
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._running: dict[Any, asyncio.Task[Any]] = {}
        self.closed = asyncio.Event()

    # ---- sending ---------------------------------------------------------------------------------

    def send_line(self, line: str) -> None:
        """Queue one whole line (a message already encoded); lines are never interleaved."""
        self.send_bytes(line.encode("utf-8") + b"\n")

    def send_bytes(self, data: bytes) -> None:
        """Queue whole lines, each ending with a newline, in one write."""
        if not self.writer.is_closing():
            self.writer.write(data)

    def buffered(self) -> int:
        """Bytes written and not yet taken by the socket."""
        transport = self.writer.transport
        return transport.get_write_buffer_size() if transport is not None and not transport.is_closing() else 1 << 30

    async def drain(self) -> None:
        try:
            await self.writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise ConnectionLost() from exc

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send_line(dumps({"method": method, "params": params}))

    async def request(self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        """Ask the other end; its result, or WireError with its code. Cancelled (or timed out), the
        other end is told to give up too."""
        if self.closed.is_set():
            raise ConnectionLost()
        number = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[number] = future
        self.send_line(dumps({"id": number, "method": method, "params": params or {}}))
        try:
            await self.drain()
            return await asyncio.wait_for(future, timeout)
        except (asyncio.CancelledError, TimeoutError):
            with contextlib.suppress(Exception):
                self.notify(CANCEL, {"id": number})
            raise
        finally:
            self._waiting.pop(number, None)

    # ---- receiving -------------------------------------------------------------------------------

    async def run(self) -> None:
        pending = b""
        try:
            while True:
                try:
                    chunk = await self.reader.read(READ_CHUNK)
                except ConnectionError:
                    break
                if not chunk:
                    break
                lines = (pending + chunk).split(b"\n") if pending else chunk.split(b"\n")
                pending = lines.pop()
                for line in lines:
                    if line.strip():
                        self._receive(line)
                if len(pending) > MAX_LINE:
                    self._error(None, "line_too_long", f"a line longer than {MAX_LINE} bytes was refused")
                    break
        finally:
            self.closed.set()
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(ConnectionLost())
            for task in list(self._running.values()):
                task.cancel()
            self.close()

    def _error(self, number: Any, code: str, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.send_line(dumps({"id": number, "error": error}))

    def _receive(self, line: bytes) -> None:
        if self.on_event is not None and line.startswith(EVENT_PREFIX):
            found = split_event(line)
            if found is not None:
                self.on_event(*found)
                return
        try:
            message = json.loads(line)
        except ValueError:
            self._error(None, "parse_error", "that line is not JSON (the wire is one JSON object per line)")
            return
        if not isinstance(message, dict):
            self._error(None, "invalid_request", "a message is a JSON object")
            return
        number = message.get("id")
        method = message.get("method")
        if method is None and number is not None and ("result" in message or "error" in message):
            future = self._waiting.get(number) if isinstance(number, int) else None
            if future is not None and not future.done():
                if "error" in message:
                    error = message["error"] if isinstance(message["error"], dict) else {}
                    future.set_exception(
                        WireError(str(error.get("code", "error")), str(error.get("message", "")), error.get("data"))
                    )
                else:
                    future.set_result(message["result"])
            return
        params = message.get("params", {})
        if not isinstance(method, str) or not isinstance(params, dict):
            self._error(number, "invalid_request", "a request needs a method (a string) and params (an object)")
            return
        if method == CANCEL:
            task = self._running.get(params.get("id"))
            if task is not None:
                task.cancel()
            return
        if number is None:
            if self.on_notify is not None:
                self.on_notify(method, params)
            return
        handler = self.handlers.get(method)
        if handler is None:
            self._error(number, "unknown_method", f"the host knows no method {method!r}")
            return
        if number in self._running:
            self._error(number, "invalid_request", f"request id {number!r} is in use")
            return
        self._running[number] = asyncio.ensure_future(self._answer(number, handler, params))

    async def _answer(self, number: Any, handler: Handler, params: dict[str, Any]) -> None:
        try:
            result = await handler(params)
        except asyncio.CancelledError:
            if not self.closed.is_set():
                self._error(number, "cancelled", "the request was cancelled")
        except WireError as exc:
            self._error(number, exc.code, exc.message, exc.data)
        except Exception as exc:  # a bug in a handler: the client hears of it, the host goes on
            self._error(number, "internal", f"{type(exc).__name__}: {exc}")
        else:
            self.send_line(dumps({"id": number, "result": result}))
        finally:
            self._running.pop(number, None)
        with contextlib.suppress(ConnectionLost):
            await self.drain()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()

    async def aclose(self, timeout: float = 2.0) -> None:
        """Close once what was written has gone out (within `timeout`)."""
        self.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.writer.wait_closed(), timeout)
