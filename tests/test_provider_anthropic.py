"""The Anthropic provider on the wire: what it sends, what it makes of what it receives.

The loopback server's responses are fed to the official `anthropic` SDK as well: both must come to
the same message, which is what makes the fake server a faithful one. Request bodies are checked
against the SDK's request type.
"""

from __future__ import annotations

import json

import anthropic
import pytest
from anthropic.types.message_create_params import MessageCreateParamsStreaming

from tests.sdk_types import problems
from tests.wire_server import SIGNATURE, LoopbackServer, Reply, anthropic_events, anthropic_reply, collect, sse
from tui_app.providers.anthropic import AnthropicModel
from tui_app.providers.retry import RetryPolicy
from tui_app.runtime.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
)
from tui_app.runtime.model import ModelError, ModelRequest, ThinkingBlockDone, ThinkingDelta

TOOLS = [
    ToolDefinition(name="Read", description="Read a file.", input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "properties": {"file_path": {"type": "string"}}, "required": ["file_path"], "additionalProperties": False}),
    ToolDefinition(name="Edit", description="Edit a file.", input_schema={
        "type": "object", "properties": {"file_path": {"type": "string"}, "old_string": {"type": "string"},
                                         "new_string": {"type": "string"}}}),
]
PROMPT = [Message(role="user", content=[TextBlock(text="What is in a.py?")])]

SHAPES = {
    "text": dict(text="Hello! Nothing to do here."),
    "tools": dict(text="Reading both.", tool_calls=[
        {"id": "toolu_01A09q90qw90lq917835lq9", "name": "Read", "input": {"file_path": "a.py"}},
        {"id": "toolu_01B77x0nvx4e3m8dxs4w3a1", "name": "Read", "input": {"file_path": "dir/ü b.py"}}]),
    "thinking": dict(thinking="The user wants a.py. I should read it first.", text="Let me look.", tool_calls=[
        {"id": "toolu_01C", "name": "Edit", "input": {"file_path": "a.py", "old_string": "x = 1\n",
                                                       "new_string": "x = {\"a\": [1, 2]}\n"}}]),
    "max_tokens": dict(text="This answer is cut", stop_reason="max_tokens",
                       usage={"input_tokens": 9, "output_tokens": 4, "cache_read": 2000, "cache_write": 13}),
}


def model_for(server: LoopbackServer, **kw) -> AnthropicModel:
    return AnthropicModel(model="claude-sonnet-4-6", base_url=server.url, api_key="sk-test",
                          retry=RetryPolicy(base_delay=0.01), **kw)


async def sdk_final_message(server: LoopbackServer) -> anthropic.types.Message:
    client = anthropic.AsyncAnthropic(base_url=server.url, api_key="sk-test", max_retries=0)
    try:
        async with client.messages.stream(model="claude-sonnet-4-6", max_tokens=1024,
                                          messages=[{"role": "user", "content": "hi"}]) as stream:
            return await stream.get_final_message()
    finally:
        await client.close()


def sdk_blocks(message: anthropic.types.Message) -> list[dict]:
    out = []
    for block in message.content:
        if block.type == "text":
            out.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            out.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
        elif block.type == "thinking":
            out.append({"type": "thinking", "thinking": block.thinking, "signature": block.signature})
    return out


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
async def test_vigil_and_the_official_sdk_read_the_same_stream_the_same_way(shape):
    with LoopbackServer() as server:
        server.queue(anthropic_reply(**SHAPES[shape]), anthropic_reply(**SHAPES[shape]))
        model = model_for(server)
        ours = await collect(model, ModelRequest(system="sys", messages=PROMPT, tools=TOOLS))
        await model.aclose()
        theirs = await sdk_final_message(server)
    assert ours.blocks == sdk_blocks(theirs)
    assert ours.stop_reason == theirs.stop_reason
    usage = theirs.usage
    assert ours.usage["input_tokens"] == usage.input_tokens
    assert ours.usage["output_tokens"] == usage.output_tokens
    assert ours.usage["cache_read_input_tokens"] == (usage.cache_read_input_tokens or 0)
    assert ours.usage["cache_creation_input_tokens"] == (usage.cache_creation_input_tokens or 0)


CONVERSATION = [
    Message(role="user", content=[TextBlock(text="Fix a.py"), ImageBlock(media_type="image/png", data="iVBORw0KGgo=")]),
    Message(role="assistant", content=[
        ThinkingBlock(raw={"type": "thinking", "thinking": "Read first.", "signature": SIGNATURE}),
        TextBlock(text="\n\n"),
        TextBlock(text="Reading it."),
        ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "a.py"}),
        ToolUseBlock(id="toolu_2", name="Read", input='{"file_path": "b.py"'),  # invalid JSON from the model
    ]),
    Message(role="user", content=[
        ToolResultBlock(tool_use_id="toolu_1", content=[TextBlock(text="x = 1"),
                                                        ImageBlock(media_type="image/png", data="iVBO")]),
        ToolResultBlock(tool_use_id="toolu_2", content="<tool_use_error>InputValidationError: bad JSON"
                                                       "</tool_use_error>", is_error=True),
    ]),
]


async def sent_body(messages: list[Message], tools=TOOLS, system: str = "You are Vigil's agent.", **kw) -> tuple:
    with LoopbackServer() as server:
        server.queue(anthropic_reply(text="ok"))
        model = model_for(server, **kw)
        await collect(model, ModelRequest(system=system, messages=messages, tools=tools))
        await model.aclose()
        return server.requests[0], model


async def test_the_request_is_a_valid_streaming_messages_request_with_every_block_kind():
    request, _ = await sent_body(CONVERSATION)
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    body = request.json
    assert problems(body, MessageCreateParamsStreaming) == []
    assert body["stream"] is True and body["model"] == "claude-sonnet-4-6" and body["max_tokens"] == 8192
    assistant, results = body["messages"][1]["content"], body["messages"][2]["content"]
    # thinking goes back exactly as it came; invalid input goes back as {}; "\n\n" is not sent
    assert assistant[0] == {"type": "thinking", "thinking": "Read first.", "signature": SIGNATURE}
    assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use", "tool_use"]
    assert assistant[3]["input"] == {}
    assert results[1]["is_error"] is True and results[0]["is_error"] is False
    assert results[0]["content"][1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                    "data": "iVBO"}}
    assert "$schema" not in body["tools"][0]["input_schema"]


async def test_a_thinking_budget_asks_for_extended_thinking_and_leaves_the_answer_room():
    request, _ = await sent_body(CONVERSATION, thinking_tokens=10_000)
    body = request.json
    assert problems(body, MessageCreateParamsStreaming) == []
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 10_000}
    assert body["max_tokens"] == 18_192  # above the budget, as the API requires
    request, _ = await sent_body(CONVERSATION, thinking_tokens=4096)
    assert request.json["max_tokens"] == 8192
    request, _ = await sent_body(CONVERSATION)
    assert "thinking" not in request.json


async def test_system_tools_and_the_newest_message_carry_the_cache_breakpoints():
    request, _ = await sent_body(CONVERSATION)
    body = request.json
    marked = [path for path, _ in _walk(body) if path.endswith(".cache_control")]
    assert marked == ["system[0].cache_control", "tools[1].cache_control", "messages[2].content[1].cache_control"]
    assert body["system"][0] == {"type": "text", "text": "You are Vigil's agent.",
                                 "cache_control": {"type": "ephemeral"}}


def _walk(node, path=""):
    if isinstance(node, dict):
        for key, value in node.items():
            sub = f"{path}.{key}" if path else key
            yield sub, value
            yield from _walk(value, sub)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{path}[{i}]")


async def test_the_tool_list_is_byte_identical_on_every_request():
    with LoopbackServer() as server:
        server.queue(anthropic_reply(text="one"), anthropic_reply(text="two"))
        model = model_for(server)
        await collect(model, ModelRequest(system="s", messages=PROMPT, tools=TOOLS))
        await collect(model, ModelRequest(system="s", messages=CONVERSATION, tools=TOOLS))
        await model.aclose()
    first, second = (tools_bytes(r.body) for r in server.requests)
    assert first == second and len(first) > 100


def tools_bytes(body: bytes) -> bytes:
    """The raw bytes of the `tools` array inside a request body."""
    start = body.index(b'"tools":') + len(b'"tools":')
    _, end = json.JSONDecoder().raw_decode(body.decode(), start)
    return body[start:end]


async def test_an_overloaded_error_event_before_any_content_is_retried():
    overloaded = [{"type": "message_start", "message": anthropic_events(text="x")[0]["message"]},
                  {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]
    with LoopbackServer() as server:
        server.queue(Reply(pieces=sse(overloaded)), anthropic_reply(text="Back again."))
        model = model_for(server)
        ours = await collect(model, ModelRequest(system="", messages=PROMPT, tools=[]))
        await model.aclose()
    assert ours.blocks == [{"type": "text", "text": "Back again."}]
    assert [(r.attempt, r.reason) for r in ours.retries] == [
        (2, "anthropic stream error: overloaded_error: Overloaded")]
    assert len(server.requests) == 2


async def test_thinking_streams_as_it_comes_and_a_break_inside_it_is_retried():
    thinking = "The user wants a.py. I should read it first."
    broken = anthropic_events(thinking=thinking, text="x")[:4]  # message_start, block start, two deltas
    broken.append({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    with LoopbackServer() as server:
        server.queue(Reply(pieces=sse(broken)), anthropic_reply(thinking=thinking, text="Let me look."))
        model = model_for(server)
        seen = [event async for event in model.stream(ModelRequest(system="", messages=PROMPT, tools=[]))]
        await model.aclose()
    kinds = [type(e).__name__ for e in seen]
    assert kinds[:3] == ["ThinkingDelta", "ThinkingDelta", "Retrying"]  # shown, then started over
    after = seen[3:]
    pieces = [e.text for e in after if isinstance(e, ThinkingDelta)]
    assert "".join(pieces) == thinking and len(pieces) > 1
    done = next(e for e in after if isinstance(e, ThinkingBlockDone))
    assert done.raw == {"type": "thinking", "thinking": thinking, "signature": SIGNATURE}
    assert after.index(done) > max(i for i, e in enumerate(after) if isinstance(e, ThinkingDelta))


async def test_an_error_event_after_text_ends_the_step_without_a_retry():
    events = anthropic_events(text="Half an answer")[:-2]  # up to the last text delta
    events.append({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    with LoopbackServer() as server:
        server.queue(Reply(pieces=sse(events)), anthropic_reply(text="never asked for"))
        model = model_for(server)
        with pytest.raises(ModelError, match="overloaded_error"):
            await collect(model, ModelRequest(system="", messages=PROMPT, tools=[]))
        await model.aclose()
    assert len(server.requests) == 1


async def test_a_whole_input_at_block_start_is_not_lost():
    """Some proxies send a tool_use block with its input filled in and no input_json deltas."""
    events = anthropic_events(tool_calls=[{"id": "toolu_9", "name": "Read", "input": {"file_path": "z"}}])
    events = [e for e in events if e.get("delta", {}).get("type") != "input_json_delta"]
    for event in events:
        if event["type"] == "content_block_start":
            event["content_block"]["input"] = {"file_path": "z"}
    with LoopbackServer() as server:
        server.queue(Reply(pieces=sse(events)))
        model = model_for(server)
        ours = await collect(model, ModelRequest(system="", messages=PROMPT, tools=TOOLS))
        await model.aclose()
    assert ours.blocks == [{"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {"file_path": "z"}}]


async def test_server_side_blocks_are_not_taken_for_calls_of_ours():
    events = anthropic_events(text="Found it.")
    server_blocks = [
        {"type": "content_block_start", "index": 1, "content_block": {
            "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"q": 1}'}},
        {"type": "content_block_stop", "index": 1},
    ]
    events[-2:-2] = server_blocks
    with LoopbackServer() as server:
        server.queue(Reply(pieces=sse(events)))
        model = model_for(server)
        ours = await collect(model, ModelRequest(system="", messages=PROMPT, tools=[]))
        await model.aclose()
    assert ours.blocks == [{"type": "text", "text": "Found it."}]
