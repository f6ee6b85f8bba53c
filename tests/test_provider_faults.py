"""What networks and models do wrong, through a whole session: each fault ends in a defined state,
with a clear message, and a log that still reads back whole."""

from __future__ import annotations

import json
import time

import pytest

from tests.agent_kit import (
    PROVIDERS,
    call,
    events_of,
    make_session,
    reply,
    request_problems,
    tool_results,
    tool_uses,
)
from tests.agent_kit import home as private_home
from tests.wire_server import LoopbackServer, Piece, Reply, anthropic_events, json_reply, openai_chunks, sse
from tui_app.agents.builtin import STREAM_BROKEN_MESSAGE
from tui_app.runtime.log.eventlog import read_events

home = private_home  # the fixture, visible to this module's tests


async def run(kind, server, tmp_path, prompt="go", **kw):
    session = make_session(kind, server, str(tmp_path), **kw)
    seen = events_of(session)
    await session.start()
    result = await session.run_turn(prompt)
    await session.close()
    log = read_events(session.log_path)
    assert log.warnings == [], "the log must read back whole"
    assert [e.type for e in log.events][-2:] == ["TurnEnded", "SessionEnded"]
    return result, seen, session


def one(seen, kind, **match):
    found = [e for e in seen if e.type == kind and all(getattr(e, k) == v for k, v in match.items())]
    assert len(found) == 1, f"expected one {kind} {match}, found {len(found)}"
    return found[0]


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_429_with_retry_after_is_waited_out_and_shown(kind, home, tmp_path):
    limited = json_reply(429, {"type": "error", "error": {"type": "rate_limit_error", "message": "Too many requests"}},
                         {"retry-after": "1"})
    with LoopbackServer() as server:
        server.queue(limited, reply(kind, text="Made it."))
        began = time.monotonic()
        result, seen, _ = await run(kind, server, tmp_path)
        waited = time.monotonic() - began
    assert (result.reason, result.text) == ("completed", "Made it.")
    retry = one(seen, "ModelRetry")
    assert (retry.attempt, retry.max_attempts, retry.status, retry.wait_ms) == (2, 5, 429, 1000)
    assert "rate limited" in retry.reason and "Too many requests" in retry.reason
    assert waited >= 0.9  # the server's retry-after was honoured, not the short backoff


async def test_529_overloaded_is_retried_with_backoff(home, tmp_path):
    overloaded = json_reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    with LoopbackServer() as server:
        server.queue(overloaded, overloaded, reply("anthropic", text="Finally."))
        result, seen, _ = await run("anthropic", server, tmp_path)
    assert (result.reason, result.text) == ("completed", "Finally.")
    retries = [e for e in seen if e.type == "ModelRetry"]
    assert [(r.attempt, r.status) for r in retries] == [(2, 529), (3, 529)]
    assert all("overloaded" in r.reason for r in retries)


def cut_after_calls(kind: str) -> Reply:
    """A complete read, a complete write, then a third call cut off mid-input by a TCP reset."""
    calls = [call("call_read", "Look", label="r"), call("call_write", "Change", label="w"),
             call("call_half", "Change", label="half")]
    if kind == "anthropic":
        events = anthropic_events(text="Three things.", tool_calls=calls, fragment=6)
        last_start = max(i for i, e in enumerate(events) if e["type"] == "content_block_start")
        return Reply(pieces=sse(events), reset_after=last_start + 3)
    chunks = openai_chunks(text="Three things.", tool_calls=calls, fragment=6)
    third = next(i for i, c in enumerate(chunks) if c["choices"] and c["choices"][0]["delta"].get(
        "tool_calls", [{}])[0].get("id") == "call_half")
    return Reply(pieces=[Piece(f"data: {json.dumps(c)}\n\n".encode()) for c in chunks], reset_after=third + 2)


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_a_connection_reset_after_calls_were_announced_never_runs_a_half_received_call(kind, home, tmp_path):
    with LoopbackServer() as server:
        server.queue(cut_after_calls(kind), reply(kind, text="should never be asked"))
        result, seen, session = await run(kind, server, tmp_path)
    assert result.reason == "error" and "connection" in result.error and "broke" in result.error
    assert len(server.requests) == 1  # content had streamed: the request is not sent again
    # the complete read ran (it started early); the complete write was not run; the half call never existed
    one(seen, "ToolCallResult", call_id="call_read")
    write = one(seen, "ToolCallError", call_id="call_write")
    assert (write.code, write.model_content) == ("aborted_before_dispatch", STREAM_BROKEN_MESSAGE)
    assert not [e for e in seen if e.type == "ToolCallStarted" and e.call_id != "call_read"]
    assert not [e for e in seen if getattr(e, "call_id", None) == "call_half"]
    batch = one(seen, "ToolBatchComplete")
    assert (batch.ok, batch.failed) == (1, 1)
    ended = one(seen, "TurnEnded")
    assert ended.reason == "error" and ended.message == result.error
    # the conversation stays valid: both complete calls have their results
    messages = session.conversation.snapshot()
    assert [b.id for b in messages[-2].content if b.type == "tool_use"] == ["call_read", "call_write"]
    assert [b.tool_use_id for b in messages[-1].content] == ["call_read", "call_write"]


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_a_malformed_stream_line_ends_the_step_and_keeps_the_text_so_far(kind, home, tmp_path):
    if kind == "anthropic":
        pieces = sse(anthropic_events(text="Hello there, friend."))[:4]
        pieces.append(Piece(b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "del\n\n'))
    else:
        pieces = [Piece(f"data: {json.dumps(c)}\n\n".encode()) for c in openai_chunks(text="Hello there, friend.")][:2]
        pieces.append(Piece(b'data: {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"con\n\n'))
    with LoopbackServer() as server:
        server.queue(Reply(pieces=pieces), reply(kind, text="not asked"))
        result, seen, _ = await run(kind, server, tmp_path)
    assert result.reason == "error" and "malformed stream event (not JSON)" in result.error
    assert one(seen, "AssistantText").text == "Hello there,"
    assert one(seen, "ModelStepEnded").error == result.error
    assert len(server.requests) == 1


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_an_empty_response_is_an_error_that_says_so(kind, home, tmp_path):
    with LoopbackServer() as server:
        server.queue(Reply(pieces=[]))
        result, seen, _ = await run(kind, server, tmp_path)
    what = "no events" if kind == "anthropic" else "no chunks"
    assert result.reason == "error" and result.error == f"{kind} returned an empty response ({what})"
    assert not [e for e in seen if e.type.startswith("ToolCall")]


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_invalid_tool_input_json_becomes_a_result_the_model_corrects(kind, home, tmp_path):
    broken = {"id": "call_bad", "name": "Look", "input_json": '{"label": "a", "delay_ms": '}
    with LoopbackServer() as server:
        server.queue(reply(kind, tool_calls=[broken]),
                     reply(kind, tool_calls=[call("call_good", "Look", label="a")]),
                     reply(kind, text="Fixed my call."))
        result, seen, _ = await run(kind, server, tmp_path)
    assert (result.reason, result.text) == ("completed", "Fixed my call.")
    error = one(seen, "ToolCallError", call_id="call_bad")
    assert error.code == "schema_invalid" and "not valid JSON" in error.model_content
    second = server.requests[1]
    assert request_problems(kind, second) == []
    assert tool_uses(kind, second) == [("call_bad", "Look", {})]  # the API takes no string input
    (bad_id, content, is_error), = tool_results(kind, second)
    assert bad_id == "call_bad" and "InputValidationError" in content and is_error in (True, None)
    assert tool_results(kind, server.requests[2]) == [("call_good", "did a", False if kind == "anthropic" else None)]


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_an_unknown_stop_reason_ends_the_turn_with_a_warning(kind, home, tmp_path):
    with LoopbackServer() as server:
        server.queue(reply(kind, text="Something odd.", stop_reason="galaxy_brain"))
        result, seen, _ = await run(kind, server, tmp_path)
    assert (result.reason, result.text) == ("completed", "Something odd.")
    warning = one(seen, "Warning", code="model_stop_reason")
    assert "galaxy_brain" in warning.message
    assert one(seen, "TurnEnded").message == warning.message


async def test_a_response_cut_by_the_token_limit_says_so(home, tmp_path):
    with LoopbackServer() as server:
        server.queue(reply("anthropic", text="The answer is", stop_reason="max_tokens"))
        result, seen, _ = await run("anthropic", server, tmp_path)
    assert result.reason == "completed" and "output token limit" in result.error
    assert one(seen, "Warning", code="model_stop_reason").detail["stop_reason"] == "max_tokens"


async def test_a_server_error_page_that_never_recovers_gives_up_after_five_attempts(home, tmp_path):
    page = Reply(502, {"content-type": "text/html"}, [Piece(b"<html><body>Bad Gateway</body></html>")])
    with LoopbackServer() as server:
        server.queue(*[page] * 5)
        result, seen, _ = await run("openai", server, tmp_path)
    assert result.reason == "error"
    assert result.error == "openai API error 502: bad gateway (<html><body>Bad Gateway</body></html>) " \
                           "(gave up after 5 attempts)"
    assert [e.attempt for e in seen if e.type == "ModelRetry"] == [2, 3, 4, 5]


async def test_a_headless_text_run_says_why_it_is_waiting(home, tmp_path, capsys):
    import io

    from tui_app.headless.runner import run_headless

    limited = json_reply(429, {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}},
                         {"retry-after": "0"})
    with LoopbackServer() as server:
        server.queue(limited, reply("anthropic", text="Answer."))
        session = make_session("anthropic", server, str(tmp_path))
        out = io.StringIO()
        assert await run_headless(session, "go", "text", out) == 0
    assert out.getvalue() == "Answer.\n"
    assert capsys.readouterr().err == ("vigil: anthropic API error 429: rate limited (rate_limit_error: Slow down); "
                                       "retrying in 0.0 s (attempt 2 of 5)\n")
