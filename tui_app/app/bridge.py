"""Runs a live session on its own thread and event loop, so no tool, hash or output burst can
freeze the screen; hands its events to the UI in batches.

The runtime thread only appends events to a buffer; the UI drains it at most ~30 times a second
(`drain()` from a timer). Everything the UI sends back — a prompt, an interrupt, an approval — is a
command of the session port (`send`), carried out by the session's controller on the runtime's
loop; the reply comes back in a Future.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any

from tui_app.runtime.session import Session


class SessionRunner:
    def __init__(self, session: Session, *, on_error: Callable[[BaseException], None] | None = None) -> None:
        self.session = session
        self._events: deque[Any] = deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopped = threading.Event()
        self.on_error = on_error
        #: the permission mode the session starts in (the screen's first guess, before any event)
        self.initial_mode = session.permission_mode
        session.subscribe(self._collect)

    @property
    def cwd(self) -> str:
        return self.session.cwd

    def subscribe(self, subscriber: Callable[[Any], None]) -> Callable[[], None]:
        """`subscriber` hears every event, on the runtime's thread."""
        return self.session.subscribe(subscriber)

    # ---- runtime thread ---------------------------------------------------------------------

    def _collect(self, event: Any) -> None:
        with self._lock:
            self._events.append(event)

    def _main(self, start: Callable[[], Coroutine[Any, Any, Any]] | None) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            if start is not None:
                loop.run_until_complete(start())
            else:
                loop.run_until_complete(self.session.start())
        except BaseException as exc:  # the UI shows it; the thread must still serve close()
            if self.on_error:
                self.on_error(exc)
        finally:
            self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            self._stopped.set()

    # ---- UI thread ----------------------------------------------------------------------------

    def start(self, start: Callable[[], Coroutine[Any, Any, Any]] | None = None, wait: float = 10.0) -> None:
        self._thread = threading.Thread(target=self._main, args=(start,), name="vigil-runtime", daemon=True)
        self._thread.start()
        self._ready.wait(wait)

    def drain(self) -> list[Any]:
        with self._lock:
            if not self._events:
                return []
            events = list(self._events)
            self._events.clear()
        return events

    def _call(self, coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        assert self._loop is not None, "runner not started"
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def send(self, command: Any) -> Future[Any]:
        """A command of the session port, carried out on the runtime's loop; the Future holds its reply."""
        return self._call(self.session.controller.handle(command))

    def facts(self) -> Future[Any]:
        """The session's facts, read on the runtime's loop (they are its state, not the UI's)."""

        async def read() -> Any:
            return self.session.controller.facts()

        return self._call(read())

    @property
    def busy(self) -> bool:
        return self.session.controller.busy

    def close(self, timeout: float = 15.0) -> None:
        """Interrupt the turn (running processes are killed), close the session (background tasks,
        MCP servers), stop the loop. Blocks the caller until done or `timeout`."""
        if self._loop is None or self._stopped.is_set():
            return
        self.session.interrupt("app exit")

        async def shutdown() -> None:
            try:
                await asyncio.wait_for(self.session.controller.wait_idle(), timeout / 2)
            except (TimeoutError, asyncio.CancelledError, Exception):
                pass
            await self.session.close("exit")

        try:
            self._call(shutdown()).result(timeout)
        except Exception:
            pass
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._stopped.wait(timeout)
