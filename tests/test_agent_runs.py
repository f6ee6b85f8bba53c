"""Whole agent turns through each network provider: real sessions, real pipeline, real HTTP.

The loopback server plays the model; the tools are small real ToolSpecs. What is checked is what
the model would see on its next request (results paired with calls by id, in the model's order),
what the user would see (events, the log), and what the provider sent (SDK-valid bodies, a stable
tool list, usage per step), plus early execution of reads while the model still streams.
"""

from __future__ import annotations

import pytest

from tests.agent_kit import (
    EDIT,
    LOOK,
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
from tests.test_provider_anthropic import tools_bytes
from tests.wire_server import LoopbackServer, Piece, Reply, anthropic_events, openai_chunks, sse
from tui_app.runtime.log.eventlog import read_events
from tui_app.runtime.permissions.decision import ModePolicy

home = private_home  # the fixture, visible to this module's tests
FINAL = "Both files are read; the edit was not allowed, so I stopped there."


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_a_multi_step_run_pairs_results_with_calls_runs_reads_together_and_reports_a_denial(kind, home, tmp_path):
    with LoopbackServer() as server:
        server.queue(
            reply(kind, text="Reading both files, then fixing.", tool_calls=[
                call("call_a", "Look", label="a", delay_ms=150), call("call_b", "Look", label="b", delay_ms=150),
                call("call_c", "Edit", label="c")],
                usage={"input_tokens": 310, "output_tokens": 41, "prompt_tokens": 310, "completion_tokens": 41}),
            reply(kind, text=FINAL, usage={"input_tokens": 420, "output_tokens": 17,
                                           "prompt_tokens": 420, "completion_tokens": 17}),
        )
        session = make_session(kind, server, str(tmp_path))
        seen = events_of(session)
        await session.start()
        result = await session.run_turn("Fix the files.")
        await session.close()

    assert (result.reason, result.text, result.steps) == ("completed", FINAL, 2)
    first, second = server.requests
    assert request_problems(kind, first) == [] and request_problems(kind, second) == []
    # the second request: every call of the first response, each with its own result, in model order
    assert [u[0] for u in tool_uses(kind, second)] == ["call_a", "call_b", "call_c"]
    results = tool_results(kind, second)
    assert [(r[0], r[1]) for r in results[:2]] == [("call_a", "did a"), ("call_b", "did b")]
    assert results[2][0] == "call_c" and "No permission client configured" in results[2][1]
    if kind == "anthropic":
        assert [r[2] for r in results] == [False, False, True]
    # the two reads ran side by side: both started before either finished
    order = [(e.type, e.call_id) for e in seen if e.type in ("ToolCallStarted", "ToolCallResult")]
    assert order[:2] == [("ToolCallStarted", "call_a"), ("ToolCallStarted", "call_b")]
    denial = next(e for e in seen if e.type == "ToolCallError")
    assert (denial.call_id, denial.code) == ("call_c", "no_permission_client")
    assert not any(e.type == "ToolCallStarted" and e.call_id == "call_c" for e in seen)
    # the tool list: recorded once, sent byte for byte the same on every request
    menus = [e for e in seen if e.type == "ToolMenu"]
    assert len(menus) == 1 and [t.name for t in menus[0].tools] == ["Look", "Change", "Edit"]
    assert tools_bytes(first.body) == tools_bytes(second.body)
    # usage per step, in the runtime's words
    steps = [e for e in seen if e.type == "ModelStepEnded"]
    assert [(s.usage["input_tokens"], s.usage["output_tokens"]) for s in steps] == [(310, 41), (420, 17)]
    ended = next(e for e in seen if e.type == "TurnEnded")
    assert ended.usage["input_tokens"] == 730 and ended.usage["output_tokens"] == 58
    log = read_events(session.log_path)
    assert log.warnings == [] and [e.seq for e in log.events] == sorted(e.seq for e in log.events)
    assert session.log_path.is_relative_to(home)


def slow_stream(kind: str, calls: list[dict], pause: float) -> Reply:
    """A response whose calls are complete well before the model's last event arrives."""
    if kind == "anthropic":
        events = anthropic_events(text="Working on it.", tool_calls=calls)
        pieces = sse(events)
        for piece in pieces:
            if piece.label in ("message_delta", "message_stop"):
                piece.delay = pause / 2
        return Reply(pieces=pieces)
    chunks = openai_chunks(text="Working on it.", tool_calls=[*calls, call("call_tail", "Look", label="tail")])
    import json

    pieces = [Piece(f"data: {json.dumps(c)}\n\n".encode()) for c in chunks]
    # the second call starts (so the first is complete), then the model takes its time
    start = next(i for i, c in enumerate(chunks) if c["choices"] and c["choices"][0]["delta"].get(
        "tool_calls", [{}])[0].get("id") == "call_tail")
    for piece in pieces[start + 1:]:
        piece.delay = pause / max(1, len(pieces) - start - 1)
    pieces.append(Piece(b"data: [DONE]\n\n", 0.0, "message_stop"))
    return Reply(pieces=pieces)


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_a_read_starts_while_the_model_is_still_streaming(kind, home, tmp_path):
    with LoopbackServer() as server:
        server.queue(slow_stream(kind, [call("call_r", "Look", label="r")], pause=0.6), reply(kind, text="ok"))
        session = make_session(kind, server, str(tmp_path))
        seen = events_of(session)
        await session.start()
        await session.run_turn("look")
        await session.close()
        stop_sent = server.sent_at["message_stop"]
    started = next(e for e in seen if e.type == "ToolCallStarted" and e.call_id == "call_r")
    step_end = next(e for e in seen if e.type == "ModelStepEnded")
    assert started.ts < stop_sent and started.seq < step_end.seq


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_an_edit_waits_for_the_end_of_the_response(kind, home, tmp_path):
    with LoopbackServer() as server:
        server.queue(slow_stream(kind, [call("call_e", "Edit", label="e")], pause=0.6), reply(kind, text="ok"))
        session = make_session(kind, server, str(tmp_path), policy=ModePolicy(mode="acceptEdits"))
        seen = events_of(session)
        await session.start()
        await session.run_turn("edit")
        await session.close()
        stop_sent = server.sent_at["message_stop"]
    started = next(e for e in seen if e.type == "ToolCallStarted" and e.call_id == "call_e")
    step_end = next(e for e in seen if e.type == "ModelStepEnded")
    assert started.ts > stop_sent and started.seq > step_end.seq


async def test_a_read_after_an_edit_in_the_same_response_does_not_start_early(home, tmp_path):
    """Model order: the read must see what the edit did, so it waits for the batch like the edit."""
    with LoopbackServer() as server:
        server.queue(slow_stream("anthropic", [call("call_e", "Edit", label="e"), call("call_r", "Look", label="r")],
                                 pause=0.5), reply("anthropic", text="ok"))
        session = make_session("anthropic", server, str(tmp_path), policy=ModePolicy(mode="acceptEdits"))
        seen = events_of(session)
        await session.start()
        await session.run_turn("edit, then read")
        await session.close()
    step_end = next(e for e in seen if e.type == "ModelStepEnded")
    started = [e for e in seen if e.type == "ToolCallStarted"]
    assert [e.call_id for e in started] == ["call_e", "call_r"]
    assert all(e.seq > step_end.seq for e in started)
    edit_done = next(e for e in seen if e.type == "ToolCallResult" and e.call_id == "call_e")
    assert started[1].seq > edit_done.seq


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_early_results_are_still_committed_in_model_order(kind, home, tmp_path):
    calls = [call("call_slow", "Look", label="slow", delay_ms=300), call("call_fast", "Look", label="fast")]
    with LoopbackServer() as server:
        server.queue(reply(kind, tool_calls=calls), reply(kind, text="ok"))
        session = make_session(kind, server, str(tmp_path), LOOK, EDIT)
        await session.start()
        await session.run_turn("two reads")
        await session.close()
    assert [r[:2] for r in tool_results(kind, server.requests[1])] == [("call_slow", "did slow"),
                                                                       ("call_fast", "did fast")]
