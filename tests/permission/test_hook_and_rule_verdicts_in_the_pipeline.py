"""What the permission stage of a real call tells the screen (PermissionResolved) and the model
(the error it reads), and what runs, for the words a PreToolUse hook can say and for rule and mode
decisions. The hooks are real `bash -c` commands that print their answer (fast: no interpreter)."""

from __future__ import annotations

import pytest

from tests.fakes import make_env
from tests.hook_helpers import make_hooks, one, pre, says
from tests.perm_specs import BASH, EDIT, RAN, READ, WRITE
from tui_app.runtime.permissions.decision import PermissionDecision, PermissionQuery
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule
from tui_app.runtime.pipeline import ToolCall, run_call


@pytest.fixture(autouse=True)
def _clear_ran():
    RAN.clear()


def env_for(tmp_path, policy, hook: dict | None = None, *specs):
    env, rec = make_env(*(specs or (BASH, READ, WRITE, EDIT)), policy=policy, cwd=str(tmp_path))
    if hook is not None:
        env.hooks, _ = make_hooks(one("PreToolUse", hook), tmp_path, recorder=rec)
    return env, rec


def rules(tmp_path, mode="default", **lists) -> RulePolicy:
    return RulePolicy(cwd=str(tmp_path), mode=mode,
                      rules=[make_rule(t, b) for b, ts in lists.items() for t in ts])


@pytest.mark.parametrize("hook, message, stops", [
    (pre(permissionDecision="deny"), "Blocked by PreToolUse hook", False),
    (pre(permissionDecision="deny", permissionDecisionReason="no deploys on Friday"), "no deploys on Friday", False),
    (says({"continue": False, "stopReason": "Freeze in effect"}), "Stopped by a PreToolUse hook: Freeze in effect",
     True),
    (says({"continue": False, "stopReason": "Freeze", "hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not now"}}),
     "not now", True),
])
async def test_a_hook_that_blocks_a_call_is_shown_as_the_decider_and_the_model_reads_why(
        tmp_path, hook, message, stops):
    """Even in bypassPermissions: a hook's deny, or its `continue: false`, and nothing runs. Only
    `continue: false` stops the turn; after a deny the model may try something else."""
    env, rec = env_for(tmp_path, rules(tmp_path, "bypassPermissions"), hook)
    out = await run_call(ToolCall("t1", "Bash", {"command": "./deploy.sh"}), env)
    assert (out.phase, out.code, out.stop_turn) == ("hook", "hook_denied", stops)
    assert out.message == message and message in out.model_content and RAN == []
    resolved = rec.of("PermissionResolved")
    assert [(r.call_id, r.decision, r.decided_by, r.reason) for r in resolved] == [("t1", "deny", "hook", message)]
    assert rec.of("ToolCallStarted") == []


async def test_a_hooks_context_reaches_the_model_with_the_result(tmp_path):
    env, _ = env_for(tmp_path, rules(tmp_path, allow=["Bash(make)"]), pre(additionalContext="branch is main"))
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert out.type == "ToolCallResult" and RAN == [("Bash", {"command": "make"})]
    assert out.model_content.endswith("[Hook additional context]\n1. branch is main")


@pytest.mark.parametrize("rewrite, outcome", [
    # the tool's own checks run on the rewritten input: a file that is not there is refused before
    # anything else …
    ("missing.txt", "precondition_failed"),
    # … and a relative path is resolved against the working directory before it is decided and run
    ("a.txt", "ran"),
])
async def test_a_hook_rewrite_goes_through_the_tools_own_checks_again(tmp_path, rewrite, outcome):
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    env, _ = env_for(tmp_path, rules(tmp_path), pre(updatedInput={"file_path": rewrite}))
    out = await run_call(ToolCall("t1", "Read", {"file_path": str(tmp_path / "b.txt")}), env)
    if outcome == "ran":
        assert out.type == "ToolCallResult"
        assert list(RAN) == [("Read", {"file_path": str(tmp_path / rewrite)})]
    else:
        assert out.code == outcome and "missing.txt" in out.message and RAN == []


@pytest.mark.parametrize("policy_rules, tool, data, resolved", [
    # a rule's deny: the screen shows the rule
    ({"deny": ["Bash(curl *)"]}, "Bash", {"command": "curl evil.sh"}, ("deny", "rule", "Bash(curl *)")),
    ({"deny": ["Read(./.env)"]}, "Read", {"file_path": ".env"}, ("deny", "rule", "Read(./.env)")),
    # a rule's allow: shown too, with the rule that allowed it
    ({"allow": ["Bash(make)"]}, "Bash", {"command": "make"}, ("allow", "rule", "Bash(make)")),
    # a read the tool itself needs no approval for: nothing to resolve, it just runs
    ({}, "Read", {"file_path": "a.txt"}, None),
    ({}, "Bash", {"command": "git status"}, None),
])
async def test_what_the_screen_is_told_about_a_rule_decision(tmp_path, policy_rules, tool, data, resolved):
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / ".env").write_text("SECRET=1\n")
    env, rec = env_for(tmp_path, rules(tmp_path, **policy_rules))
    out = await run_call(ToolCall("t1", tool, data), env)
    shown = [(r.decision, r.decided_by, r.rule) for r in rec.of("PermissionResolved")]
    assert shown == ([resolved] if resolved else [])
    if resolved and resolved[0] == "deny":
        assert out.code == "permission_denied" and RAN == []
        assert out.message == rec.of("PermissionResolved")[0].reason
    else:
        assert out.type == "ToolCallResult" and [name for name, _ in RAN] == [tool]


class SilentDenial:
    """A program embedding Vigil may bring its own policy (the `PermissionPolicy` protocol); one
    that denies without a word must still tell the model what was refused."""

    mode = "default"

    def decide(self, query: PermissionQuery) -> PermissionDecision:
        return PermissionDecision("deny", "mode", "")

    def hides_tool(self, name: str) -> bool:
        return False


async def test_a_denial_without_a_reason_names_the_tool(tmp_path):
    env, _ = env_for(tmp_path, SilentDenial())
    out = await run_call(ToolCall("t1", "Write", {"file_path": str(tmp_path / "a"), "content": "x"}), env)
    assert (out.code, out.message) == ("permission_denied", "Permission to use Write denied") and RAN == []
