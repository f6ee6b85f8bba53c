"""The ApprovalBroker as its clients use it: who may answer a request (only hooks, headless),
what an answer arriving after the runtime is gone gets, that a losing hook is stopped before the
winner's answer is acted on, that answered requests and questions are let go, and the questions
of AskUserQuestion / ExitPlanMode (answered once; a cancelled one takes no answer)."""

from __future__ import annotations

import asyncio
import json
import weakref

import pytest

from tests.hook_helpers import handler, script
from tests.perm_specs import RAN
from tests.permission.approving import setup
from tui_app.runtime.permissions.broker import (
    NO_CLIENT_MESSAGE,
    ApprovalAnswer,
    ApprovalBroker,
    ApprovalRequest,
    QuestionRequest,
    input_sha256,
)
from tui_app.runtime.pipeline import ToolCall, run_call


def request(request_id: str = "perm-1", asked_by: str = "mode", reason: str = "") -> ApprovalRequest:
    data = {"command": "make"}
    return ApprovalRequest(request_id=request_id, call_id="t1", tool="Bash", input=data,
                           input_sha256=input_sha256(data), summary="Bash make", asked_by=asked_by, reason=reason)


def yes(req: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer("allow", input_sha256=req.input_sha256)


async def test_a_broker_made_without_saying_is_headless_and_denies():
    """An embedding program that forgets to wire a client gets denials, never a silent allow."""
    req = request()
    answer = await ApprovalBroker().decide(req, lambda: None)
    assert (answer.decision, answer.decided_by, answer.reason) == ("deny", "no_client", NO_CLIENT_MESSAGE)


async def test_headless_a_users_answer_is_refused_while_the_hook_decides():
    broker = ApprovalBroker(interactive=False)
    req = request()
    tried: list[bool] = []
    hook_may_answer = asyncio.Event()

    def announce() -> None:  # something posing as a client answers the instant the request appears
        tried.append(broker.answer(req.request_id, yes(req)))
        hook_may_answer.set()

    async def hook() -> ApprovalAnswer:
        await hook_may_answer.wait()
        return ApprovalAnswer("deny", "hook", reason="not without a human")

    answer = await broker.decide(req, announce, hook)
    assert tried == [False] and (answer.decision, answer.decided_by) == ("deny", "hook")


@pytest.mark.parametrize("asked_by, reason, told", [
    ("hook", "a human must look at deploys", "a human must look at deploys"),  # the hook's words reach the model
    ("hook", "", NO_CLIENT_MESSAGE),  # a hook that asked without saying why
    ("rule", "Bash(git push *) asks", NO_CLIENT_MESSAGE),  # words meant for a user, not the model
])
async def test_headless_an_ask_nobody_can_answer_is_denied_with_the_right_words(asked_by, reason, told):
    answer = await ApprovalBroker(interactive=False).decide(request(asked_by=asked_by, reason=reason), lambda: None)
    assert (answer.decision, answer.decided_by, answer.reason) == ("deny", "no_client", told)


async def test_headless_a_pre_tool_use_hooks_ask_reaches_the_model_with_its_reason(tmp_path):
    RAN.clear()
    output = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                     "permissionDecisionReason": "deploys need a human"}}
    env, _rec, _ = setup(tmp_path, interactive=False, hooks_config={"PreToolUse": [{"hooks": [
        handler(script("respond.py", json.dumps(output)))]}]})
    out = await run_call(ToolCall("t1", "Bash", {"command": "ls"}), env)
    assert (out.code, out.model_content, RAN) == ("no_permission_client", "deploys need a human", [])


def test_an_answer_after_the_runtime_loop_is_gone_is_refused():
    """The UI thread answers a dialog after the session's loop has ended: False, not a crash."""
    broker = ApprovalBroker(interactive=True)
    req = request()
    loop = asyncio.new_event_loop()
    task = loop.create_task(broker.decide(req, lambda: None))
    loop.run_until_complete(asyncio.sleep(0))  # the request is registered and waits
    loop.close()
    assert [r.request_id for r in broker.pending()] == [req.request_id]
    assert broker.answer(req.request_id, yes(req)) is False
    task.get_coro().close()  # what the loop would have done: the wait ends, the request is let go
    assert broker.pending() == []


async def test_the_losing_hook_is_stopped_before_the_users_answer_is_acted_on():
    broker = ApprovalBroker(interactive=True)
    req = request()
    hook_state: list[str] = []

    async def hook() -> None:
        hook_state.append("started")
        try:
            await asyncio.Event().wait()  # a hook that takes its time
        finally:
            hook_state.append("stopped")  # where the runner kills the hook's processes

    answer = await broker.decide(req, lambda: broker.answer(req.request_id, yes(req)), hook)
    assert answer.decided_by == "user" and hook_state == ["started", "stopped"]


async def test_answered_requests_are_let_go():
    """A long session asks thousands of times: the broker keeps none of the answered requests."""
    broker = ApprovalBroker(interactive=True)
    req = request()
    gone, answer = weakref.ref(req), yes(req)
    request_id = req.request_id
    await broker.decide(req, lambda: broker.answer(request_id, answer))
    del req  # nothing else holds it: it is freed at once (no cycle waits for the collector)
    assert gone() is None


QUESTIONS = [{"question": "Which test runner?", "options": [{"label": "pytest"}, {"label": "unittest"}]}]


async def test_a_question_is_answered_once():
    broker = ApprovalBroker(interactive=True)
    answered: list[bool] = []

    def announce() -> None:  # the dialog answers when it has shown the question
        asyncio.get_running_loop().call_soon(
            lambda: answered.append(broker.answer_question("q1", {"Which test runner?": "pytest"})))

    reply = await broker.ask_user(QuestionRequest("q1", "t1", QUESTIONS), announce)
    assert reply.answers == {"Which test runner?": "pytest"} and answered == [True]
    assert broker.answer_question("q1", {"Which test runner?": "unittest"}) is False  # a second click
    assert broker.answer_question("q-unknown", None) is False


async def test_a_question_whose_call_was_cancelled_takes_no_answer():
    broker = ApprovalBroker(interactive=True)
    shown = asyncio.Event()
    asking = asyncio.ensure_future(broker.ask_user(QuestionRequest("q1", "t1", QUESTIONS), shown.set))
    await shown.wait()
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert broker.answer_question("q1", {"Which test runner?": "pytest"}) is False  # the dialog is stale


async def test_a_users_answers_to_one_request():
    """Each request gets its own id; an answer counts once, only for that request and only for the
    input that was shown; and a plain answer is plain: a "yes" is not "always", a "no" does not
    stop the turn, and nobody pressed Esc."""
    broker = ApprovalBroker(interactive=True)
    req = request(broker.new_request_id())
    assert broker.new_request_id() != req.request_id
    told: list[bool] = []

    def announce() -> None:
        told.append(broker.answer("perm-unknown", yes(req)))
        other = ApprovalAnswer("allow", input_sha256=input_sha256({"command": "rm -rf ~"}))  # not what was shown
        told.append(broker.answer(req.request_id, other))
        told.append(broker.answer(req.request_id, yes(req)))
        told.append(broker.answer(req.request_id, ApprovalAnswer("deny", input_sha256=req.input_sha256)))

    answer = await broker.decide(req, announce)
    assert told == [False, False, True, False]
    assert (answer.decision, answer.decided_by, answer.always, answer.interrupt, answer.escaped) == (
        "allow", "user", False, False, False)
    no = await broker.decide(req2 := request(broker.new_request_id()), lambda: broker.answer(
        req2.request_id, ApprovalAnswer("deny", input_sha256=req2.input_sha256)))
    assert (no.decision, no.always, no.interrupt, no.escaped) == ("deny", False, False, False)


async def test_nobody_answering_in_time_is_a_denial():
    broker = ApprovalBroker(interactive=True, timeout_s=0.05)
    answer = await broker.decide(request(broker.new_request_id()), lambda: None)
    assert (answer.decision, answer.decided_by, answer.reason) == ("deny", "timeout", "No answer within 0.05s")
