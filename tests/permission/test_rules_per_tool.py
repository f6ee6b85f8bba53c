"""Which tools a rule speaks about: an `Edit(...)` rule governs every editing tool (Write too), a
rule of one tool never matches another tool's input, and changes to a settings file's rules that
fail are reported."""

from __future__ import annotations

import pytest

from tests.perm_specs import BASH, DEPLOY, MULTI_EDIT, WRITE
from tui_app.runtime.permissions.decision import PermissionDecision, PermissionQuery
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule


def policy_for(cwd, mode: str = "default", **rules: list[str]) -> RulePolicy:
    return RulePolicy(cwd=str(cwd), home=str(cwd), mode=mode,  # type: ignore[arg-type]
                      rules=[make_rule(t, b, "settings", str(cwd)) for b, ts in rules.items() for t in ts])  # type: ignore[arg-type]


def decide(policy: RulePolicy, spec, data: dict) -> PermissionDecision:
    return policy.decide(PermissionQuery(spec, data, spec.flags_of(data), policy.cwd))


def write(path) -> dict:
    return {"file_path": str(path), "content": "x"}


@pytest.mark.parametrize("mode, rules, target, expect", [
    # an Edit ask rule asks for Write too, even where acceptEdits would let it run
    ("acceptEdits", {"ask": ["Edit(./config/**)"]}, "proj/config/app.json", ("ask", "rule")),
    ("acceptEdits", {"ask": ["Edit(./config/**)"]}, "proj/src/app.py", ("allow", "mode")),
    # an Edit allow rule for a directory outside the project lets Write and MultiEdit write there
    ("default", {"allow": ["Edit(//{root}/shared/**)"]}, "shared/notes.md", ("allow", "rule")),
    ("default", {"allow": ["Edit(//{root}/shared/**)"]}, "elsewhere/notes.md", ("ask", "guard")),
])
@pytest.mark.parametrize("spec", [WRITE, MULTI_EDIT], ids=["Write", "MultiEdit"])
def test_edit_rules_govern_every_editing_tool(tmp_path, spec, mode, rules, target, expect):
    proj = tmp_path / "proj"
    proj.mkdir()
    rules = {b: [t.format(root=str(tmp_path).lstrip("/")) for t in ts] for b, ts in rules.items()}
    path = tmp_path / target
    data = write(path) if spec is WRITE else {"file_path": str(path), "edits": [{"old_string": "a", "new_string": "b"}]}
    got = decide(policy_for(proj, mode, **rules), spec, data)
    assert (got.behavior, got.decided_by) == expect, got.reason


def test_another_tools_rule_never_matches_this_tools_input(tmp_path):
    """`Bash(prod)` is about the command `prod`; a Deploy tool's `prod` target is not it."""
    policy = policy_for(tmp_path, deny=["Bash(prod)", "WebFetch(domain:prod)"])
    got = decide(policy, DEPLOY, {"target": "prod"})
    assert (got.behavior, got.decided_by) == ("ask", "tool"), got.reason  # Deploy always asks
    assert decide(policy_for(tmp_path, deny=["Deploy(prod)"]), DEPLOY, {"target": "prod"}).behavior == "deny"


def test_replacing_a_files_rules_reports_what_it_could_not_do(tmp_path):
    """The rule editor replaces a file's rules: a rule that does not parse is reported and left
    out; a file that cannot be written is reported, and the change holds for this session."""
    local = tmp_path / "settings.local.json"
    local.mkdir()  # not a file: writing it fails
    warnings: list[str] = []
    policy = RulePolicy(cwd=str(tmp_path), destinations={"localSettings": local},
                        on_warning=lambda code, _message: warnings.append(code))
    kept = policy.remove_rules("allow", [], "localSettings", replace_with=["Bash(make", "Bash(make test)"])
    assert kept == ["Bash(make test)"]
    assert warnings == ["rule_invalid", "settings_write_failed"]
    assert decide(policy, BASH, {"command": "make test"}).behavior == "allow"


@pytest.mark.parametrize("spec", [WRITE, MULTI_EDIT], ids=["Write", "MultiEdit"])
def test_an_edit_with_no_path_asks_even_in_accept_edits(tmp_path, spec):
    """A foreign agent's call reaches the policy before any tool checks it: an empty file_path is
    no file inside the project that acceptEdits may let through."""
    data = write("") if spec is WRITE else {"file_path": "", "edits": [{"old_string": "a", "new_string": "b"}]}
    got = decide(policy_for(tmp_path, "acceptEdits"), spec, data)
    assert got.behavior == "ask", got.reason
