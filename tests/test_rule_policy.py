"""The policy beyond single decisions: hidden tools, "always allow" that persists exactly the rule
shown and takes effect at once, rule grammar errors."""

from __future__ import annotations

import json
import os

import pytest

from tests.perm_specs import BASH, EDIT, MCP_READ, WRITE
from tui_app.runtime.permissions.decision import PermissionQuery
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import RuleError, make_rule, parse_rule


def decide(policy: RulePolicy, spec, data):
    return policy.decide(PermissionQuery(spec, data, spec.flags_of(data), policy.cwd))


def test_bare_names_in_deny_hide_tools_and_families(tmp_path):
    policy = RulePolicy(cwd=str(tmp_path), rules=[make_rule(t, "deny") for t in ("Bash", "mcp__github", "Edit")])
    hidden = {n for n in ("Bash", "Read", "Edit", "Write", "MultiEdit", "mcp__github__create_pr", "mcp__files__x")
              if policy.hides_tool(n)}
    assert hidden == {"Bash", "Edit", "Write", "MultiEdit", "mcp__github__create_pr"}


def test_a_deny_with_a_specifier_hides_nothing(tmp_path):
    policy = RulePolicy(cwd=str(tmp_path), rules=[make_rule("Bash(rm *)", "deny"), make_rule("Bash", "allow")])
    assert not policy.hides_tool("Bash")


def test_mcp_wildcard_deny_hides_every_mcp_tool(tmp_path):
    policy = RulePolicy(cwd=str(tmp_path), rules=[make_rule("mcp__*", "deny")])
    assert policy.hides_tool(MCP_READ.name) and not policy.hides_tool("Read")


@pytest.mark.parametrize("command", ["make 'a*b'", "make x\\*y", "make target", "make 'x (y)' && make"])
def test_the_suggested_rule_saved_is_exactly_what_allows_the_call(tmp_path, command):
    local = tmp_path / ".vigil" / "settings.local.json"
    policy = RulePolicy(cwd=str(tmp_path), destinations={"localSettings": local})
    first = decide(policy, BASH, {"command": command})
    assert first.behavior == "ask" and first.suggested_rules
    saved = policy.add_rules("allow", list(first.suggested_rules), "localSettings")
    assert saved == list(first.suggested_rules)
    assert json.loads(local.read_text())["permissions"]["allow"] == list(first.suggested_rules)
    assert decide(policy, BASH, {"command": command}).behavior == "allow"
    # the next session reads the same rule text from the file and decides the same
    again = RulePolicy(cwd=str(tmp_path), rules=[make_rule(r, "allow", str(local), str(tmp_path))
                                                 for r in json.loads(local.read_text())["permissions"]["allow"]])
    assert decide(again, BASH, {"command": command}).behavior == "allow"


def test_saved_wildcard_free_rule_does_not_allow_other_commands(tmp_path):
    policy = RulePolicy(cwd=str(tmp_path))
    policy.add_rules("allow", list(decide(policy, BASH, {"command": "make 'a*b'"}).suggested_rules), "session")
    assert decide(policy, BASH, {"command": "make 'aXXb'"}).behavior == "ask"


def test_edit_suggestion_round_trips_relative_to_the_project(tmp_path):
    (tmp_path / "src").mkdir()
    policy = RulePolicy(cwd=str(tmp_path))
    data = {"file_path": str(tmp_path / "src" / "app.py")}
    first = decide(policy, EDIT, data)
    assert first.suggested_rules == ("Edit(/src/app.py)",)
    policy.add_rules("allow", list(first.suggested_rules), "session")
    assert decide(policy, EDIT, data).behavior == "allow"
    assert decide(policy, EDIT, {"file_path": str(tmp_path / "src" / "other.py")}).behavior == "ask"


@pytest.mark.parametrize("spec, data", [(EDIT, {"file_path": ""}), (WRITE, {"file_path": "", "content": "x"}),
                                        (EDIT, {"old_string": "a"}), (BASH, {"command": ["rm", "-rf", "/"]})])
def test_a_call_without_a_target_offers_no_rule_to_always_allow(tmp_path, spec, data):
    """`Edit()` or `Bash` would allow every edit or every command: such a call asks, and the
    approval offers no "always allow" (a hostile agent's empty path must not buy a blanket rule)."""
    got = decide(RulePolicy(cwd=str(tmp_path)), spec, data)
    assert got.behavior == "ask" and got.suggested_rules == ()


def test_adding_rules_keeps_the_rest_of_the_file(tmp_path):
    local = tmp_path / "settings.local.json"
    local.write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"], "deny": ["Read(./.env)"]},
                                 "hooks": {"Stop": []}, "mine": 1}))
    policy = RulePolicy(cwd=str(tmp_path), destinations={"localSettings": local})
    policy.add_rules("allow", ["Bash(make)", "Bash(ls)"], "localSettings")
    data = json.loads(local.read_text())
    assert data == {"permissions": {"allow": ["Bash(ls)", "Bash(make)"], "deny": ["Read(./.env)"]},
                    "hooks": {"Stop": []}, "mine": 1}


def test_a_broken_settings_file_is_never_overwritten(tmp_path):
    local = tmp_path / "settings.local.json"
    local.write_text('{"permissions": {"deny": ["Bash(curl *)"],}')
    warnings = []
    policy = RulePolicy(cwd=str(tmp_path), destinations={"localSettings": local},
                        on_warning=lambda code, message: warnings.append((code, message)))
    assert policy.add_rules("allow", ["Bash(make)"], "localSettings") == ["Bash(make)"]
    assert local.read_text() == '{"permissions": {"deny": ["Bash(curl *)"],}'
    assert warnings and warnings[0][0] == "settings_write_failed" and "this session only" in warnings[0][1]
    assert decide(policy, BASH, {"command": "make"}).behavior == "allow"


def test_an_invalid_rule_is_reported_and_not_added(tmp_path):
    warnings = []
    policy = RulePolicy(cwd=str(tmp_path), on_warning=lambda code, message: warnings.append(code))
    assert policy.add_rules("allow", ["Bash(make"], "session") == []
    assert warnings == ["rule_invalid"]


@pytest.mark.parametrize("text, parsed", [
    ("Bash", ("Bash", None)), ("Bash(*)", ("Bash", None)), ("Bash()", ("Bash", None)),
    ("Bash(git diff *)", ("Bash", "git diff *")), ("Bash(echo (x))", ("Bash", "echo (x)")),
    ("mcp__srv__tool", ("mcp__srv__tool", None)), ("WebFetch(domain:x.com)", ("WebFetch", "domain:x.com")),
])
def test_rule_grammar(text, parsed):
    assert parse_rule(text) == parsed


@pytest.mark.parametrize("text", ["", "Bash(ls", "(ls)", "Bash ls)", "WebFetch(https://x.com)", "Bad name(x)"])
def test_malformed_rules_are_errors(text):
    with pytest.raises(RuleError):
        parse_rule(text)


def test_working_directories_can_be_added_and_removed_but_the_cwd_stays(tmp_path):
    other = tmp_path / "lib"
    other.mkdir()
    policy = RulePolicy(cwd=str(tmp_path / "proj"))
    policy.add_directories([str(other), "~/notes"])
    assert str(other) in policy.workdirs and os.path.expanduser("~/notes") in policy.workdirs
    policy.remove_directories([str(other), str(tmp_path / "proj")])
    assert str(other) not in policy.workdirs and str(tmp_path / "proj") in policy.workdirs
