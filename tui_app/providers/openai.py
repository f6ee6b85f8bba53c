"""OpenAI-compatible Chat Completions, streamed: `POST {base}/chat/completions` with `stream: true`.

One wire format for OpenAI, OpenRouter and local servers (ollama, vLLM, llama.cpp server, LM
Studio), which differ in the details: a tool call's id may be missing (or repeated), its arguments
may arrive in one piece or in many fragments, usage may come in a last chunk with no choices or
not at all, and `data: [DONE]` may be missing. All of that is tolerated; what is not tolerated is
a stream that ends before the response did.

Tool calls stream one after another, so a call is complete when the next one begins (if its
arguments already parse) or when the choice finishes; only then does the runtime see it end.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from tui_app.providers.http_model import HttpModel, compact_json, decode_json
from tui_app.providers.retry import RETRYABLE_ERROR_TYPES, RETRYABLE_STATUS, StreamFailure
from tui_app.providers.sse import SSEEvent
from tui_app.providers.wire import int_usage, provider_schema, safe_tool_input
from tui_app.runtime.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    content_text,
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

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-5.2"
#: finish reasons in the runtime's (Anthropic's) words; anything else passes through unchanged
FINISH_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use",
                  "length": "max_tokens", "content_filter": "refusal"}


# ---- request ------------------------------------------------------------------------------------

def _user_content(blocks: list[Any]) -> str | list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append({"type": "image_url", "image_url": {"url": f"data:{block.media_type};base64,{block.data}"}})
    if len(parts) == 1 and parts[0]["type"] == "text":
        return parts[0]["text"]
    return parts


def _result_images(results: list[ToolResultBlock]) -> list[TextBlock | ImageBlock]:
    """A tool message carries text only: the images of tool results follow in a user message,
    each named by its call, so the model still sees what a tool returned."""
    out: list[TextBlock | ImageBlock] = []
    for result in results:
        images = [part for part in result.content if isinstance(part, ImageBlock)] \
            if isinstance(result.content, list) else []
        if images:
            out.append(TextBlock(text=f"The image{'s' if len(images) > 1 else ''} returned by tool call "
                                      f"{result.tool_use_id}:"))
            out.extend(images)
    return out


def _tool_message(block: ToolResultBlock) -> dict[str, Any]:
    text = content_text(block.content)
    if block.is_error and not text.startswith("<tool_use_error>"):
        text = f"<tool_use_error>{text}</tool_use_error>"  # the role has no error flag: say it in words
    return {"role": "tool", "tool_call_id": block.tool_use_id, "content": text}


def encode_messages(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "assistant":
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
            calls = [{"id": b.id, "type": "function",
                      "function": {"name": b.name, "arguments": compact_json(safe_tool_input(b.input))}}
                     for b in message.content if isinstance(b, ToolUseBlock)]
            if not text and not calls:
                continue  # thinking only: other providers' reasoning is not sent back
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        results = [b for b in message.content if isinstance(b, ToolResultBlock)]
        out.extend(_tool_message(b) for b in results)
        rest = _result_images(results) + [b for b in message.content if isinstance(b, TextBlock | ImageBlock)]
        if rest:
            _add_user(out, _user_content(rest))
    return out


def _add_user(out: list[dict[str, Any]], content: str | list[dict[str, Any]]) -> None:
    """Some local servers' chat templates reject two user messages in a row (a prompt and the
    context a hook added to it, a compaction's instruction): they become one message."""
    previous = out[-1] if out else None
    if previous is None or previous["role"] != "user":
        out.append({"role": "user", "content": content})
        return
    before = previous["content"]
    if isinstance(before, str) and isinstance(content, str):
        previous["content"] = f"{before}\n\n{content}"
        return
    as_parts = [before] if isinstance(before, str) else before
    parts = [{"type": "text", "text": p} if isinstance(p, str) else p for p in as_parts]
    parts += [{"type": "text", "text": content}] if isinstance(content, str) else content
    previous["content"] = parts


def encode_tools(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": provider_schema(t.input_schema)}} for t in tools]


def known_call_ids(messages: Sequence[Message]) -> set[str]:
    return {b.id for m in messages for b in m.content if isinstance(b, ToolUseBlock)}


# ---- response -----------------------------------------------------------------------------------

@dataclass
class _Call:
    block: int
    id: str
    name: str = ""
    args: list[str] = field(default_factory=list)
    announced: bool = False
    closed: bool = False

    def arguments_complete(self) -> bool:
        try:
            json.loads("".join(self.args) or "{}")
        except ValueError:
            return False
        return True


@dataclass
class OpenAIDecoder:
    """Turns chat.completion.chunk objects into the runtime's stream events."""

    taken_ids: set[str] = field(default_factory=set)
    chunks: int = 0
    finish_reason: str | None = None
    saw_finish: bool = False
    usage: dict[str, int] = field(default_factory=dict)
    calls: dict[int, _Call] = field(default_factory=dict)
    next_block: int = 0
    text_block: int | None = None
    #: the reasoning an OpenAI-compatible server streams (`reasoning_content`: vLLM, llama.cpp,
    #: DeepSeek; `reasoning`: OpenRouter, ollama): shown as thinking, never sent back
    reasoning_block: int | None = None
    reasoning: list[str] = field(default_factory=list)

    def feed(self, chunk: Any) -> list[StreamEvent]:
        if not isinstance(chunk, dict):
            raise StreamFailure(f"openai sent a chunk that is not an object: {str(chunk)[:200]}")
        if chunk.get("error"):
            raise self._error(chunk["error"])
        self.chunks += 1
        if isinstance(chunk.get("usage"), dict):
            self.usage = normalise_usage(chunk["usage"])
        out: list[StreamEvent] = []
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                if self.reasoning_block is None:
                    self.reasoning_block = self._take_block()
                self.reasoning.append(reasoning)
                out.append(ThinkingDelta(self.reasoning_block, reasoning))
            for key in ("content", "refusal"):  # a refusal is the model's words too: show them
                if isinstance(delta.get(key), str) and delta[key]:
                    out += self._text(delta[key])
            for fragment in delta.get("tool_calls") or []:
                out += self._tool_fragment(fragment)
            if choice.get("finish_reason"):  # some servers send "" rather than null until the end
                self.saw_finish = True
                self.finish_reason = str(choice["finish_reason"])
                out += self._close_all()
        return out

    def _error(self, error: Any) -> StreamFailure:
        if not isinstance(error, dict):
            return StreamFailure(f"openai stream error: {error}")
        code, kind = error.get("code"), str(error.get("type") or "")
        status = code if isinstance(code, int) else None
        retryable = (status in RETRYABLE_STATUS or kind in RETRYABLE_ERROR_TYPES
                     or str(code) in RETRYABLE_ERROR_TYPES)
        words = ": ".join(str(p) for p in (kind or code, error.get("message")) if p)
        return StreamFailure(f"openai stream error: {words}", status=status, retryable=retryable)

    def _text(self, text: str) -> list[StreamEvent]:
        out = self._close_reasoning()
        if self.text_block is None:
            self.text_block = self._take_block()
        return [*out, TextDelta(self.text_block, text)]

    def _close_reasoning(self) -> list[StreamEvent]:
        """The reasoning ends where the answer or a call begins."""
        if self.reasoning_block is None:
            return []
        index, self.reasoning_block = self.reasoning_block, None
        text, self.reasoning = "".join(self.reasoning), []
        return [ThinkingBlockDone(index, {"type": "reasoning", "text": text})]

    def _close_text(self) -> list[StreamEvent]:
        if self.text_block is None:
            return []
        index, self.text_block = self.text_block, None
        return [BlockStop(index)]

    def _take_block(self) -> int:
        self.next_block += 1
        return self.next_block - 1

    def _fresh_id(self, proposed: Any) -> str:
        call_id = proposed if isinstance(proposed, str) and proposed else ""
        while not call_id or call_id in self.taken_ids:
            call_id = "call_" + secrets.token_hex(12)
        self.taken_ids.add(call_id)
        return call_id

    def _tool_fragment(self, fragment: Any) -> list[StreamEvent]:
        if not isinstance(fragment, dict):
            return []
        function = fragment.get("function") or {}
        position = fragment.get("index")
        if not isinstance(position, int):  # no index: a fragment with an id or a name starts a call
            starts = bool(fragment.get("id") or function.get("name")) or not self.calls
            position = len(self.calls) if starts else max(self.calls)
        out: list[StreamEvent] = []
        call = self.calls.get(position)
        if call is None:
            out += self._close_reasoning()
            out += self._close_text()
            # calls stream one after another: an earlier call whose arguments parse is complete
            for earlier in self.calls.values():
                if not earlier.closed and earlier.arguments_complete():
                    out += self._close(earlier)
            call = self.calls[position] = _Call(self._take_block(), self._fresh_id(fragment.get("id")))
        elif call.closed:
            raise StreamFailure(f"openai sent more of tool call {position} after it had ended")
        if isinstance(function.get("name"), str) and function["name"] and not call.name:
            call.name = function["name"]
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few servers send the arguments as an object
            arguments = compact_json(arguments)
        if isinstance(arguments, str) and arguments:
            call.args.append(arguments)
            if call.announced:
                out.append(ToolInputDelta(call.block, arguments))
        if not call.announced and call.name:
            out += self._announce(call)
        return out

    def _announce(self, call: _Call) -> list[StreamEvent]:
        call.announced = True
        out: list[StreamEvent] = [ToolUseStart(call.block, call.id, call.name)]
        if call.args:
            out.append(ToolInputDelta(call.block, "".join(call.args)))
        return out

    def _close(self, call: _Call) -> list[StreamEvent]:
        out = [] if call.announced else self._announce(call)
        call.closed = True
        return [*out, BlockStop(call.block)]

    def _close_all(self) -> list[StreamEvent]:
        out = self._close_reasoning() + self._close_text()
        for call in self.calls.values():
            if not call.closed:
                out += self._close(call)
        return out

    def end(self, done: bool) -> list[StreamEvent]:
        """The body ended (`done`: after `data: [DONE]`)."""
        if self.chunks == 0:
            raise StreamFailure("openai returned an empty response (no chunks)")
        if not done and not self.saw_finish:
            raise StreamFailure("the openai stream ended before the response was complete "
                                "(no finish_reason, no [DONE])", retryable=True)
        out = self._close_all()
        reason = FINISH_REASONS.get(self.finish_reason or "", self.finish_reason)
        if reason is None:
            reason = "tool_use" if self.calls else "end_turn"
        return [*out, StepStop(reason, dict(self.usage))]


def normalise_usage(usage: dict[str, Any]) -> dict[str, int]:
    """In the runtime's words: `input_tokens` counts the prompt tokens not read from the cache,
    `cache_read_input_tokens` the ones that were (OpenAI's prompt_tokens counts both)."""
    out = int_usage(usage)
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    result: dict[str, int] = {}
    if "prompt_tokens" in out:
        result["input_tokens"] = out["prompt_tokens"] - (cached if isinstance(cached, int) else 0)
    if "completion_tokens" in out:
        result["output_tokens"] = out["completion_tokens"]
    if isinstance(cached, int):
        result["cache_read_input_tokens"] = cached
    return result


# ---- the provider -------------------------------------------------------------------------------

def chat_base_url(base_url: str) -> str:
    """`http://localhost:11434` means the server's OpenAI-compatible root, `/v1` (ollama, LM Studio
    and vLLM serve only there; llama.cpp serves both)."""
    base = base_url.rstrip("/")
    return base + "/v1" if urlparse(base).path in ("", "/") else base


class OpenAIModel(HttpModel):
    provider = "openai"
    supports_images = True

    def __init__(self, *, model: str = DEFAULT_MODEL, base_url: str = DEFAULT_BASE_URL, **kw: Any) -> None:
        super().__init__(model=model, base_url=chat_base_url(base_url), **kw)
        self._menu: tuple[list[ToolDefinition], list[dict[str, Any]]] | None = None

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def tools_payload(self, tools: list[ToolDefinition]) -> list[dict[str, Any]]:
        if self._menu is None or self._menu[0] is not tools:
            self._menu = (tools, encode_tools(tools))
        return self._menu[1]

    def encode(self, request: ModelRequest) -> bytes:
        body: dict[str, Any] = {
            "model": self.model,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = self.tools_payload(request.tools)
        if self.max_tokens:
            body["max_tokens"] = self.max_tokens
        body["messages"] = encode_messages(request.system, request.messages)
        return compact_json(body).encode("utf-8")

    async def decode(self, events: AsyncIterator[SSEEvent], request: ModelRequest) -> AsyncIterator[StreamEvent]:
        decoder = OpenAIDecoder(taken_ids=known_call_ids(request.messages))
        done = False
        async for event in events:
            if event.data.strip() == "[DONE]":
                done = True
                break
            for out in decoder.feed(decode_json(event.data, self.provider)):
                yield out
        for out in decoder.end(done):
            yield out
