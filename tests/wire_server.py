"""A loopback HTTP server that speaks the providers' streaming wire formats, for tests.

Each request is recorded (path, headers, raw body) and answered with the next queued `Reply`:
a status, headers and a body sent as HTTP/1.1 chunks, optionally slowly, optionally cut by a TCP
reset. The builders below produce response bodies in the exact shape the real services send
(Anthropic Messages SSE events, OpenAI chat.completion.chunk lines); the SDK parity tests prove
it by feeding the same bytes to the official SDKs.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Piece:
    data: bytes
    delay: float = 0.0
    #: the server notes when it first sends a piece with this label (tests compare it with event times)
    label: str | None = None


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    pieces: list[Piece] = field(default_factory=list)
    #: after this many pieces, reset the connection (RST) instead of finishing the body
    reset_after: int | None = None


@dataclass
class Captured:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class LoopbackServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Captured] = []
        self.sent_at: dict[str, float] = {}
        #: answers some requests on the side, by what they are (an agent's background title request)
        self.aside: Callable[[Captured], Reply | None] | None = None
        self.aside_requests: list[Captured] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = self.rfile.read(length)
                captured = Captured(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                aside = server.aside(captured) if server.aside is not None else None
                if aside is not None:  # a request the test answers on the side (not queued, not recorded)
                    server.aside_requests.append(captured)
                    server._answer(self, aside)
                    return
                with server._lock:
                    server.requests.append(captured)
                    reply = server.replies.pop(0) if server.replies else Reply(
                        500, {"content-type": "application/json"},
                        [Piece(b'{"error": {"type": "test_error", "message": "no reply queued"}}')])
                server._answer(self, reply)

            def finish(self) -> None:
                try:
                    super().finish()
                except (OSError, ValueError):
                    pass

        class Quiet(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that hangs up (a test of a reset, an SDK closing early) is not news

        self.httpd = Quiet(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        # a short poll: `shutdown()` waits for the serving loop to look (0.5 s by default, per test)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def _answer(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        try:
            handler.send_response(reply.status)
            for key, value in reply.headers.items():
                handler.send_header(key, value)
            handler.send_header("transfer-encoding", "chunked")
            handler.end_headers()
            handler.wfile.flush()
            for number, piece in enumerate(reply.pieces):
                if reply.reset_after is not None and number >= reply.reset_after:
                    _reset(handler.connection)
                    handler.close_connection = True
                    return
                if piece.delay:
                    time.sleep(piece.delay)
                if piece.label:
                    self.sent_at.setdefault(piece.label, time.time())
                handler.wfile.write(f"{len(piece.data):x}\r\n".encode() + piece.data + b"\r\n")
                handler.wfile.flush()
            if reply.reset_after is not None:
                _reset(handler.connection)
                handler.close_connection = True
                return
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except OSError:
            handler.close_connection = True


def _reset(sock: socket.socket) -> None:
    # a reset throws away whatever the peer has not read yet: give it time to read what was sent
    time.sleep(0.2)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def json_reply(status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, {"content-type": "application/json", **(headers or {})},
                 [Piece(json.dumps(body).encode())])


# ---- Anthropic Messages stream ---------------------------------------------------------------------

SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"

def sse(events: list[dict[str, Any]], *, delay: float = 0.0, labels: bool = True) -> list[Piece]:
    return [Piece(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode(), delay,
                  e["type"] if labels else None) for e in events]


def anthropic_events(
    *,
    text: str | list[str] = "",
    tool_calls: list[dict[str, Any]] = (),  # type: ignore[assignment]
    thinking: str | None = None,
    stop_reason: str | None = None,
    usage: dict[str, int] | None = None,
    model: str = "claude-sonnet-4-5-20250929",
    fragment: int = 12,
) -> list[dict[str, Any]]:
    """The events of one streamed message, in the order and shape the API sends them."""
    usage = usage or {"input_tokens": 120, "output_tokens": 30}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant", "content": [],
        "model": model, "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": usage["input_tokens"], "cache_creation_input_tokens": usage.get("cache_write", 0),
                  "cache_read_input_tokens": usage.get("cache_read", 0), "output_tokens": 1,
                  "service_tier": "standard"}}}]
    index = 0
    if thinking is not None:
        events.append({"type": "content_block_start", "index": index,
                       "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
        for i in range(0, len(thinking), fragment):
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "thinking_delta", "thinking": thinking[i:i + fragment]}})
        events.append({"type": "content_block_delta", "index": index,
                       "delta": {"type": "signature_delta", "signature": SIGNATURE}})
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    parts = [text] if isinstance(text, str) else text
    if any(parts):
        events.append({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
        events.append({"type": "ping"})
        for part in parts:
            for i in range(0, len(part), fragment):
                events.append({"type": "content_block_delta", "index": index,
                               "delta": {"type": "text_delta", "text": part[i:i + fragment]}})
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    for call in tool_calls:
        raw = call["input_json"] if "input_json" in call else json.dumps(call["input"])
        events.append({"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": call["id"], "name": call["name"], "input": {}}})
        events.append({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": ""}})
        for i in range(0, len(raw), fragment):
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": raw[i:i + fragment]}})
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    stop = stop_reason or ("tool_use" if tool_calls else "end_turn")
    events.append({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                   "usage": {"output_tokens": usage["output_tokens"]}})
    events.append({"type": "message_stop"})
    return events


def anthropic_reply(**kw: Any) -> Reply:
    delay = kw.pop("delay", 0.0)
    return Reply(pieces=sse(anthropic_events(**kw), delay=delay))


# ---- OpenAI chat.completion.chunk stream -------------------------------------------------------------

def openai_chunks(
    *,
    text: str = "",
    tool_calls: list[dict[str, Any]] = (),  # type: ignore[assignment]
    finish_reason: str | None = None,
    usage: dict[str, int] | None = None,
    model: str = "gpt-4.1-2025-04-14",
    fragment: int = 12,
    ids: bool = True,
    whole_arguments: bool = False,
    usage_chunk: bool = True,
) -> list[dict[str, Any]]:
    """The chunks of one streamed completion, as OpenAI sends them with include_usage."""
    base = {"id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion.chunk",
            "created": 1741570283, "model": model, "service_tier": "default",
            "system_fingerprint": "fp_eb9dce56a8"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
                "usage": None}

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    for i in range(0, len(text), fragment):
        out.append(chunk({"content": text[i:i + fragment]}))
    for n, call in enumerate(tool_calls):
        raw = call["input_json"] if "input_json" in call else json.dumps(call["input"])
        first: dict[str, Any] = {"index": n, "type": "function",
                                 "function": {"name": call["name"], "arguments": raw if whole_arguments else ""}}
        if ids:
            first["id"] = call["id"]
        out.append(chunk({"tool_calls": [first]}))
        if not whole_arguments:
            for i in range(0, len(raw), fragment):
                out.append(chunk({"tool_calls": [{"index": n, "function": {"arguments": raw[i:i + fragment]}}]}))
    out.append(chunk({}, finish_reason or ("tool_calls" if tool_calls else "stop")))
    if usage_chunk:
        usage = usage or {"prompt_tokens": 150, "completion_tokens": 25, "cached": 0}
        out.append({**base, "choices": [], "usage": {
            "prompt_tokens": usage["prompt_tokens"], "completion_tokens": usage["completion_tokens"],
            "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
            "prompt_tokens_details": {"cached_tokens": usage.get("cached", 0), "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}})
    return out


def data_lines(chunks: list[dict[str, Any]], *, done: bool = True, delay: float = 0.0) -> list[Piece]:
    pieces = [Piece(f"data: {json.dumps(c)}\n\n".encode(), delay) for c in chunks]
    if done:
        pieces.append(Piece(b"data: [DONE]\n\n", delay, "done"))
    return pieces


def openai_reply(**kw: Any) -> Reply:
    done = kw.pop("done", True)
    delay = kw.pop("delay", 0.0)
    return Reply(pieces=data_lines(openai_chunks(**kw), done=done, delay=delay))


# ---- what a Vigil provider streamed, assembled into content blocks ----------------------------------

@dataclass
class Streamed:
    blocks: list[dict[str, Any]]
    stop_reason: str | None
    usage: dict[str, int]
    retries: list[Any]
    #: thinking as it streamed, piece by piece
    thinking_pieces: list[str] = field(default_factory=list)


async def collect(model: Any, request: Any) -> Streamed:
    from tui_app.runtime.model import (
        BlockStop,
        Retrying,
        StepStop,
        TextDelta,
        ThinkingBlockDone,
        ThinkingDelta,
        ToolInputDelta,
        ToolUseStart,
    )

    blocks: dict[int, dict[str, Any]] = {}
    stop: StepStop | None = None
    retries = []
    pieces: list[str] = []
    async for event in model.stream(request):
        if isinstance(event, TextDelta):
            blocks.setdefault(event.index, {"type": "text", "text": ""})["text"] += event.text
        elif isinstance(event, ToolUseStart):
            blocks[event.index] = {"type": "tool_use", "id": event.id, "name": event.name, "json": ""}
        elif isinstance(event, ToolInputDelta):
            blocks[event.index]["json"] += event.partial_json
        elif isinstance(event, BlockStop) and blocks.get(event.index, {}).get("type") == "tool_use":
            block = blocks[event.index]
            block["input"] = json.loads(block.pop("json") or "{}")
        elif isinstance(event, ThinkingDelta):
            pieces.append(event.text)
        elif isinstance(event, ThinkingBlockDone):
            blocks[event.index] = dict(event.raw)
        elif isinstance(event, StepStop):
            stop = event
        elif isinstance(event, Retrying):
            retries.append(event)
    assert stop is not None, "the provider ended without a StepStop"
    return Streamed([blocks[i] for i in sorted(blocks)], stop.stop_reason, stop.usage, retries, pieces)
