"""The Anthropic Messages API, streamed: `POST {base}/v1/messages` with `stream: true`.

The system prompt, the last tool and the newest message carry `cache_control` breakpoints, so the
prompt cache holds the stable prefix (tools → system → conversation so far) from step to step; the
tool list is encoded once per menu, so its bytes are identical on every request of a session.
Thinking blocks come back exactly as they were streamed (their signature must survive).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tui_app.providers.http_model import HttpModel, compact_json, decode_json
from tui_app.providers.retry import RETRYABLE_ERROR_TYPES, StreamFailure
from tui_app.providers.sse import SSEEvent
from tui_app.providers.wire import int_usage, provider_schema, safe_tool_input
from tui_app.runtime.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
)
from tui_app.runtime.model import (
    BlockStop,
    ModelRequest,
    StepStop,
    StreamEvent,
    TextDelta,
    ThinkingBlockDone,
    ThinkingDelta,
    ToolInputDelta,
    ToolUseStart,
)

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_MAX_TOKENS = 8192
EPHEMERAL = {"type": "ephemeral"}
#: block types that may carry a cache breakpoint (thinking blocks may not)
_CACHEABLE = {"text", "image", "tool_use", "tool_result"}
_ERROR_STATUS = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500}


# ---- request ------------------------------------------------------------------------------------

def encode_part(part: TextBlock | ImageBlock) -> dict[str, Any]:
    if isinstance(part, TextBlock):
        return {"type": "text", "text": part.text}
    return {"type": "image", "source": {"type": "base64", "media_type": part.media_type, "data": part.data}}


def encode_block(block: Any) -> dict[str, Any]:
    if isinstance(block, TextBlock | ImageBlock):
        return encode_part(block)
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": safe_tool_input(block.input)}
    if isinstance(block, ToolResultBlock):
        content = block.content if isinstance(block.content, str) else [encode_part(p) for p in block.content]
        return {"type": "tool_result", "tool_use_id": block.tool_use_id, "content": content,
                "is_error": block.is_error}
    if isinstance(block, ThinkingBlock):
        return dict(block.raw)  # unchanged: the API checks the signature against it
    raise TypeError(f"cannot send a {type(block).__name__} to Anthropic")


def _sendable(block: Any) -> bool:
    # the API rejects text blocks without visible text (models do stream "\n\n" before a call)
    return not isinstance(block, TextBlock) or bool(block.text.strip())


def encode_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        blocks = [encode_block(b) for b in message.content if _sendable(b)]
        if blocks:
            out.append({"role": message.role, "content": blocks})
    if out:
        last = out[-1]["content"][-1]
        if last.get("type") in _CACHEABLE:
            last["cache_control"] = dict(EPHEMERAL)
    return out


def encode_tools(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    out = [{"name": t.name, "description": t.description, "input_schema": provider_schema(t.input_schema)}
           for t in tools]
    if out:
        out[-1]["cache_control"] = dict(EPHEMERAL)
    return out


# ---- response -----------------------------------------------------------------------------------

@dataclass
class _Block:
    kind: str
    raw: dict[str, Any]
    thinking: list[str] = field(default_factory=list)
    signature: str = ""
    got_input: bool = False


@dataclass
class AnthropicDecoder:
    """Turns the Messages API's stream events into the runtime's stream events."""

    started: bool = False
    finished: bool = False
    stop_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    blocks: dict[int, _Block] = field(default_factory=dict)

    def feed(self, data: Any) -> list[StreamEvent]:
        if not isinstance(data, dict):
            raise StreamFailure(f"anthropic sent a stream event that is not an object: {str(data)[:200]}")
        kind = data.get("type")
        if self.finished or kind == "ping":
            return []
        if kind == "error":
            error = data.get("error") if isinstance(data.get("error"), dict) else {}
            etype, message = str(error.get("type", "error")), str(error.get("message", ""))
            raise StreamFailure(f"anthropic stream error: {etype}: {message}".rstrip(": "),
                                status=_ERROR_STATUS.get(etype), retryable=etype in RETRYABLE_ERROR_TYPES)
        if kind == "message_start":
            self.started = True
            self.usage.update(int_usage((data.get("message") or {}).get("usage")))
            return []
        if not self.started:
            raise StreamFailure(f"anthropic stream began with {kind!r} instead of message_start")
        handler = getattr(self, f"_{kind}", None)
        return handler(data) if handler is not None else []  # unknown events may be added: skip them

    def _content_block_start(self, data: dict[str, Any]) -> list[StreamEvent]:
        index, block = data.get("index"), data.get("content_block") or {}
        if not isinstance(index, int) or not isinstance(block, dict):
            raise StreamFailure("anthropic sent a content_block_start without an index or a block")
        kind = block.get("type", "")
        self.blocks[index] = state = _Block(kind, block)
        if kind == "text":
            return [TextDelta(index, block["text"])] if block.get("text") else []
        if kind == "tool_use":
            return [ToolUseStart(index, str(block.get("id") or ""), str(block.get("name") or ""))]
        if kind == "thinking":
            state.thinking.append(block.get("thinking") or "")
            state.signature = block.get("signature") or ""
            return [ThinkingDelta(index, block["thinking"])] if block.get("thinking") else []
        return []

    def _content_block_delta(self, data: dict[str, Any]) -> list[StreamEvent]:
        index, delta = data.get("index"), data.get("delta") or {}
        state = self.blocks.get(index) if isinstance(index, int) else None
        if state is None:
            raise StreamFailure(f"anthropic sent a delta for block {index}, which it never started")
        kind = delta.get("type")
        if kind == "text_delta" and state.kind == "text" and delta.get("text"):
            return [TextDelta(index, delta["text"])]
        if kind == "input_json_delta" and state.kind == "tool_use" and delta.get("partial_json"):
            state.got_input = True
            return [ToolInputDelta(index, delta["partial_json"])]
        if kind == "thinking_delta":
            piece = delta.get("thinking") or ""
            state.thinking.append(piece)
            return [ThinkingDelta(index, piece)] if piece else []
        if kind == "signature_delta":
            state.signature += delta.get("signature") or ""
        return []

    def _content_block_stop(self, data: dict[str, Any]) -> list[StreamEvent]:
        index = data.get("index")
        state = self.blocks.get(index) if isinstance(index, int) else None
        if state is None:
            raise StreamFailure(f"anthropic closed block {index}, which it never started")
        assert isinstance(index, int)
        if state.kind == "text":
            return [BlockStop(index)]
        if state.kind == "tool_use":
            initial = state.raw.get("input")
            # a proxy that sends the whole input at the start and no deltas
            if not state.got_input and isinstance(initial, dict) and initial:
                return [ToolInputDelta(index, compact_json(initial)), BlockStop(index)]
            return [BlockStop(index)]
        if state.kind == "thinking":
            return [ThinkingBlockDone(index, {"type": "thinking", "thinking": "".join(state.thinking),
                                              "signature": state.signature})]
        if state.kind == "redacted_thinking":
            return [ThinkingBlockDone(index, dict(state.raw))]
        return []  # server-side blocks (web search …) are not ours to send back

    def _message_delta(self, data: dict[str, Any]) -> list[StreamEvent]:
        delta = data.get("delta") or {}
        if delta.get("stop_reason") is not None:
            self.stop_reason = str(delta["stop_reason"])
        self.usage.update(int_usage(data.get("usage")))
        return []

    def _message_stop(self, data: dict[str, Any]) -> list[StreamEvent]:
        self.finished = True
        return [StepStop(self.stop_reason, dict(self.usage))]

    def end(self) -> None:
        """The HTTP body ended: fine after message_stop, a failure before it."""
        if self.finished:
            return
        if not self.started:
            raise StreamFailure("anthropic returned an empty response (no events)")
        raise StreamFailure("the anthropic stream ended before the response was complete (no message_stop)",
                            retryable=True)


# ---- the provider -------------------------------------------------------------------------------

class AnthropicModel(HttpModel):
    provider = "anthropic"
    supports_images = True

    def __init__(self, *, model: str = DEFAULT_MODEL, base_url: str = DEFAULT_BASE_URL,
                 thinking_tokens: int | None = None, **kw: Any) -> None:
        super().__init__(model=model, base_url=base_url, **kw)
        #: extended thinking's budget; the thinking comes back as blocks the chat shows
        self.thinking_tokens = thinking_tokens
        self._menu: tuple[list[ToolDefinition], list[dict[str, Any]]] | None = None

    @property
    def url(self) -> str:
        base = self.base_url
        return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        return headers

    def tools_payload(self, tools: list[ToolDefinition]) -> list[dict[str, Any]]:
        """Encoded once per menu: the same objects serialise to the same bytes on every request."""
        if self._menu is None or self._menu[0] is not tools:
            self._menu = (tools, encode_tools(tools))
        return self._menu[1]

    def encode(self, request: ModelRequest) -> bytes:
        max_tokens = self.max_tokens or request.max_tokens or DEFAULT_MAX_TOKENS
        body: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "stream": True}
        if self.thinking_tokens:
            # the budget is part of max_tokens, which must stay above it: the answer keeps its room
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_tokens}
            if max_tokens <= self.thinking_tokens:
                body["max_tokens"] = self.thinking_tokens + max_tokens
        if request.system:
            body["system"] = [{"type": "text", "text": request.system, "cache_control": dict(EPHEMERAL)}]
        if request.tools:
            body["tools"] = self.tools_payload(request.tools)
        body["messages"] = encode_messages(request.messages)
        return compact_json(body).encode("utf-8")

    async def decode(self, events: AsyncIterator[SSEEvent], request: ModelRequest) -> AsyncIterator[StreamEvent]:
        decoder = AnthropicDecoder()
        async for event in events:
            for out in decoder.feed(decode_json(event.data, self.provider)):
                yield out
        decoder.end()
