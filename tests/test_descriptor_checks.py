"""The policy's second look at what a file tool opened (`RulePolicy.opened_refusal`), rule by rule,
on real files opened the way the tools open them. The race and session tests show the effect end to
end (tests/test_file_tool_races.py); these pin each check, so that removing one fails a test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui_app.runtime.files.opened import Identity, OpenedFile
from tui_app.runtime.permissions import descriptor_checks
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule


@pytest.fixture
def place(tmp_path):
    proj, outside, home = tmp_path / "proj", tmp_path / "outside", tmp_path / "home"
    for d in (proj / "sub", outside, home):
        d.mkdir(parents=True)
    for path in (proj / "a.txt", proj / ".env", proj / "sub" / "b.txt", outside / "o.txt", home / "key.txt",
                 proj / ".claude" / "settings.json"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    return proj, outside, home


def policy(proj: Path, home: Path, mode: str = "default", **rules: list[str]) -> RulePolicy:
    return RulePolicy(cwd=str(proj), home=str(home), mode=mode,  # type: ignore[arg-type]
                      rules=[make_rule(text, behavior, "project settings", str(proj))  # type: ignore[arg-type]
                             for behavior, texts in rules.items() for text in texts])


def who(path: Path) -> Identity:
    with OpenedFile(str(path)) as opened:
        return opened.who


def refusal(p: RulePolicy, kind: str, path: Path, checked=()) -> str | None:
    return p.opened_refusal("Read" if kind == "read" else "Edit", kind, who(path), checked)


def test_a_deny_rule_on_the_real_path_refuses_even_what_the_decision_saw(place):
    proj, _, home = place
    p = policy(proj, home, deny=["Read(.env)"])
    assert "denied by the rule Read(.env)" in refusal(p, "read", proj / ".env", (str(proj / ".env"),))
    assert "denied" in refusal(p, "edit", proj / ".env", (str(proj / ".env"),))
    assert refusal(p, "read", proj / "a.txt", (str(proj / "a.txt"),)) is None


def test_an_edit_deny_rule_refuses_writes_not_reads(place):
    proj, _, home = place
    p = policy(proj, home, "acceptEdits", deny=["Edit(a.txt)"])
    assert "denied by the rule Edit(a.txt)" in refusal(p, "edit", proj / "a.txt")
    assert refusal(p, "read", proj / "a.txt") is None


def test_a_deny_rule_of_the_tool_itself_counts(place):
    proj, _, home = place
    p = policy(proj, home, deny=["Read(sub/**)"])
    assert refusal(p, "read", proj / "sub" / "b.txt") is not None
    assert p.opened_refusal("Grep", "read", who(proj / "a.txt"), ()) is None


def test_a_hard_link_to_a_denied_file_is_refused(place):
    proj, _, home = place
    os.link(proj / ".env", proj / "sub" / "innocent.txt")
    p = policy(proj, home, deny=["Read(.env)"])
    reason = refusal(p, "read", proj / "sub" / "innocent.txt", (str(proj / "sub" / "innocent.txt"),))
    assert reason is not None and "hard links" in reason and "Read deny rule" in reason
    assert "hard links" in refusal(p, "edit", proj / "sub" / "innocent.txt")


def test_a_hard_link_to_a_literally_denied_file_outside_is_refused(place):
    proj, _, home = place
    os.link(home / "key.txt", proj / "innocent.txt")
    p = policy(proj, home, deny=["Read(~/key.txt)"])
    assert "Read deny rule" in refusal(p, "read", proj / "innocent.txt", (str(proj / "innocent.txt"),))


def test_a_hard_link_to_a_file_under_a_denied_directory_is_refused(place):
    proj, outside, home = place
    (outside / "deep" / "er").mkdir(parents=True)
    (outside / "deep" / "er" / "k.pem").write_text("k")
    os.link(outside / "deep" / "er" / "k.pem", proj / "innocent.txt")
    p = policy(proj, home, deny=[f"Read(/{outside}/deep/**)"])
    assert "Read deny rule" in refusal(p, "read", proj / "innocent.txt", (str(proj / "innocent.txt"),))


def test_hard_links_among_ordinary_files_are_fine(place):
    proj, _, home = place
    os.link(proj / "a.txt", proj / "sub" / "also-a.txt")
    assert refusal(policy(proj, home, deny=["Read(.env)"]), "read", proj / "sub" / "also-a.txt", ()) is None
    assert refusal(policy(proj, home), "read", proj / "sub" / "also-a.txt", ()) is None
    assert refusal(policy(proj, home, "acceptEdits"), "edit", proj / "sub" / "also-a.txt", ()) is None


def test_too_many_files_to_check_a_hard_link_against_refuses(place, monkeypatch):
    proj, _, home = place
    for i in range(30):
        (proj / "sub" / f"f{i}.txt").write_text("x")
    os.link(proj / "a.txt", proj / "linked.txt")
    p = policy(proj, home, deny=["Read(.env)"])
    monkeypatch.setattr(descriptor_checks, "HARD_LINK_WALK_LIMIT", 20)
    assert "too many" in refusal(p, "read", proj / "linked.txt", (str(proj / "linked.txt"),))
    monkeypatch.setattr(descriptor_checks, "HARD_LINK_WALK_LIMIT", 100)
    assert refusal(p, "read", proj / "linked.txt", (str(proj / "linked.txt"),)) is None


def test_a_hard_link_to_a_protected_file_is_refused_for_writes_only(place):
    proj, _, home = place
    settings = proj / ".claude" / "settings.json"
    os.link(settings, proj / "innocent.json")
    p = policy(proj, home, "acceptEdits")
    p.protected_paths.add(str(settings))
    assert "protected" in refusal(p, "edit", proj / "innocent.json", (str(proj / "innocent.json"),))
    assert refusal(p, "read", proj / "innocent.json", (str(proj / "innocent.json"),)) is None


def test_before_a_decision_only_deny_rules_count(place):
    proj, outside, home = place
    p = policy(proj, home)
    assert p.opened_refusal("Read", "read", who(outside / "o.txt"), None) is None
    assert p.opened_refusal("Edit", "edit", who(proj / ".claude" / "settings.json"), None) is None


def test_what_the_decision_saw_stands(place):
    proj, outside, home = place
    p = policy(proj, home)
    assert refusal(p, "read", outside / "o.txt", (str(proj / "link"), str(outside / "o.txt"))) is None
    assert refusal(p, "edit", proj / ".claude" / "settings.json", (str(proj / ".claude" / "settings.json"),)) is None


def test_a_read_of_what_the_decision_never_saw_must_pass_on_its_own(place):
    proj, outside, home = place
    p = policy(proj, home)
    assert "outside the working directories" in refusal(p, "read", outside / "o.txt")
    assert refusal(p, "read", proj / "sub" / "b.txt") is None
    allowed = policy(proj, home, allow=[f"Read(/{outside}/**)"])
    assert refusal(allowed, "read", outside / "o.txt") is None
    asks = policy(proj, home, ask=["Read(sub/**)"])
    assert "must be confirmed" in refusal(asks, "read", proj / "sub" / "b.txt")
    assert refusal(policy(proj, home, "bypassPermissions"), "read", outside / "o.txt") is None


def test_a_write_to_what_the_decision_never_saw_must_pass_on_its_own(place):
    proj, outside, home = place
    accept = policy(proj, home, "acceptEdits")
    assert refusal(accept, "edit", proj / "a.txt") is None
    assert "protected" in refusal(accept, "edit", proj / ".claude" / "settings.json")
    assert "outside the working directories" in refusal(accept, "edit", outside / "o.txt")
    assert "never approved" in refusal(policy(proj, home), "edit", proj / "a.txt")
    assert refusal(policy(proj, home, allow=["Edit(a.txt)"]), "edit", proj / "a.txt") is None
    assert refusal(policy(proj, home, allow=[f"Edit(/{outside}/**)"]), "edit", outside / "o.txt") is None
    assert "must be confirmed" in refusal(policy(proj, home, "acceptEdits", ask=["Edit(a.txt)"]), "edit",
                                          proj / "a.txt")
    assert refusal(policy(proj, home, "bypassPermissions"), "edit", outside / "o.txt") is None


def test_a_file_with_no_path_left_is_refused(place):
    proj, _, home = place
    gone = Identity("", 1, 2, 1, 0o100644)
    assert "no path any more" in policy(proj, home).opened_refusal("Read", "read", gone, ())
