"""The session runs on its own thread; the UI side drains events and answers thread-safely."""

from __future__ import annotations

import threading
import time

from tests.fakes import SAFE, work_spec
from tests.waiting import DEADLINE_S, HANG_S
from tui_app.agents.builtin_agent import BuiltinAgent
from tui_app.app.bridge import SessionRunner
from tui_app.providers.scripted import Script, ScriptedModel
from tui_app.runtime.commands import AnswerApproval, SubmitPrompt
from tui_app.runtime.permissions.broker import ApprovalBroker
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.session import Session

ASKING = SAFE.model_copy(update={"needs_approval": True, "read_only": False})


def make_runner(tmp_path, steps) -> SessionRunner:
    registry = ToolRegistry()
    registry.register(work_spec("Look", SAFE))
    registry.register(work_spec("Change", ASKING))
    session = Session(agent=BuiltinAgent(ScriptedModel(Script.model_validate({"steps": steps}))), cwd=str(tmp_path),
                      registry=registry, broker=ApprovalBroker(interactive=True),
                      log_path=tmp_path / "events.jsonl")
    return SessionRunner(session)


def wait_for(runner: SessionRunner, kind: str, seen: list, timeout: float = DEADLINE_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen.extend(runner.drain())
        for event in seen:
            if event.type == kind:
                return event
        time.sleep(0.01)
    raise AssertionError(f"no {kind} in {[e.type for e in seen]}")


def test_a_turn_runs_on_the_runtime_thread_and_an_answer_crosses_back(tmp_path):
    runner = make_runner(tmp_path, [
        {"text": "Changing it.", "tool_calls": [{"id": "c1", "name": "Change", "input": {"label": "x"}}]},
        {"text": "Changed."},
    ])
    threads: set[str] = set()
    runner.session.subscribe(lambda e: threads.add(threading.current_thread().name))
    runner.start()
    assert runner.send(SubmitPrompt(text="change x", client="t")).result(DEADLINE_S).turn_id == "turn-1"
    refused = runner.send(SubmitPrompt(text="again")).result(DEADLINE_S)
    assert (refused.ok, refused.code) == (False, "busy")  # one turn at a time
    seen: list = []
    request = wait_for(runner, "PermissionRequested", seen)
    answer = AnswerApproval(request_id=request.request_id, decision="allow", input_sha256=request.input_sha256,
                            client="t")
    assert runner.send(answer).result(DEADLINE_S).ok
    result = runner._call(runner.session.controller.wait_idle()).result(DEADLINE_S)
    assert result.reason == "completed" and result.text == "Changed."
    resolved = wait_for(runner, "PermissionResolved", seen)
    assert resolved.client == "t"  # the log says who answered
    assert threads == {"vigil-runtime"}
    wait_for(runner, "TurnEnded", seen)
    runner.close()
    assert not runner._thread.is_alive()


def test_close_interrupts_a_running_turn(tmp_path):
    runner = make_runner(tmp_path, [
        {"tool_calls": [{"id": "c1", "name": "Look", "input": {"delay_ms": 600_000}}]}])
    runner.start()
    runner.send(SubmitPrompt(text="wait"))
    seen: list = []
    wait_for(runner, "ToolCallStarted", seen)
    began = time.monotonic()
    runner.close()
    assert time.monotonic() - began < HANG_S  # not the call's ten minutes
    seen += runner.drain()
    assert [e.reason for e in seen if e.type == "TurnEnded"] == ["interrupted"]
    types = [e.type for e in seen]
    assert "SessionEnded" in types
