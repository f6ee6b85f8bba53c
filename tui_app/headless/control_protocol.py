"""The server side of Claude Code's control protocol: one JSON object per line each way.

The program driving Vigil (an Agent SDK) sends `control_request`s (initialize, interrupt,
set_permission_mode …) and user turns; Vigil answers each request with a `control_response`.
Vigil sends its own `control_request`s (`can_use_tool`, `hook_callback`) and waits for the
matching response; a request Vigil no longer needs (a hook answered first, the turn was
interrupted) is withdrawn with `control_cancel_request`.

    {"type": "control_request", "request_id": "…", "request": {"subtype": "…", …}}
    {"type": "control_response", "response": {"subtype": "success", "request_id": "…", "response": {…}}}
    {"type": "control_response", "response": {"subtype": "error", "request_id": "…", "error": "…"}}
    {"type": "control_cancel_request", "request_id": "…"}
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import threading
from collections.abc import Callable
from typing import IO, Any


class ControlError(Exception):
    """The other side answered a request with an error, or can no longer answer."""


class ControlChannel:
    """Requests Vigil makes of its driver, paired with their responses by id."""

    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self.write = write
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self.closed = False
        #: called with the number of requests waiting for an answer, whenever it changes
        self.on_waiting: Callable[[int], None] = lambda _n: None

    async def request(self, request: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        """Send a request and wait for its response (`ControlError` on an error answer, on a
        closed input, or after `timeout_s`). Cancelling the wait withdraws the request."""
        if self.closed:
            raise ControlError("the driver's input is closed: nobody can answer")
        request_id = f"vigil-{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.on_waiting(len(self._pending))
        self.write({"type": "control_request", "request_id": request_id, "request": request})
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout_s)
        except TimeoutError:
            self.write({"type": "control_cancel_request", "request_id": request_id})
            raise ControlError(f"no answer to {request.get('subtype')} within {timeout_s:g} s") from None
        except asyncio.CancelledError:
            if not future.done():
                self.write({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)
            self.on_waiting(len(self._pending))

    def take_response(self, message: dict[str, Any]) -> bool:
        """A `control_response` from the driver; False if it answers nothing Vigil is waiting for."""
        response = message.get("response")
        if not isinstance(response, dict):
            return False
        future = self._pending.get(str(response.get("request_id")))
        if future is None or future.done():
            return False
        if response.get("subtype") == "error":
            future.set_exception(ControlError(str(response.get("error") or "the driver answered with an error")))
        else:
            body = response.get("response")
            future.set_result(body if isinstance(body, dict) else {})
        return True

    def close(self) -> None:
        """The driver's input ended: every open request fails, and no new one is sent."""
        self.closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlError("the driver's input closed before it answered"))

    # ---- answers to the driver's requests ------------------------------------------------------

    def respond(self, request_id: str, body: dict[str, Any] | None = None) -> None:
        self.write({"type": "control_response",
                    "response": {"subtype": "success", "request_id": request_id, "response": body or {}}})

    def respond_error(self, request_id: str, error: str) -> None:
        self.write({"type": "control_response",
                    "response": {"subtype": "error", "request_id": request_id, "error": error}})


def line_writer(out: IO[str]) -> Callable[[dict[str, Any]], None]:
    def write(obj: dict[str, Any]) -> None:
        out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        out.flush()

    return write


def read_lines(stream: IO[bytes] | None = None) -> asyncio.Queue[bytes | None]:
    """Lines of `stream` (stdin) on a queue, read by a daemon thread so that a pipe, a file or a
    terminal all work and a blocked read never keeps the process alive; None marks the end."""
    source = stream if stream is not None else sys.stdin.buffer
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    def pump() -> None:
        try:
            for raw in iter(source.readline, b""):
                loop.call_soon_threadsafe(queue.put_nowait, raw)
        except (OSError, ValueError):
            pass
        finally:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, None)
            except RuntimeError:  # the loop is gone: nobody is reading any more
                pass

    threading.Thread(target=pump, name="vigil-stdin", daemon=True).start()
    return queue


def parse_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """One input line as an object, or the reason it is not one (blank lines are skipped)."""
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        return None, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"input line is not JSON ({exc.msg} at column {exc.colno}): {text[:120]}"
    if not isinstance(data, dict):
        return None, f"input line is not a JSON object: {text[:120]}"
    return data, None
