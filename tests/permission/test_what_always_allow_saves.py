"""The rule "always allow" saves matches the approved call and no other.

The approval dialog offers the rule it will save; the model chose the call's text, so every
character that means "anything" in the rule grammar (`*` in a command or path, `*?[` in another
tool's pattern) is escaped, a path is written the one way the grammar reads as absolute (`//…`),
and a call with nothing to pin the rule to gets no rule at all: `Edit()` or `Bash` would allow
every edit or command.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.perm_specs import BASH, DEPLOY, EDIT, GREP, MCP_WRITE, READ, WEBFETCH, WRITE
from tui_app.runtime.contract import PermissionSpec
from tui_app.runtime.permissions.decision import ModePolicy, PermissionQuery, suggested_rule
from tui_app.runtime.permissions.policy import RulePolicy

#: a tool outside the families, whose rules match its `target` with fnmatch wildcards
RELEASE = replace(DEPLOY, name="Release", permission=PermissionSpec(kind="other", rule_key="target"))
#: one whose rules name the tool alone
PUBLISH = replace(DEPLOY, name="Publish", permission=PermissionSpec(kind="other"))


def decide(policy, spec, data):
    cwd = getattr(policy, "cwd", "/proj")  # a ModePolicy has none
    return policy.decide(PermissionQuery(spec, data, spec.flags_of(data), cwd))


def offered(spec, data) -> tuple[str, ...]:
    """What the dialog of a session without settings offers to always allow."""
    got = decide(ModePolicy(), spec, data)
    assert got.behavior == "ask", got
    return got.suggested_rules


@pytest.mark.parametrize("spec, data, rule", [
    (BASH, {"command": "  make test \n"}, "Bash(make test)"),  # the command, not its surrounding blanks
    (BASH, {"command": "rm -rf build/*"}, "Bash(rm -rf build/\\*)"),
    (EDIT, {"file_path": "/proj/src/a*.py"}, "Edit(//proj/src/a\\*.py)"),
    (WRITE, {"file_path": "/etc/[x]", "content": ""}, "Edit(//etc/\\[x\\])"),  # Write saves an Edit rule
    (WEBFETCH, {"url": "https://Example.COM/a?b=*"}, "WebFetch(domain:example.com)"),
    (RELEASE, {"target": "prod-*?[1]"}, "Release(prod-[*][?][[]1])"),
    (MCP_WRITE, {"path": "*"}, "mcp__files__write_file"),  # an MCP tool is allowed whole
    (PUBLISH, {"target": "prod"}, "Publish"),  # so is a tool whose rules have no pattern
])
def test_the_rule_offered_names_exactly_the_call(spec, data, rule):
    assert offered(spec, data) == (rule,)


@pytest.mark.parametrize("spec, data", [
    (EDIT, {"file_path": "src/a.py"}),  # relative to what? `Edit(/src/a.py)` would name another file
    (EDIT, {"file_path": "   "}),
    (BASH, {"command": None}),
    (WEBFETCH, {"url": "not a url"}),
    (RELEASE, {"target": ""}),
])
def test_a_call_no_rule_can_pin_down_is_offered_none(spec, data):
    assert offered(spec, data) == ()


def test_a_read_the_agent_asks_about_offers_the_absolute_read_rule():
    """An external agent asks before a read Vigil would allow: the rule offered is the exact read."""
    assert suggested_rule(GREP, {"pattern": "x", "path": "/srv/logs"}) == "Grep(//srv/logs)"
    assert suggested_rule(READ, {"file_path": "/srv/a*"}) == "Read(//srv/a\\*)"


@pytest.mark.parametrize("spec, data, neighbour", [
    (RELEASE, {"target": "prod-*"}, {"target": "prod-eu"}),
    (RELEASE, {"target": "v1.?"}, {"target": "v1.9"}),
    (RELEASE, {"target": "[ab]"}, {"target": "a"}),
    (EDIT, {"file_path": "/proj/*.py"}, {"file_path": "/proj/setup.py"}),
])
def test_the_saved_rule_allows_the_call_and_not_its_neighbour(tmp_path, spec, data, neighbour):
    policy = RulePolicy(cwd=str(tmp_path))
    (rule,) = offered(spec, data)
    policy.add_rules("allow", [rule], "session")
    assert decide(policy, spec, data).behavior == "allow"
    assert decide(policy, spec, neighbour).behavior == "ask"
