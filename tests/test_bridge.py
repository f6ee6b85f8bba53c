"""The session runs on its own thread; the UI side drains events and answers thread-safely."""

from __future__ import annotations

import threading
import time

from tests.fakes import SAFE, work_spec
from tests.waiting import DEADLINE_S, HANG_S
from tui_app.agents.builtin import run_turn
from tui_app.app.bridge import SessionRunner
from tui_app.providers.scripted import Script, ScriptedModel
from tui_app.runtime.permissions.broker import ApprovalAnswer, ApprovalBroker
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.session import Session

ASKING = SAFE.model_copy(update={"needs_approval": True, "read_only": False})


def make_runner(tmp_path, steps) -> SessionRunner:
    registry = ToolRegistry()
    registry.register(work_spec("Look", SAFE))
    registry.register(work_spec("Change", ASKING))
    session = Session(agent=run_turn, cwd=str(tmp_path), model=ScriptedModel(Script.model_validate({"steps": steps})),
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
    future = runner.submit("change x")
    assert runner.submit("again") is None  # one turn at a time
    seen: list = []
    request = wait_for(runner, "PermissionRequested", seen)
    assert runner.session.broker.answer(request.request_id, ApprovalAnswer(
        "allow", input_sha256=request.input_sha256))
    result = future.result(DEADLINE_S)
    assert result.reason == "completed" and result.text == "Changed."
    assert threads == {"vigil-runtime"}
    wait_for(runner, "TurnEnded", seen)
    runner.close()
    assert not runner._thread.is_alive()


def test_close_interrupts_a_running_turn(tmp_path):
    runner = make_runner(tmp_path, [
        {"tool_calls": [{"id": "c1", "name": "Look", "input": {"delay_ms": 600_000}}]}])
    runner.start()
    future = runner.submit("wait")
    seen: list = []
    wait_for(runner, "ToolCallStarted", seen)
    began = time.monotonic()
    runner.close()
    assert time.monotonic() - began < HANG_S  # not the call's ten minutes
    assert future.result(DEADLINE_S).reason == "interrupted"
    types = [e.type for e in seen + runner.drain()]
    assert "SessionEnded" in types
