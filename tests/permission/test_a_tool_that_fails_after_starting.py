"""A tool that fails after it started: the PostToolUseFailure hooks run (they do not for a call
that never started), and the model reads their feedback with the failure."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.fakes import make_env
from tests.hook_helpers import handler, make_hooks, one, script
from tests.perm_specs import WRITE
from tui_app.runtime.contract import RawResult, ToolFailure
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule
from tui_app.runtime.pipeline import ToolCall, run_call


async def disk_full(args, ctx) -> RawResult:
    raise ToolFailure("disk full")


FAILING = replace(WRITE, handler=disk_full)


@pytest.mark.parametrize("rule, ran, feedback", [
    ("allow", True, True),    # it started, failed: the failure hook's word reaches the model
    ("deny", False, False),   # denied: nothing started, no failure hook runs
])
async def test_a_failure_hook_runs_only_for_a_call_that_started(tmp_path, rule, ran, feedback):
    policy = RulePolicy(cwd=str(tmp_path), rules=[make_rule("Write", rule)])
    env, rec = make_env(FAILING, policy=policy, cwd=str(tmp_path))
    env.hooks, _ = make_hooks(one("PostToolUseFailure", handler(script("exit_with.sh", 2, "clean /tmp first"))),
                              tmp_path, recorder=rec)
    out = await run_call(ToolCall("t1", "Write", {"file_path": str(tmp_path / "a"), "content": "x"}), env)
    assert out.code == ("execution_failed" if ran else "permission_denied")
    assert ("PostToolUseFailure hook feedback: clean /tmp first" in out.model_content) is feedback
    assert [r.event for r in rec.of("HookRun")] == (["PostToolUseFailure"] * 2 if ran else [])
