"""The OpenAI-compatible provider on the wire, including the quirks of local servers.

The same loopback responses go to the official `openai` SDK, which must assemble the same text
and tool calls; request bodies are checked against the SDK's request type.
"""

from __future__ import annotations

import json

import openai
import pytest
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

from tests.sdk_types import problems
from tests.test_provider_anthropic import CONVERSATION, PROMPT, TOOLS, tools_bytes
from tests.wire_server import LoopbackServer, Piece, Reply, collect, data_lines, openai_chunks, openai_reply
from tui_app.providers.openai import OpenAIModel, chat_base_url
from tui_app.providers.retry import RetryPolicy
from tui_app.runtime.messages import Message, TextBlock, ThinkingBlock, ToolUseBlock
from tui_app.runtime.model import ModelError, ModelRequest

CALLS = [{"id": "call_FthC9qRpsL5kBpwwyw6c7j4k", "name": "Read", "input": {"file_path": "a.py"}},
         {"id": "call_2", "name": "Read", "input": {"file_path": "notes/ü b.md"}}]
SHAPES = {
    "text": dict(text="Nothing to change here."),
    "tools": dict(text="Reading both files.", tool_calls=CALLS),
    "whole_arguments": dict(tool_calls=CALLS, whole_arguments=True),
    "length": dict(text="This is cut", finish_reason="length",
                   usage={"prompt_tokens": 2100, "completion_tokens": 4, "cached": 2048}),
}


def model_for(server: LoopbackServer, **kw) -> OpenAIModel:
    return OpenAIModel(model="gpt-test", base_url=server.url + "/v1", api_key="sk-test",
                       retry=RetryPolicy(base_delay=0.01), **kw)


async def sdk_completion(server: LoopbackServer):
    client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0)
    try:
        async with client.chat.completions.stream(model="gpt-test", messages=[{"role": "user", "content": "hi"}],
                                                  stream_options={"include_usage": True}) as stream:
            async for _ in stream:
                pass
            # the accumulated completion (get_final_completion refuses finish_reason "length")
            return stream.current_completion_snapshot
    finally:
        await client.close()


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
async def test_vigil_and_the_official_sdk_read_the_same_stream_the_same_way(shape):
    with LoopbackServer() as server:
        server.queue(openai_reply(**SHAPES[shape]), openai_reply(**SHAPES[shape]))
        model = model_for(server)
        ours = await collect(model, ModelRequest(system="sys", messages=PROMPT, tools=TOOLS))
        await model.aclose()
        theirs = await sdk_completion(server)
    message = theirs.choices[0].message
    text = [b["text"] for b in ours.blocks if b["type"] == "text"]
    assert text == ([message.content] if message.content else [])
    calls = [(b["id"], b["name"], b["input"]) for b in ours.blocks if b["type"] == "tool_use"]
    assert calls == [(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]
    finish = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}[theirs.choices[0].finish_reason]
    assert ours.stop_reason == finish
    cached = theirs.usage.prompt_tokens_details.cached_tokens
    assert ours.usage == {"input_tokens": theirs.usage.prompt_tokens - cached,
                          "output_tokens": theirs.usage.completion_tokens, "cache_read_input_tokens": cached}


async def test_the_request_is_a_valid_streaming_chat_request_with_tool_messages():
    with LoopbackServer() as server:
        server.queue(openai_reply(text="ok"))
        model = model_for(server)
        await collect(model, ModelRequest(system="You are Vigil's agent.", messages=CONVERSATION, tools=TOOLS))
        await model.aclose()
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.json
    assert problems(body, CompletionCreateParamsStreaming) == []
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]
    assistant = body["messages"][2]
    assert assistant["content"] == "\n\nReading it."
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == ['{"file_path":"a.py"}', "{}"]
    first, second = body["messages"][3], body["messages"][4]
    assert (first["tool_call_id"], second["tool_call_id"]) == ("toolu_1", "toolu_2")
    assert second["content"].startswith("<tool_use_error>")
    assert body["messages"][1]["content"][1]["image_url"]["url"] == "data:image/png;base64,iVBORw0KGgo="
    # a tool message carries text only: the tool's image follows in a user message that names the call
    assert first["content"] == "x = 1\n[image image/png]"
    assert body["messages"][5]["content"] == [
        {"type": "text", "text": "The image returned by tool call toolu_1:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}]
    assert body["tools"][0] == {"type": "function", "function": {
        "name": "Read", "description": "Read a file.", "parameters": {
            "type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"],
            "additionalProperties": False}}}


async def test_the_tool_list_is_byte_identical_on_every_request():
    with LoopbackServer() as server:
        server.queue(openai_reply(text="one"), openai_reply(text="two"))
        model = model_for(server)
        await collect(model, ModelRequest(system="s", messages=PROMPT, tools=TOOLS))
        await collect(model, ModelRequest(system="s", messages=CONVERSATION, tools=TOOLS))
        await model.aclose()
    first, second = (tools_bytes(r.body) for r in server.requests)
    assert first == second and len(first) > 100


async def test_a_server_that_omits_ids_gets_unique_ids_that_do_not_clash_with_the_conversation():
    history = [*PROMPT, Message(role="assistant", content=[ToolUseBlock(id="call_0", name="Read", input={})])]
    chunks = openai_chunks(tool_calls=CALLS, ids=False)
    chunks[1]["choices"][0]["delta"]["tool_calls"][0]["id"] = "call_0"  # a server that reuses ids
    with LoopbackServer() as server:
        server.queue(Reply(pieces=data_lines(chunks)))
        model = model_for(server)
        ours = await collect(model, ModelRequest(system="", messages=history, tools=TOOLS))
        await model.aclose()
    ids = [b["id"] for b in ours.blocks]
    assert len(set(ids)) == 2 and "call_0" not in ids and all(i.startswith("call_") for i in ids)
    assert [b["input"] for b in ours.blocks] == [c["input"] for c in CALLS]


async def test_usage_only_at_the_end_and_no_done_line_are_tolerated():
    """Local-server style: usage inside the finishing chunk, "" for "not finished", no `data: [DONE]`."""
    chunks = openai_chunks(text="Done.", usage_chunk=False)
    chunks[-1]["usage"] = {"prompt_tokens": 40, "completion_tokens": 3, "total_tokens": 43}
    for chunk in chunks[:-1]:
        chunk.pop("system_fingerprint")
        chunk["choices"][0]["finish_reason"] = ""  # not null: "not finished yet" in some servers' words
    with LoopbackServer() as server:
        server.queue(Reply(pieces=data_lines(chunks, done=False)))
        model = model_for(server)
        ours = await collect(model, ModelRequest(system="", messages=PROMPT, tools=[]))
        await model.aclose()
    assert ours.blocks == [{"type": "text", "text": "Done."}]
    assert (ours.stop_reason, ours.usage) == ("end_turn", {"input_tokens": 40, "output_tokens": 3})


async def test_a_body_that_ends_without_finish_or_done_is_a_broken_stream():
    chunks = openai_chunks(text="Half of it")[:-2]
    with LoopbackServer() as server:
        server.queue(Reply(pieces=data_lines(chunks, done=False)))
        model = model_for(server)
        with pytest.raises(ModelError, match="ended before the response was complete"):
            await collect(model, ModelRequest(system="", messages=PROMPT, tools=[]))
        await model.aclose()
    assert len(server.requests) == 1  # text had been streamed: never sent twice


async def test_an_error_chunk_before_any_content_is_retried():
    error = {"error": {"message": "Provider returned error", "code": 502, "type": "server_error"}}
    with LoopbackServer() as server:
        server.queue(Reply(pieces=[Piece(f"data: {json.dumps(error)}\n\n".encode())]), openai_reply(text="Hi."))
        model = model_for(server)
        ours = await collect(model, ModelRequest(system="", messages=PROMPT, tools=[]))
        await model.aclose()
    assert ours.blocks == [{"type": "text", "text": "Hi."}]
    assert [(r.attempt, r.status) for r in ours.retries] == [(2, 502)]


def test_a_bare_local_server_address_means_its_v1_root():
    assert chat_base_url("http://localhost:11434") == "http://localhost:11434/v1"
    assert chat_base_url("http://localhost:8080/") == "http://localhost:8080/v1"
    assert chat_base_url("https://openrouter.ai/api/v1") == "https://openrouter.ai/api/v1"


async def test_text_after_a_tool_call_is_a_new_block_and_the_call_closes_first():
    chunks = openai_chunks(tool_calls=CALLS[:1])
    finish = chunks.pop(-2)
    base = {k: v for k, v in finish.items() if k != "choices"}
    chunks.insert(-1, {**base, "choices": [{"index": 0, "delta": {"content": "And a note."}, "finish_reason": None}]})
    chunks.insert(-1, finish)
    with LoopbackServer() as server:
        server.queue(Reply(pieces=data_lines(chunks)))
        model = model_for(server)
        ours = await collect(model, ModelRequest(system="", messages=[Message(role="user", content=[
            TextBlock(text="go")])], tools=TOOLS))
        await model.aclose()
    assert [b["type"] for b in ours.blocks] == ["tool_use", "text"]


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
async def test_a_servers_reasoning_is_thinking_on_screen_and_never_sent_back(key):
    chunks = openai_chunks(text="It is in a.py.", tool_calls=CALLS[:1])
    base = {k: v for k, v in chunks[0].items() if k != "choices"}
    for n, piece in enumerate(["The user asks ", "where it is. ", "Check a.py."]):
        chunks.insert(1 + n, {**base, "choices": [{"index": 0, "delta": {key: piece}, "finish_reason": None}]})
    with LoopbackServer() as server:
        server.queue(Reply(pieces=data_lines(chunks)))
        server.queue(openai_reply(text="ok"))
        model = model_for(server)
        ours = await collect(model, ModelRequest(system="", messages=PROMPT, tools=TOOLS))
        assert ours.blocks[0] == {"type": "reasoning", "text": "The user asks where it is. Check a.py."}
        assert ours.thinking_pieces == ["The user asks ", "where it is. ", "Check a.py."]
        assert [b["type"] for b in ours.blocks] == ["reasoning", "text", "tool_use"]
        again = [*PROMPT, Message(role="assistant", content=[
            ThinkingBlock(raw=ours.blocks[0]), TextBlock(text="It is in a.py.")])]
        await collect(model, ModelRequest(system="", messages=again, tools=TOOLS))
        await model.aclose()
    sent = server.requests[1].json["messages"]
    assert sent[-1] == {"role": "assistant", "content": "It is in a.py."}
    assert "The user asks" not in json.dumps(sent)
