"""Sessions on disk: resume after an interrupt or a crash, `vigil sessions`, `vigil replay`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.agent_kit import LOOK, SHELL, call, events_of, make_session, reply, request_problems
from tests.agent_kit import home as private_home
from tests.fakes import SAFE, UNSAFE, work_spec
from tests.waiting import DEADLINE_S
from tests.wire_server import LoopbackServer
from tui_app import cli
from tui_app.agents.builtin_agent import BuiltinAgent
from tui_app.providers.anthropic import encode_messages
from tui_app.providers.scripted import Script, ScriptedModel
from tui_app.runtime.log.eventlog import read_events
from tui_app.runtime.log.paths import events_path
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.session import Session

home = private_home  # the fixture, visible to this module's tests
ROOT = Path(__file__).parent.parent


def without_cache_marks(messages: list[dict]) -> list[dict]:
    return [{**m, "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]]}
            for m in messages]


async def test_a_turn_interrupted_mid_call_resumes_with_the_same_conversation(home, tmp_path):
    with LoopbackServer() as server:
        server.queue(reply("anthropic", text="Reading slowly.", tool_calls=[
            call("call_slow", "Look", label="slow", delay_ms=10_000), call("call_next", "Look", label="next")]))
        live = make_session("anthropic", server, str(tmp_path))
        seen = events_of(live)
        await live.start()
        turn = asyncio.ensure_future(live.run_turn("Read it."))
        while not any(e.type == "ToolCallStarted" for e in seen):
            await asyncio.sleep(0.01)
        live.interrupt()
        result = await turn
        await live.close()
        assert result.reason == "interrupted"
        at_interrupt = live.conversation.snapshot()

        server.queue(reply("anthropic", text="Picking up where we were."))
        resumed = make_session("anthropic", server, str(tmp_path), session_id=live.id)
        assert resumed.resume_from_log() == []
        assert resumed.conversation.snapshot() == at_interrupt
        new = events_of(resumed)
        await resumed.start()
        result = await resumed.run_turn("Carry on.")
        await resumed.close()
    assert result.reason == "completed"
    body = server.requests[-1].json
    assert request_problems("anthropic", server.requests[-1]) == []
    assert without_cache_marks(body["messages"][:-1]) == without_cache_marks(encode_messages(at_interrupt))
    assert body["messages"][-1]["content"][0]["text"] == "Carry on."
    assert not [e for e in new if e.type == "ToolCallStarted"]  # nothing ran again
    started = [e.type for e in new]
    assert started[0] == "SessionStarted"
    assert "ToolMenu" not in started[:started.index("TurnStarted")]  # same menu: no new ToolMenu
    assert new[0].resumed_from == live.id


CRASHING_RUN = """
import asyncio, sys
sys.path.insert(0, {root!r})
from tests.agent_kit import LOOK
from tui_app.providers.anthropic import AnthropicModel
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.session import Session
from tui_app.agents.builtin_agent import BuiltinAgent

async def main():
    registry = ToolRegistry()
    registry.register(LOOK)
    model = AnthropicModel(model="claude-sonnet-4-6", base_url=sys.argv[1], api_key="sk-test")
    session = Session(agent=BuiltinAgent(model, system_prompt="You are a test agent."), cwd=sys.argv[2],
                      registry=registry, session_id="crashed-1")
    await session.start()
    await session.run_turn("Read it, slowly.")

asyncio.run(main())
"""


async def test_a_session_killed_mid_call_resumes_and_nothing_is_run_again(home, tmp_path):
    with LoopbackServer() as server:
        server.queue(reply("anthropic", text="On it.", tool_calls=[call("call_slow", "Look", label="s",
                                                                         delay_ms=60_000)]))
        process = subprocess.Popen([sys.executable, "-c", CRASHING_RUN.format(root=str(ROOT)), server.url,
                                    str(tmp_path)], env={**os.environ, "VIGIL_HOME": str(home)})
        log = events_path("crashed-1")
        deadline = time.monotonic() + DEADLINE_S
        while b'"ToolCallStarted"' not in (log.read_bytes() if log.exists() else b""):
            assert process.poll() is None and time.monotonic() < deadline, "the run never started its call"
            await asyncio.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait()

        server.queue(reply("anthropic", text="Back."))
        resumed = make_session("anthropic", server, str(tmp_path), LOOK, session_id="crashed-1")
        resumed.resume_from_log()
        new = events_of(resumed)
        await resumed.start()
        result = await resumed.run_turn("Are you back?")
        await resumed.close()
    assert result.reason == "completed" and result.text == "Back."
    request = server.requests[-1]
    assert request_problems("anthropic", request) == []
    messages = request.json["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "user"]
    assert messages[1]["content"][-1]["id"] == "call_slow"
    lost = messages[2]["content"][0]
    assert lost["tool_use_id"] == "call_slow" and lost["is_error"] and "lost" in lost["content"]
    assert not [e for e in new if e.type.startswith("ToolCall")]
    events = read_events(events_path("crashed-1")).events
    assert [e.type for e in events].count("ToolCallStarted") == 1


SPAWNED: list = []


@pytest.fixture
def tripwire(monkeypatch):
    """Every process start in this test process is noted (asyncio's subprocesses go through Popen)."""
    SPAWNED.clear()
    real = subprocess.Popen

    class CountingPopen(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs):
            SPAWNED.append(args[0] if args else kwargs.get("args"))
            super().__init__(*args, **kwargs)

    def refuse(name):
        def spawn(*args, **kwargs):
            SPAWNED.append(name)
            raise AssertionError(f"{name} called")
        return spawn

    monkeypatch.setattr(subprocess, "Popen", CountingPopen)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse(name))
    return SPAWNED


async def recorded_session(tmp_path, server) -> Session:
    server.queue(
        reply("anthropic", text="Running it.", tool_calls=[call("call_sh", "Shell", text="hello from a process"),
                                                           call("call_look", "Look", label="x")]),
        reply("anthropic", text="It printed hello."))
    session = make_session("anthropic", server, str(tmp_path), LOOK, SHELL)
    await session.start()
    await session.run_turn("Run the thing.")
    await session.close()
    return session


async def test_replay_prints_a_session_without_running_anything(home, tmp_path, tripwire, capsys):
    with LoopbackServer() as server:
        session = await recorded_session(tmp_path, server)
    assert len(tripwire) == 1, "the live run starts one process: the tripwire must see it"
    tripwire.clear()
    assert cli.main(["replay", session.id, "--output-format", "stream-json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert cli.main(["replay", session.id]) == 0
    text = capsys.readouterr().out
    assert tripwire == []
    assert len(server.requests) == 2  # and no model was asked anything either
    # one assistant line per content block, the blocks of one response sharing its id
    assert [(line["type"], line.get("subtype")) for line in lines] == [
        ("system", "init"), ("user", None), *[("assistant", None)] * 3, ("user", None), ("user", None),
        ("assistant", None), ("result", "success")]
    assert lines[0]["tools"] == ["Look", "Shell"] and lines[0]["model"] == "claude-sonnet-4-6"
    assert [line["message"]["content"][0]["type"] for line in lines[2:5]] == ["text", "tool_use", "tool_use"]
    assert len({line["message"]["id"] for line in lines[2:5]}) == 1
    shell_result = lines[5]["message"]["content"][0]
    assert shell_result["tool_use_id"] == "call_sh" and shell_result["content"] == "hello from a process\n"
    assert lines[-1]["result"] == "It printed hello." and lines[-1]["num_turns"] == 2
    assert "> Run the thing." in text and "→ Shell" in text and "✓ Shell" in text and "It printed hello." in text


async def test_replay_of_an_unknown_session_says_so_in_one_line(home, capsys):
    assert cli.main(["replay", "no-such-session"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no recorded session 'no-such-session'" in err
    assert cli.main(["replay", "../../etc"]) == 2


def scripted_session(tmp_path, steps, session_id=None) -> Session:
    registry = ToolRegistry()
    registry.register(work_spec("Look", SAFE))
    registry.register(work_spec("Change", UNSAFE))
    return Session(agent=BuiltinAgent(ScriptedModel(Script.model_validate({"steps": steps}))), cwd=str(tmp_path),
                   registry=registry, session_id=session_id)


async def test_sessions_lists_every_recorded_session_newest_first(home, tmp_path, capsys):
    first = scripted_session(tmp_path, [{"text": "one"}, {"text": "two"}], "20260101-090000-aaaaaa")
    await first.start()
    await first.run_turn("First prompt of the first session")
    await first.run_turn("Second prompt")
    await first.close()
    second = scripted_session(tmp_path, [{"tool_calls": [{"id": "k", "name": "Look", "input": {}}]}],
                              "20260102-090000-bbbbbb")
    await second.start()
    await second.run_turn("A turn that will be cut short")
    await second.close()
    path = events_path(second.id)  # the process died mid-turn: cut the log after the call started
    lines = path.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if '"ToolCallStarted"' in line)
    path.write_text("".join(lines[: cut + 1]))

    assert cli.main(["sessions", "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [s["id"] for s in listed] == [second.id, first.id]
    assert listed[1] | {"started": 0} == {
        "id": first.id, "started": 0, "cwd": str(tmp_path), "provider": "scripted", "model": "scripted",
        "first_prompt": "First prompt of the first session", "turns": 2, "status": "completed"}
    assert (listed[0]["turns"], listed[0]["status"]) == (1, "cut short")
    assert cli.main(["sessions"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["ID", "STARTED", "TURNS", "STATUS", "MODEL", "CWD", "FIRST", "PROMPT"]
    assert table[2].startswith(first.id) and table[2].endswith("First prompt of the first session")


def test_sessions_with_none_recorded_says_where_it_looked(home, capsys):
    assert cli.main(["sessions"]) == 0
    assert capsys.readouterr().out.strip() == f"No recorded sessions in {home / 'sessions'}"


async def test_a_close_cut_short_by_cancellation_still_ends_the_log(home, tmp_path):
    """SIGTERM in a headless run cancels what is still closing (a tool's process group being
    stopped); the log must still say the session ended, or `vigil sessions` shows it as crashed."""
    class StuckService:
        async def aclose(self) -> None:
            await asyncio.Event().wait()  # never done: only a cancellation ends it

    with LoopbackServer() as server:
        server.queue(reply("anthropic", text="Hello."))
        live = make_session("anthropic", server, str(tmp_path))
        live.services["stuck"] = StuckService()
        await live.start()
        await live.run_turn("Hi.")
        closing = asyncio.ensure_future(live.close())
        await asyncio.sleep(0)  # close() is now waiting on the stuck service
        closing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closing
    events = read_events(events_path(live.id)).events
    assert events[-1].type == "SessionEnded"
