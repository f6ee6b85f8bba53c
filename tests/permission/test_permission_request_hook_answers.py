"""What a PermissionRequest hook's answer does: its deny (and the message the model reads), its
`updatedInput` (validated, checked by the tool, put to the rules again, and what runs), and an
always-ask tool that a hook may deny but not allow. Real hook processes, the real Bash spec."""

from __future__ import annotations

import json

import pytest

from tests.hook_helpers import handler, script
from tests.perm_specs import DEPLOY, RAN
from tests.permission.approving import allow, answering, deny, logged, permission_hook, setup
from tui_app.runtime.permissions.sandbox_policy import SandboxPolicy, SandboxSettings
from tui_app.runtime.pipeline import ToolCall, run_call


@pytest.fixture(autouse=True)
def _clear_ran():
    RAN.clear()


def answer_all(decision: dict) -> dict:
    output = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}
    return {"PermissionRequest": [{"hooks": [handler(script("respond.py", json.dumps(output)))]}]}


@pytest.mark.parametrize("decision, message", [
    ({"behavior": "deny", "message": "frozen for the release"}, "frozen for the release"),
    ({"behavior": "deny"}, "Denied by PermissionRequest hook"),  # the model still reads why
])
async def test_a_hook_deny_tells_the_model_why(tmp_path, decision, message):
    env, rec, _ = setup(tmp_path, interactive=False, hooks_config=answer_all(decision))
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert (out.code, out.model_content, RAN) == ("hook_denied", message, [])
    assert [(d.decision, d.decided_by) for d in rec.of("PermissionResolved")] == [("deny", "hook")]


@pytest.mark.parametrize("decision, code, message", [
    ({"behavior": "deny", "message": "no deploys on Friday"}, "hook_denied", "no deploys on Friday"),
    # a hook's allow does not skip the question: headless, nobody is there to answer it
    ({"behavior": "allow"}, "no_permission_client", "No permission client configured"),
])
async def test_a_hook_may_deny_an_always_ask_tool_but_not_allow_it(tmp_path, decision, code, message):
    env, _rec, _ = setup(tmp_path, DEPLOY, interactive=False, hooks_config=answer_all(decision))
    out = await run_call(ToolCall("t1", "Deploy", {"target": "prod"}), env)
    assert (out.code, out.model_content, RAN) == (code, message, [])


REWRITE_TO_PUSH = {"make": {"behavior": "allow", "updatedInput": {"command": "git push origin"}},
                   # asked again, this hook would wave the push through: it must not be asked again
                   "git push origin": {"behavior": "allow"}}


async def test_a_rewrite_into_an_ask_rule_goes_to_the_user_not_back_to_the_hook(tmp_path):
    log = tmp_path / "asked.jsonl"
    env, rec, broker = setup(tmp_path, rules={"ask": ["Bash(git push *)"]},
                             hooks_config=permission_hook(tmp_path, REWRITE_TO_PUSH, log))
    # the client answers only the second question (the first is the hook's to answer)
    answering(env, rec, broker, lambda e: deny(e) if e.input["command"] == "git push origin" else None)
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert (out.code, RAN) == ("user_denied", [])
    assert [r.input["command"] for r in rec.of("PermissionRequested")] == ["make", "git push origin"]
    assert [(d.decision, d.decided_by) for d in rec.of("PermissionResolved")] == [("allow", "hook"), ("deny", "user")]
    assert [a["tool_input"]["command"] for a in logged(log)] == ["make"]


async def test_headless_a_rewrite_into_an_ask_rule_is_denied_not_run(tmp_path):
    log = tmp_path / "asked.jsonl"
    env, _rec, _ = setup(tmp_path, interactive=False, rules={"ask": ["Bash(git push *)"]},
                        hooks_config=permission_hook(tmp_path, REWRITE_TO_PUSH, log))
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert (out.code, RAN) == ("no_permission_client", [])
    assert [a["tool_input"]["command"] for a in logged(log)] == ["make"]


async def test_a_rewrite_into_a_read_only_command_runs_without_a_second_question(tmp_path):
    env, rec, _ = setup(tmp_path, interactive=False, hooks_config=permission_hook(tmp_path, {
        "make": {"behavior": "allow", "updatedInput": {"command": "ls -la"}}}))
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert out.type == "ToolCallResult" and RAN == [("Bash", {"command": "ls -la"})]
    assert len(rec.of("PermissionRequested")) == 1
    (started,) = rec.of("ToolCallStarted")
    # what runs is described as itself: a read-only listing, not the build it replaced
    assert started.input == {"command": "ls -la"} and started.flags.read_only and started.flags.concurrency_safe


@pytest.mark.parametrize("rewrite, why", [
    ({"command": "   "}, "The command is empty."),
    ({"command": "ls\x00; rm -rf ~"}, "NUL byte"),
])
async def test_a_rewrite_the_tool_refuses_is_denied_and_nothing_runs(tmp_path, rewrite, why):
    env, rec, _ = setup(tmp_path, interactive=False, hooks_config=permission_hook(tmp_path, {
        "make": {"behavior": "allow", "updatedInput": rewrite}}))
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert out.type == "ToolCallError" and RAN == []
    (denied,) = rec.of("PermissionResolved")
    assert (denied.decision, denied.decided_by) == ("deny", "hook")
    assert denied.reason.startswith("The hook's rewritten input was rejected:") and why in denied.reason


async def test_a_users_deny_stays_a_deny_whatever_else_the_answer_carries(tmp_path):
    """A client that sends an edited input (or "always") with its "no": the call is the user's
    denial, nothing is rewritten or saved."""
    env, rec, broker = setup(tmp_path)
    answering(env, rec, broker, lambda e: deny(e, updated_input={"command": 5}, always=True))
    out = await run_call(ToolCall("t1", "Bash", {"command": "npm run lint"}), env)
    assert (out.code, RAN) == ("user_denied", [])
    (resolved,) = rec.of("PermissionResolved")
    assert (resolved.decision, resolved.decided_by, resolved.saved_rules) == ("deny", "user", [])
    assert env.policy.rules("allow") == [] and not (tmp_path / ".vigil").exists()


@pytest.mark.parametrize("chosen, saved", [
    ((), ["Bash(npm run lint)"]),  # the rule the dialog suggested
    (("Bash(npm run *)",), ["Bash(npm run *)"]),  # the one the user picked instead
])
async def test_always_allow_saves_the_rule_the_user_chose(tmp_path, chosen, saved):
    env, rec, broker = setup(tmp_path)
    answering(env, rec, broker, lambda e: allow(e, always=True, rules=chosen))
    out = await run_call(ToolCall("t1", "Bash", {"command": "npm run lint"}), env)
    assert out.type == "ToolCallResult"
    assert rec.of("PermissionResolved")[0].saved_rules == saved
    assert json.loads((tmp_path / ".vigil" / "settings.local.json").read_text()) == {"permissions": {"allow": saved}}


async def test_a_plain_yes_saves_no_rule(tmp_path):
    env, rec, broker = setup(tmp_path)
    answering(env, rec, broker, allow)
    out = await run_call(ToolCall("t1", "Bash", {"command": "npm run lint"}), env)
    assert out.type == "ToolCallResult" and rec.of("PermissionResolved")[0].saved_rules == []
    assert env.policy.rules("allow") == [] and not (tmp_path / ".vigil").exists()  # "yes" is not "always"


async def test_a_rewrite_back_into_the_sandbox_runs_in_the_sandbox(tmp_path):
    """The model asked to leave the sandbox (so it asks); a hook allows the command without that
    flag: the rules decide again, and what runs runs sandboxed, as the policy said."""
    env, rec, _ = setup(tmp_path, interactive=False, hooks_config=permission_hook(tmp_path, {
        "make": {"behavior": "allow", "updatedInput": {"command": "make"}}}))
    env.policy.sandbox = SandboxPolicy(SandboxSettings(enabled=True), env.policy.dirs, str(tmp_path), available=True)
    out = await run_call(ToolCall("t1", "Bash", {"command": "make", "dangerouslyDisableSandbox": True}), env)
    assert out.type == "ToolCallResult" and RAN == [("Bash", {"command": "make"})]
    (asked,) = rec.of("PermissionRequested")
    assert asked.sandboxed is False  # what was asked about would have run outside
    (started,) = rec.of("ToolCallStarted")
    assert started.sandboxed is True
