"""The TUI's runner for a session the host holds: the SessionRunner's shape over the socket.

A thread of its own runs an event loop that holds the connection: `connect()` says hello and
attaches (the whole log replayed, then live, partial text included); events are decoded and
buffered for the UI's `drain()`; `send` and `facts` go over the wire and come back as Futures.
Closing detaches: the session goes on in the host.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from tui_app.host.client import HostClient
from tui_app.host.wire import WireError
from tui_app.runtime.commands import Refused, Reply, SessionFacts
from tui_app.runtime.events import parse_event

_REPLY: TypeAdapter[Any] = TypeAdapter(Reply)

#: events that start and end what makes a session busy
_BUSY_ON = frozenset({"TurnStarted", "CompactionStarted"})
_BUSY_OFF = frozenset({"TurnEnded", "ConversationCompacted", "SessionEnded"})


class RemoteRunner:
    #: closing it leaves the session running (the app says so)
    detaches = True

    def __init__(
        self,
        session_id: str,
        *,
        client: str = "tui",
        socket_path: str | Path | None = None,
        start_host: bool = True,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.session_id = session_id
        self.client_name = client
        self.socket_path = socket_path
        self.start_host = start_host
        self.on_error = on_error
        self.initial_mode = "default"
        self.cwd = ""
        self.attached: dict[str, Any] = {}
        self.ended: dict[str, Any] | None = None
        self._events: deque[Any] = deque()
        self._lock = threading.Lock()
        self._subscribers: list[Callable[[Any], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._host: HostClient | None = None
        self._busy = False

    # ---- the runner's thread -------------------------------------------------------------------

    def _on_event(self, session_id: str, data: bytes) -> None:
        if session_id != self.session_id:
            return
        try:
            event = parse_event(data)
        except ValueError:
            return  # an event this version does not know: the rest still shows
        if event.type in _BUSY_ON and event.agent_id is None:
            self._busy = True
        elif event.type in _BUSY_OFF and event.agent_id is None:
            self._busy = False
        with self._lock:
            self._events.append(event)
        for subscriber in tuple(self._subscribers):
            subscriber(event)

    def _on_notify(self, method: str, params: dict[str, Any]) -> None:
        if params.get("session") == self.session_id and method == "ended":
            self.ended = params

    async def _connect(self) -> None:
        self._host = await HostClient.connect(
            client=self.client_name,
            start=self.start_host,
            socket_path=self.socket_path,
            on_notify=self._on_notify,
            on_event=self._on_event,
        )
        self.attached = await self._host.call("attach", session=self.session_id, after_seq=0, partial=True)
        row = self.attached.get("row") or {}
        self.cwd = str(row.get("cwd") or "")
        self._busy = row.get("state") == "running"
        if self.attached.get("state") not in ("ended", "interrupted"):
            facts = await self._host.call("facts", session=self.session_id)
            self.initial_mode = str(facts.get("permission_mode") or "default")

    def connect(self, timeout: float = 30.0) -> None:
        """Reach the host and attach (blocking); HostUnavailable or WireError when that fails."""
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="vigil-host-client", daemon=True)
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self._connect(), loop).result(timeout)
        except BaseException:
            self.close()
            raise

    # ---- the SessionRunner's shape ---------------------------------------------------------------

    def subscribe(self, subscriber: Callable[[Any], None]) -> None:
        self._subscribers.append(subscriber)

    def start(self, start: Any = None, wait: float = 10.0) -> None:
        """Connected already (`connect()`): the events are on their way."""

    def drain(self) -> list[Any]:
        with self._lock:
            if not self._events:
                return []
            events = list(self._events)
            self._events.clear()
        return events

    def _call(self, coro: Any) -> Future[Any]:
        assert self._loop is not None, "runner not connected"
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def send(self, command: Any) -> Future[Any]:
        async def go() -> Reply:
            assert self._host is not None
            try:
                data = await self._host.call(
                    "command", session=self.session_id, command=command.model_dump(mode="json")
                )
            except WireError as exc:
                return Refused(
                    code="ended" if exc.code in ("ended", "connection_lost") else "failed", message=exc.message
                )
            return _REPLY.validate_python(data)

        return self._call(go())

    def facts(self) -> Future[Any]:
        async def go() -> SessionFacts:
            assert self._host is not None
            return SessionFacts.model_validate(await self._host.call("facts", session=self.session_id))

        return self._call(go())

    @property
    def busy(self) -> bool:
        return self._busy

    def close(self, timeout: float = 15.0) -> None:
        """Detach: the connection closes; the session goes on in the host."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        host, self._host = self._host, None

        async def leave() -> None:
            if host is not None:
                await host.close()

        try:
            asyncio.run_coroutine_threadsafe(leave(), loop).result(timeout)
        except Exception:
            pass
        finally:
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout)
