"""The file, todo and question tools inside a whole session (scripted model, turn loop, event log),
wired the way the composition root wires them; AskUserQuestion through the broker, answered from
another thread, and refused when headless."""

from __future__ import annotations

import asyncio
import threading

from tests.fakes import make_env
from tests.file_tools import READ
from tests.waiting import eventually
from tui_app.agents.builtin_agent import BuiltinAgent
from tui_app.assemble import SessionOptions, build_services, connect_services
from tui_app.providers.scripted import Script, ScriptedModel
from tui_app.runtime.events import ToolCallError, ToolCallResult
from tui_app.runtime.files.state import FileState
from tui_app.runtime.log.eventlog import read_events
from tui_app.runtime.permissions.broker import ApprovalBroker
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.session import Session
from tui_app.tools.ask_user import ASK_USER_QUESTION
from tui_app.tools.edit import EDIT, MULTI_EDIT
from tui_app.tools.todo import TODO_WRITE, TodoList
from tui_app.tools.web_fetch import WEB_FETCH
from tui_app.tools.write import WRITE

QUESTION = {"question": "Which test runner?", "header": "Runner", "multiSelect": False,
            "options": [{"label": "pytest", "description": "the usual"},
                        {"label": "unittest", "description": "stdlib"}]}
TODOS = [{"content": "Fix median", "status": "in_progress", "activeForm": "Fixing median"},
         {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}]


def session_for(tmp_path, steps: list, interactive: bool) -> Session:
    registry = ToolRegistry()
    for spec in (READ, WRITE, EDIT, WEB_FETCH, TODO_WRITE, ASK_USER_QUESTION, MULTI_EDIT):
        registry.register(spec)
    session = Session(agent=BuiltinAgent(ScriptedModel(Script.model_validate({"steps": steps}))), cwd=str(tmp_path),
                      registry=registry, policy=ModePolicy(mode="acceptEdits"),
                      broker=ApprovalBroker(interactive=interactive), log_path=tmp_path / "log" / "events.jsonl")
    session.services.update(build_services(SessionOptions(cwd=str(tmp_path)), session.id))
    connect_services(session)
    return session


async def test_a_session_reads_edits_plans_and_asks(tmp_path):
    (tmp_path / "stats.py").write_text("def median(xs):\n    return xs[len(xs) // 2]\n")
    steps = [
        {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "stats.py"}}]},
        {"expect": ["def median"], "tool_calls": [
            {"id": "t1", "name": "TodoWrite", "input": {"todos": TODOS}},
            {"id": "q1", "name": "AskUserQuestion", "input": {"questions": [QUESTION]}}]},
        {"expect": ['"Which test runner?"="pytest"'], "tool_calls": [
            {"id": "e1", "name": "Edit", "input": {"file_path": "stats.py", "old_string": "xs[len(xs) // 2]",
                                                   "new_string": "sorted(xs)[len(xs) // 2]"}}]},
        {"expect": ["has been updated"], "text": "Done."},
    ]
    session = session_for(tmp_path, steps, interactive=True)
    answered_from: list[str] = []

    def on_event(event) -> None:
        if event.type == "UserQuestionAsked":  # the screen answers from its own thread
            def answer() -> None:
                answered_from.append(threading.current_thread().name)
                assert session.broker.answer_question(event.request_id, {"Which test runner?": "pytest"})
            threading.Thread(target=answer, name="screen").start()

    session.subscribe(on_event)
    await session.start()
    result = await session.run_turn("Fix the median")
    await session.close()
    assert result.reason == "completed", result.error
    assert (tmp_path / "stats.py").read_text() == "def median(xs):\n    return sorted(xs)[len(xs) // 2]\n"
    assert answered_from == ["screen"]
    assert session.services["todos"].items == TODOS
    assert not session.services["file_state"].watching  # closed with the session
    logged = read_events(tmp_path / "log" / "events.jsonl")
    assert logged.warnings == []
    types = [e.type for e in logged.events]
    assert types.index("UserQuestionAsked") < types.index("UserQuestionAnswered")
    [todo] = [e for e in logged.events if e.type == "TodoUpdated"]
    assert todo.todos == TODOS and todo.call_id == "t1"
    todo_result = next(e for e in logged.events if e.type == "ToolCallResult" and e.call_id == "t1")
    assert todo_result.display.kind == "todo_list" and todo_result.display.todos[0].active_form == "Fixing median"
    edit_result = next(e for e in logged.events if e.type == "ToolCallResult" and e.call_id == "e1")
    assert edit_result.display.kind == "file_diff"
    assert (edit_result.display.added, edit_result.display.removed) == (1, 1)


async def test_an_outside_change_in_a_live_session_is_an_event_in_its_log(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    session = session_for(tmp_path, [{"tool_calls": [
        {"id": "r1", "name": "Read", "input": {"file_path": "a.txt"}}]}, {"text": "ok"}], interactive=False)
    await session.start()
    await session.run_turn("read it")
    file_state: FileState = session.services["file_state"]
    assert await file_state.wait_until_watching()
    (tmp_path / "a.txt").write_text("two\n")
    await eventually(lambda: file_state.baseline(str(tmp_path / "a.txt")).stale, "the watcher's report")
    await asyncio.sleep(0.05)  # the event is delivered on the session's loop
    await session.close()
    changed = [e for e in read_events(tmp_path / "log" / "events.jsonl").events if e.type == "FileChangedExternally"]
    assert [(e.path, e.change) for e in changed] == [(str(tmp_path / "a.txt"), "modified")]


async def ask(broker: ApprovalBroker | None, answer=None, cancel: bool = False):
    env, rec = make_env(ASK_USER_QUESTION)
    if broker is not None:
        env.services["approval_broker"] = broker
    task = asyncio.ensure_future(run_call(ToolCall("q1", "AskUserQuestion", {"questions": [QUESTION]}), env))
    if broker is not None and broker.interactive:
        while not rec.of("UserQuestionAsked"):
            await asyncio.sleep(0.01)
        [asked] = rec.of("UserQuestionAsked")
        if cancel:
            task.cancel()
        else:
            assert broker.answer_question(asked.request_id, answer)
    return await task, rec  # a cancelled call still settles with its result


async def test_headless_ask_user_question_is_a_clear_error_at_once():
    for broker in (None, ApprovalBroker(interactive=False)):
        out, rec = await ask(broker)
        assert isinstance(out, ToolCallError) and out.code == "no_interactive_client"
        assert "needs an interactive session" in out.model_content and "headless" in out.model_content
        assert rec.of("UserQuestionAsked") == []


async def test_a_declined_question_tells_the_model_not_to_guess():
    out, rec = await ask(ApprovalBroker(interactive=True), None)
    assert isinstance(out, ToolCallError) and out.code == "user_denied" and "declined" in out.model_content
    assert rec.of("UserQuestionAnswered")[0].outcome == "declined"


async def test_a_multi_select_answer_reaches_the_model():
    out, _ = await ask(ApprovalBroker(interactive=True), {"Which test runner?": "pytest, unittest"})
    assert isinstance(out, ToolCallResult)
    assert out.model_content == ('User has answered your questions: "Which test runner?"="pytest, unittest". '
                                 "You can now continue with the user's answers in mind.")


async def test_a_cancelled_question_closes_its_dialog_and_forgets_the_request():
    broker = ApprovalBroker(interactive=True)
    out, rec = await ask(broker, cancel=True)
    assert isinstance(out, ToolCallError) and out.code == "cancelled"
    [closed] = rec.of("UserQuestionAnswered")
    assert closed.outcome == "cancelled"
    assert broker.answer_question(closed.request_id, {"x": "y"}) is False


async def test_question_input_follows_claude_codes_shape():
    env, _ = make_env(ASK_USER_QUESTION)
    env.services["approval_broker"] = ApprovalBroker(interactive=True)
    one_option = {**QUESTION, "options": QUESTION["options"][:1]}
    out = await run_call(ToolCall("q1", "AskUserQuestion", {"questions": [one_option]}), env)
    assert out.code == "schema_invalid"
    twice = await run_call(ToolCall("q2", "AskUserQuestion", {"questions": [QUESTION, QUESTION]}), env)
    assert twice.code == "precondition_failed" and "different" in twice.model_content


async def test_todo_write_replaces_the_list_and_needs_no_approval_even_in_plan_mode():
    env, rec = make_env(TODO_WRITE, policy=ModePolicy(mode="plan"))
    env.services["todos"] = store = TodoList()
    out = await run_call(ToolCall("t1", "TodoWrite", {"todos": TODOS}), env)
    assert isinstance(out, ToolCallResult) and out.model_content.startswith("Todos have been modified successfully")
    out = await run_call(ToolCall("t2", "TodoWrite", {"todos": TODOS[1:]}), env)
    assert store.items == TODOS[1:]
    assert [len(e.todos) for e in rec.of("TodoUpdated")] == [2, 1]
    assert rec.of("PermissionRequested") == []
    bad = await run_call(ToolCall("t3", "TodoWrite", {"todos": [{"content": "x", "status": "done",
                                                                  "activeForm": "x"}]}), env)
    assert bad.code == "schema_invalid"
