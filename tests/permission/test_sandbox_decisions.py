"""What the policy decides for Bash when the session has a sandbox: required but not running,
a command that asks to leave it, a command that runs outside it (`excludedCommands`), and a
read-only command inside it.

The sandbox's state is what Vigil found at start (bubblewrap there or not); the command itself
does not run here (tests/test_sandbox.py runs them)."""

from __future__ import annotations

import pytest

from tests.perm_specs import BASH, READ
from tui_app.runtime.permissions.decision import PermissionDecision, PermissionQuery
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.sandbox_policy import SandboxPolicy, SandboxSettings

NO_SANDBOX = "no sandbox"


def policy_with(tmp_path, sandbox: str, mode: str = "default", **settings) -> RulePolicy:
    """`sandbox`: "on" (bubblewrap runs), "unavailable" (it cannot run here), or NO_SANDBOX."""
    policy = RulePolicy(cwd=str(tmp_path), home=str(tmp_path), mode=mode)  # type: ignore[arg-type]
    if sandbox != NO_SANDBOX:
        policy.sandbox = SandboxPolicy(SandboxSettings(**settings), dirs=policy.dirs, home=str(tmp_path),
                                       available=sandbox == "on",
                                       unavailable_reason="" if sandbox == "on" else "bubblewrap is not installed")
    return policy


def decide(policy: RulePolicy, spec, data: dict) -> PermissionDecision:
    return policy.decide(PermissionQuery(spec, data, spec.flags_of(data), policy.cwd))


LS = {"command": "ls -la"}
OUTSIDE = {"command": "ls -la", "dangerouslyDisableSandbox": True}

# sandbox state, its settings, mode, the call, (behavior, decided_by)
ROWS = [
    # sandbox.failIfUnavailable: with no sandbox no command runs, not even a read-only one
    ("unavailable", {"enabled": True, "fail_if_unavailable": True}, "default", LS, ("deny", "guard")),
    ("unavailable", {"enabled": True, "fail_if_unavailable": True}, "bypassPermissions", {"command": "make"},
     ("deny", "guard")),
    # ... where it runs, the requirement holds and nothing changes
    ("on", {"enabled": True, "fail_if_unavailable": True}, "default", LS, ("allow", "tool")),
    ("on", {"fail_if_unavailable": True}, "default", {"command": "make"}, ("ask", "mode")),
    # without the requirement a missing sandbox leaves the classifier to decide
    ("unavailable", {"enabled": True}, "default", LS, ("allow", "tool")),
    ("unavailable", {"enabled": True}, "default", {"command": "make"}, ("ask", "mode")),
    # a read-only command in a running sandbox runs unasked (auto-allow is off unless enabled)
    ("on", {}, "default", LS, ("allow", "tool")),
    ("on", {}, "default", {"command": "make"}, ("ask", "mode")),
    # the model asks to leave the sandbox: that asks, even for a read-only command ...
    ("on", {}, "default", OUTSIDE, ("ask", "guard")),
    ("on", {"enabled": True}, "acceptEdits", OUTSIDE, ("ask", "guard")),
    # ... but not in bypassPermissions, where nothing asks
    ("on", {}, "bypassPermissions", OUTSIDE, ("allow", "mode")),
    # with allowUnsandboxedCommands off the flag is ignored: it runs inside, unasked
    ("on", {"allow_unsandboxed": False}, "default", OUTSIDE, ("allow", "tool")),
    # excludedCommands run outside the sandbox: a read-only one asks like any command there
    ("on", {"excluded_commands": ("ls",)}, "default", LS, ("ask", "mode")),
    ("on", {"excluded_commands": ("ls",)}, "default", {"command": "pwd"}, ("allow", "tool")),
    # without a sandbox the classifier's stricter checks decide alone
    (NO_SANDBOX, {}, "default", LS, ("allow", "tool")),
    (NO_SANDBOX, {}, "default", OUTSIDE, ("allow", "tool")),
]


@pytest.mark.parametrize("state, settings, mode, data, expect", ROWS)
def test_bash_with_a_sandbox(tmp_path, state, settings, mode, data, expect):
    got = decide(policy_with(tmp_path, state, mode, **settings), BASH, data)
    assert (got.behavior, got.decided_by) == expect, got.reason


@pytest.mark.parametrize("settings, data, sandboxed", [
    ({}, LS, True),
    ({}, OUTSIDE, False),
    ({"allow_unsandboxed": False}, OUTSIDE, True),
    ({"excluded_commands": ("ls",)}, LS, False),
])
def test_the_decision_says_where_the_command_runs(tmp_path, settings, data, sandboxed):
    assert decide(policy_with(tmp_path, "on", "bypassPermissions", **settings), BASH, data).sandboxed is sandboxed


def test_a_required_sandbox_that_cannot_run_says_why(tmp_path):
    got = decide(policy_with(tmp_path, "unavailable", enabled=True, fail_if_unavailable=True), BASH, LS)
    assert "failIfUnavailable" in got.reason and "bubblewrap is not installed" in got.reason
    # other tools do not need the sandbox
    assert decide(policy_with(tmp_path, "unavailable", enabled=True, fail_if_unavailable=True), READ,
                  {"file_path": str(tmp_path / "x")}).behavior == "allow"


def test_a_read_only_command_outside_the_sandbox_offers_its_rule(tmp_path):
    """`ls` asks because it runs outside (excludedCommands): "always allow" saves `Bash(ls -la)`,
    which then lets it run outside unasked."""
    policy = policy_with(tmp_path, "on", excluded_commands=("ls",))
    got = decide(policy, BASH, LS)
    assert got.suggested_rules == ("Bash(ls -la)",)
    policy.add_rules("allow", list(got.suggested_rules), "session")
    assert (decide(policy, BASH, LS).behavior, decide(policy, BASH, LS).decided_by) == ("allow", "rule")


def test_the_rule_offered_for_a_globbing_read_outside_the_sandbox_allows_only_that_command(tmp_path):
    """`ls *.py` runs outside (excludedCommands) and asks; "always allow" must not save the
    wildcard rule `Bash(ls *.py)`, which would let `ls ~/.ssh/*.py` run outside the sandbox unasked."""
    policy = policy_with(tmp_path, "on", excluded_commands=("ls",))
    got = decide(policy, BASH, {"command": "ls *.py"})
    assert got.suggested_rules == ("Bash(ls \\*.py)",)
    policy.add_rules("allow", list(got.suggested_rules), "session")
    assert decide(policy, BASH, {"command": "ls *.py"}).behavior == "allow"
    assert decide(policy, BASH, {"command": "ls ~/.ssh/*.py"}).behavior == "ask"
