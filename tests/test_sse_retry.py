"""The SSE parser, retry-after parsing, backoff, and the retry loop's limits (over real HTTP)."""

from __future__ import annotations

import email.utils
import random

import pytest

from tests.sdk_types import problems
from tests.wire_server import LoopbackServer, collect, json_reply, openai_reply
from tui_app.providers.openai import OpenAIModel
from tui_app.providers.retry import RetryPolicy, parse_retry_after
from tui_app.providers.sse import SSEEvent, iter_sse
from tui_app.runtime.messages import Message, TextBlock
from tui_app.runtime.model import ModelError, ModelRequest


async def parse(text: str) -> list[SSEEvent]:
    async def lines():
        for line in text.splitlines():
            yield line

    return [e async for e in iter_sse(lines())]


async def test_sse_events_follow_the_event_stream_rules():
    text = (": keep-alive comment\n"
            "event: message_start\r\n"
            "data: {\"a\":\r\n"
            "data:  1}\n"
            "id: 7\n"
            "\n"
            "a line without a colon\n"
            "data:x\n"
            "\n"
            "\n"
            "event: tail\n"
            "data: [DONE]")
    assert await parse(text) == [SSEEvent("message_start", '{"a":\n 1}'), SSEEvent("message", "x"),
                                 SSEEvent("tail", "[DONE]")]


async def test_an_event_without_data_is_not_dispatched():
    assert await parse("event: ping\n\nevent: x\ndata: 1\n\n") == [SSEEvent("x", "1")]


def test_retry_after_in_milliseconds_seconds_or_an_http_date():
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    now = 1_800_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(30, abs=1)
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-3"}) is None
    assert parse_retry_after({}) is None


def test_backoff_grows_exponentially_with_bounded_jitter_and_a_cap():
    policy = RetryPolicy(base_delay=0.5, max_delay=8.0, jitter=0.25, rng=random.Random(7))
    for attempt, nominal in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 8.0), (9, 8.0)]:
        waits = [policy.delay(attempt, None) for _ in range(200)]
        assert all(nominal * 0.75 <= w <= nominal * 1.25 for w in waits)
        assert max(waits) - min(waits) > nominal * 0.2  # really jittered, not a constant
    assert policy.delay(3, 7.0) == 7.0  # the server's retry-after wins


def quick_model(server: LoopbackServer) -> OpenAIModel:
    return OpenAIModel(model="m", base_url=server.url + "/v1", api_key="k", retry=RetryPolicy(base_delay=0.001))


PROMPT = ModelRequest(system="", messages=[Message(role="user", content=[TextBlock(text="hi")])], tools=[])


async def test_five_attempts_at_most_each_announced():
    busy = {"error": {"message": "The server is overloaded", "type": "server_error"}}
    with LoopbackServer() as server:
        server.queue(*[json_reply(503, busy) for _ in range(6)])
        model = quick_model(server)
        retries = []

        async def run():
            async for event in model.stream(PROMPT):
                retries.append(event)

        with pytest.raises(ModelError, match=r"503: service unavailable .*overloaded.*gave up after 5 attempts"):
            await run()
        await model.aclose()
    assert len(server.requests) == 5
    assert [(r.attempt, r.max_attempts, r.status) for r in retries] == [(n, 5, 503) for n in (2, 3, 4, 5)]


async def test_a_client_error_is_not_retried_and_says_what_the_server_said():
    bad = {"error": {"message": "Invalid API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}
    with LoopbackServer() as server:
        server.queue(json_reply(401, bad))
        model = quick_model(server)
        with pytest.raises(ModelError) as caught:
            await collect(model, PROMPT)
        await model.aclose()
    assert str(caught.value) == ("openai API error 401: authentication failed (check the API key) "
                                 "(invalid_request_error: Invalid API key provided)")
    assert len(server.requests) == 1


async def test_a_retry_after_longer_than_vigil_waits_fails_at_once_and_says_so():
    with LoopbackServer() as server:
        server.queue(json_reply(429, {"error": {"message": "slow down"}}, {"retry-after": "3600"}),
                     openai_reply(text="x"))
        model = quick_model(server)
        with pytest.raises(ModelError, match="asks to wait 3600 s"):
            await collect(model, PROMPT)
        await model.aclose()
    assert len(server.requests) == 1


async def test_a_server_that_is_not_there_is_retried_then_named():
    with LoopbackServer() as server:
        url = server.url
    model = OpenAIModel(model="m", base_url=url + "/v1", retry=RetryPolicy(base_delay=0.001, max_attempts=2))
    with pytest.raises(ModelError, match=f"cannot connect to openai at {url}/v1/chat/completions"):
        await collect(model, PROMPT)
    await model.aclose()


def test_the_strict_request_checker_catches_what_the_sdk_types_forbid():
    from anthropic.types.message_create_params import MessageCreateParamsStreaming

    body = {"model": "m", "max_tokens": 5, "stream": True, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache": True}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}]},
        {"role": "robot", "content": "?"}]}
    found = problems(body, MessageCreateParamsStreaming)
    assert "body.messages[0].content[0]: unknown key 'cache' for TextBlockParam" in found
    assert "body.messages[1].content[0].is_error: expected a boolean" in found
    assert any(p.startswith("body.messages[2].role") for p in found)
    assert problems({"model": "m", "stream": True, "messages": []}, MessageCreateParamsStreaming) == [
        "body: missing required key 'max_tokens' (MessageCreateParamsStreaming)"]
