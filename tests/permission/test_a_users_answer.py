"""A user's answer to an approval and what follows from it: the message the model reads, how long
the call waited for the user (in the log and in the result), and what a driver learns about how
the answer was given."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.perm_specs import BASH, RAN
from tests.permission.approving import allow, answering, deny, setup
from tui_app.runtime.approval_stage import approve
from tui_app.runtime.call import CallState, make_context
from tui_app.runtime.executor import TurnControl, run_batch
from tui_app.runtime.outcome import CallEnded
from tui_app.runtime.permissions.decision import PermissionDecision
from tui_app.runtime.pipeline import ToolCall, run_call


@pytest.fixture(autouse=True)
def _clear_ran():
    RAN.clear()


BASE = "The user denied this Bash call; it was not run."


@pytest.mark.parametrize("feedback, told", [
    ("use make test instead", f"{BASE} The user said: use make test instead"),
    (None, f"{BASE} Wait for the user to say how to proceed."),
    ("", f"{BASE} Wait for the user to say how to proceed."),
])
async def test_a_users_no_tells_the_model_what_the_user_said(tmp_path, feedback, told):
    env, rec, broker = setup(tmp_path)
    answering(env, rec, broker, lambda e: deny(e, feedback=feedback))
    out = await run_call(ToolCall("t1", "Bash", {"command": "make all"}), env)
    assert (out.code, out.model_content, out.stop_turn, RAN) == ("user_denied", told, False, [])


async def test_no_answer_in_time_is_a_denial_that_says_so(tmp_path):
    env, rec, _ = setup(tmp_path, timeout_s=0.05)
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert (out.code, out.model_content, RAN) == ("permission_denied", "No answer within 0.05s", [])
    assert [(d.decision, d.decided_by) for d in rec.of("PermissionResolved")] == [("deny", "timeout")]


ANSWER_AFTER_S = 0.1


async def test_the_time_spent_waiting_for_the_user_is_reported(tmp_path):
    """The user took at least ANSWER_AFTER_S to answer (the client waits that long after the
    announcement): the log and the result say so, and never more than the whole call took."""
    env, rec, broker = setup(tmp_path)
    answering(env, rec, broker, allow, delay=ANSWER_AFTER_S)
    began = time.perf_counter()
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    took_ms = (time.perf_counter() - began) * 1000
    assert out.type == "ToolCallResult"
    (resolved,) = rec.of("PermissionResolved")
    assert ANSWER_AFTER_S * 1000 - 1 <= resolved.wait_ms <= took_ms
    assert out.metrics.permission_wait_ms == resolved.wait_ms


async def test_the_time_waited_is_reported_when_the_turn_is_interrupted(tmp_path):
    env, rec, broker = setup(tmp_path)
    control = TurnControl()

    def emit(event):
        event = rec(event)
        if event.type == "PermissionRequested":  # the user presses Esc on the turn, not on the dialog
            asyncio.get_running_loop().call_later(ANSWER_AFTER_S, control.abort)
        return event

    env.emit = emit
    began = time.perf_counter()
    [out] = await run_batch([ToolCall("t1", "Bash", {"command": "make"})], env, control)
    took_ms = (time.perf_counter() - began) * 1000
    assert out.code == "cancelled" and RAN == [] and broker.pending() == []
    (resolved,) = rec.of("PermissionResolved")
    assert (resolved.decision, resolved.decided_by) == ("deny", "turn")
    assert ANSWER_AFTER_S * 1000 - 1 <= resolved.wait_ms <= took_ms


@pytest.mark.parametrize("given, escaped, feedback", [
    ({"escaped": True}, True, None),  # the user left the dialog with Esc
    ({"feedback": "not on main"}, False, "not on main"),  # a plain "no", with words
])
async def test_a_driver_learns_how_the_user_answered(tmp_path, given, escaped, feedback):
    """An agent driver (ACP) asks through the approval stage, then reads how the answer was given:
    Esc cancels the agent's turn, feedback goes with the next prompt."""
    env, rec, broker = setup(tmp_path)
    answering(env, rec, broker, lambda e: deny(e, **given))
    state = CallState(ToolCall("t1", "Bash", {"command": "git push"}), env)
    state.spec, state.input, state.flags = BASH, {"command": "git push"}, BASH.flags_of({"command": "git push"})
    state.ctx = make_context(state)
    with pytest.raises(CallEnded) as ended:
        await approve(state, PermissionDecision("ask", "agent", "the agent asks"))
    assert ended.value.code == "user_denied"
    assert (state.answer.escaped, state.answer.feedback) == (escaped, feedback)
