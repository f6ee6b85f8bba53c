"""The last step before a tool runs (`start`): a call the session's log could not record never
runs, and a call that runs gets its progress line, its time limit, and honest timings."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes import make_env, timed, work_spec
from tests.perm_specs import RAN, READ, REAL, WRITE
from tests.waiting import HANG_S
from tui_app.runtime.permissions.broker import ApprovalAnswer, ApprovalBroker
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule
from tui_app.runtime.pipeline import ToolCall, run_call

BASH = REAL["Bash"]


@pytest.fixture(autouse=True)
def _clear_ran():
    RAN.clear()


def allowing(tmp_path, *rules: str) -> RulePolicy:
    return RulePolicy(cwd=str(tmp_path), rules=[make_rule(r, "allow") for r in rules])


@pytest.mark.parametrize("log_fails_at", ["before the start", "writing the start"])
async def test_a_call_the_log_cannot_record_does_not_run(tmp_path, log_fails_at):
    """The log is the audit trail: a tool it cannot record does not run, and the screen is not told
    that it started when it was never going to."""
    env, rec = make_env(WRITE, policy=allowing(tmp_path, "Write"), cwd=str(tmp_path))
    if log_fails_at == "before the start":
        env.can_record = lambda: False
    else:
        env.can_record = lambda: not rec.of("ToolCallStarted")
    out = await run_call(ToolCall("t1", "Write", {"file_path": str(tmp_path / "a"), "content": "x"}), env)
    assert (out.phase, out.code) == ("cancel", "aborted_before_dispatch") and RAN == []
    assert len(rec.of("ToolCallStarted")) == (0 if log_fails_at == "before the start" else 1)


async def test_a_commands_output_streams_to_the_screen_while_it_runs(tmp_path):
    env, rec = make_env(BASH, policy=allowing(tmp_path, "Bash(printf *)"), cwd=str(tmp_path))
    out = await run_call(ToolCall("t1", "Bash", {"command": "printf 'building\\n'"}), env)
    assert out.type == "ToolCallResult"
    assert "building" in "".join(p.text or "" for p in rec.of("ToolCallProgress") if p.call_id == "t1")


async def test_a_command_past_its_timeout_is_stopped_by_the_tool_and_says_so(tmp_path):
    """Bash keeps its own time limit (and keeps the output so far); the start names that limit."""
    env, rec = make_env(BASH, policy=allowing(tmp_path, "Bash"), cwd=str(tmp_path))
    command = f"printf 'step 1\\n'; sleep {HANG_S * 10}"
    out = await asyncio.wait_for(run_call(ToolCall("t1", "Bash", {"command": command, "timeout": 1000}), env),
                                 HANG_S)
    assert (out.phase, out.code) == ("timeout", "timeout")
    assert rec.of("ToolCallStarted")[0].timeout_ms == 1000
    # the tool's own stop (not the pipeline's watchdog) keeps what the command printed, on screen
    assert out.display.timed_out and "step 1" in "".join(s.text for s in out.display.segments)


async def test_a_tool_that_ignores_its_time_limit_is_stopped_at_it(tmp_path):
    """An extension's tool that never looks at its limit: the pipeline's watchdog ends the call."""
    slow = work_spec("Slow", timeout=timed(default_ms=300))
    env, _ = make_env(slow, policy=allowing(tmp_path, "Slow"), cwd=str(tmp_path))
    out = await asyncio.wait_for(run_call(ToolCall("t1", "Slow", {"delay_ms": int(HANG_S * 10_000)}), env), HANG_S)
    assert (out.phase, out.code) == ("timeout", "timeout") and "300ms" in out.message


async def test_the_time_a_call_ran_does_not_count_the_wait_for_approval(tmp_path):
    """exec_ms is the tool's own time: the user's thinking is permission_wait_ms, and the two never
    add up to more than the whole call."""
    (tmp_path / "a.txt").write_text("a\n")
    broker = ApprovalBroker(interactive=True)
    env, _ = make_env(READ, policy=RulePolicy(cwd=str(tmp_path), rules=[make_rule("Read", "ask")]),
                      broker=broker, cwd=str(tmp_path))

    async def user():
        while not broker.pending():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # the user reads the dialog: a wait that must not count as running
        request = broker.pending()[0]
        broker.answer(request.request_id, ApprovalAnswer("allow", input_sha256=request.input_sha256))

    answering = asyncio.create_task(user())
    out = await asyncio.wait_for(run_call(ToolCall("t1", "Read", {"file_path": str(tmp_path / "a.txt")}), env),
                                 HANG_S)
    await answering
    assert out.type == "ToolCallResult" and [("Read", {"file_path": str(tmp_path / "a.txt")})] == RAN
    metrics = out.metrics
    assert metrics.permission_wait_ms >= 200
    assert metrics.exec_ms + metrics.permission_wait_ms <= metrics.total_ms
