"""Several hooks on one call: what their answers add up to (the reasons the model and the screen
read, who interrupts, what a rewrite leaves out) — and a PermissionRequest hook's allow answering
the question an ask rule raised. Real `bash -c` hooks that print their answer."""

from __future__ import annotations

import pytest

from tests.fakes import make_env
from tests.hook_helpers import call, make_hooks, one, pre, says
from tests.perm_specs import BASH, RAN
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule
from tui_app.runtime.pipeline import ToolCall, run_call


@pytest.fixture(autouse=True)
def _clear_ran():
    RAN.clear()


def perm(**decision) -> dict:
    return says({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})


async def test_the_reasons_of_several_denying_hooks_are_joined_without_blanks(tmp_path):
    hooks, _ = make_hooks(one("PreToolUse", pre(permissionDecision="deny"),
                              pre(permissionDecision="deny", permissionDecisionReason="no deploys on Friday"),
                              pre(permissionDecision="allow", permissionDecisionReason="CI box")), tmp_path)
    outcome = await hooks.pre_tool_use(call())
    assert (outcome.decision, outcome.reason) == ("deny", "no deploys on Friday")


async def test_a_rewrite_that_leaves_a_key_out_runs_without_it(tmp_path):
    """updatedInput is the whole new input: a hook that drops `timeout` drops it."""
    hooks, _ = make_hooks(one("PreToolUse", pre(updatedInput={"command": "npm test -- --ci"})), tmp_path)
    outcome = await hooks.pre_tool_use(call(tool_input={"command": "npm test", "timeout": 5000}))
    assert outcome.updated_input == {"command": "npm test -- --ci"}


@pytest.mark.parametrize("handlers, message, interrupt", [
    # one denial that interrupts is enough to stop the agent; a denial without a message adds no blank
    ([perm(behavior="deny", message="not on main", interrupt=True), perm(behavior="deny")], "not on main", True),
    ([perm(behavior="deny"), perm(behavior="deny", message="not on main", interrupt=True)], "not on main", True),
    ([perm(behavior="deny", message="a"), perm(behavior="deny", message="b")], "a; b", False),
])
async def test_several_permission_hooks_that_deny(tmp_path, handlers, message, interrupt):
    hooks, _ = make_hooks(one("PermissionRequest", *handlers), tmp_path)
    answer = await hooks.permission_request(call(), [])
    assert (answer.behavior, answer.message, answer.interrupt) == ("deny", message, interrupt)


async def test_several_permission_hooks_that_allow_give_their_reasons_without_blanks(tmp_path):
    hooks, _ = make_hooks(one("PermissionRequest", perm(behavior="allow"), perm(behavior="allow", message="CI box")),
                          tmp_path)
    answer = await hooks.permission_request(call(), [])
    assert (answer.behavior, answer.message, answer.updated_input) == ("allow", "CI box", None)


async def test_a_permission_hooks_allow_answers_the_question_an_ask_rule_raised(tmp_path):
    """Headless, nobody to ask: the hook answers for the user, and `git push` runs as it was."""
    policy = RulePolicy(cwd=str(tmp_path), rules=[make_rule("Bash(git push *)", "ask")])
    env, rec = make_env(BASH, policy=policy, cwd=str(tmp_path))
    env.hooks, _ = make_hooks(one("PermissionRequest", perm(behavior="allow", message="release box")), tmp_path,
                              recorder=rec)
    out = await run_call(ToolCall("t1", "Bash", {"command": "git push origin"}), env)
    assert out.type == "ToolCallResult" and list(RAN) == [("Bash", {"command": "git push origin"})]
    resolved = rec.of("PermissionResolved")
    assert [(r.decision, r.decided_by, r.reason) for r in resolved] == [("allow", "hook", "release box")]
