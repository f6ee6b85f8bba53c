"""The policy of a session built without settings (`ModePolicy`): bare tool names as rules, what a
bare deny hides, and "always allow" taking effect at once."""

from __future__ import annotations

from tests.perm_specs import BASH, EDIT, READ
from tui_app.runtime.permissions.decision import ModePolicy, PermissionDecision, PermissionQuery


def decide(policy: ModePolicy, spec, data: dict) -> PermissionDecision:
    return policy.decide(PermissionQuery(spec, data, spec.flags_of(data), "/tmp"))


def test_a_denied_tool_is_hidden_and_others_are_not():
    policy = ModePolicy(deny={"Bash"})
    assert policy.hides_tool("Bash")
    assert not policy.hides_tool("Read") and not policy.hides_tool("Edit")


def test_always_allow_takes_effect_at_once_for_exactly_that_call():
    policy = ModePolicy()
    make = {"command": "make"}
    asked = decide(policy, BASH, make)
    assert asked.behavior == "ask" and asked.suggested_rules == ("Bash(make)",)
    assert policy.add_rules("allow", list(asked.suggested_rules)) == ["Bash(make)"]
    assert (decide(policy, BASH, make).behavior, decide(policy, BASH, make).rule) == ("allow", "Bash(make)")
    assert decide(policy, BASH, {"command": "make install"}).behavior == "ask"


def test_plan_mode_denies_what_needs_approval_and_lets_reads_run():
    policy = ModePolicy(mode="plan")
    assert decide(policy, READ, {"file_path": "/tmp/x"}).behavior == "allow"
    assert decide(policy, BASH, {"command": "ls"}).behavior == "allow"  # read-only: no approval needed
    for spec, data in ((BASH, {"command": "make"}), (EDIT, {"file_path": "/tmp/x", "old_string": "a",
                                                            "new_string": "b"})):
        assert decide(policy, spec, data).behavior == "deny"
