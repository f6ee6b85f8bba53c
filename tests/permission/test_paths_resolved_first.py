"""`link/../file` is checked where the kernel opens it: beside the link's *target*. A lexical
normalisation would check `file` beside the link (inside the project) while the kernel reads or
writes outside the working directories (issue 27, class 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.perm_specs import READ, WRITE
from tui_app.runtime.permissions.decision import PermissionQuery
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule
from tui_app.tools.common import resolve_path


@pytest.fixture
def place(tmp_path) -> tuple[Path, Path]:
    proj, outside = tmp_path / "proj", tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "canary.txt").write_text("CANARY\n")
    proj.mkdir()
    (proj / "canary.txt").write_text("harmless\n")
    (proj / "link").symlink_to(outside / "deep")
    return proj, outside


def decide(policy: RulePolicy, spec, data: dict) -> tuple[str, str]:
    decision = policy.decide(PermissionQuery(spec, data, spec.flags_of(data), policy.cwd))
    return decision.behavior, decision.reason


@pytest.mark.parametrize("spelling", ["link/../canary.txt", "./link/../canary.txt", "link/./../canary.txt",
                                      "link//../canary.txt"])
def test_a_read_through_link_dotdot_is_a_read_outside(place, spelling):
    proj, outside = place
    policy = RulePolicy(cwd=str(proj), home=str(proj / "home"))
    path = resolve_path(spelling, str(proj))
    assert path == str(outside / "canary.txt")  # what the tool opens: the kernel's file
    behavior, reason = decide(policy, READ, {"file_path": str(proj) + "/" + spelling})
    assert behavior == "ask" and "outside the working directories" in reason


def test_a_deny_rule_on_the_target_side_holds_for_link_dotdot(place):
    proj, outside = place
    policy = RulePolicy(cwd=str(proj), home=str(proj / "home"), mode="bypassPermissions",
                        rules=[make_rule(f"Read(/{outside}/canary.txt)", "deny")])
    assert decide(policy, READ, {"file_path": f"{proj}/link/../canary.txt"})[0] == "deny"
    assert decide(policy, READ, {"file_path": f"{proj}/canary.txt"})[0] == "allow"


def test_accept_edits_does_not_write_outside_through_link_dotdot(place):
    proj, _ = place
    policy = RulePolicy(cwd=str(proj), home=str(proj / "home"), mode="acceptEdits")
    data = {"file_path": f"{proj}/link/../new.txt", "content": "x"}
    assert decide(policy, WRITE, data)[0] == "ask"
    assert decide(policy, WRITE, {"file_path": f"{proj}/new.txt", "content": "x"})[0] == "allow"


def test_a_dotdot_without_links_stays_lexical_and_inside(place):
    proj, _ = place
    (proj / "sub").mkdir()
    assert resolve_path("sub/../canary.txt", str(proj)) == str(proj / "canary.txt")
    assert resolve_path("missing/../canary.txt", str(proj)) == str(proj / "canary.txt")
    policy = RulePolicy(cwd=str(proj), home=str(proj / "home"))
    assert decide(policy, READ, {"file_path": f"{proj}/sub/../canary.txt"})[0] == "allow"
