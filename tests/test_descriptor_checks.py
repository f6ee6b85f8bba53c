"""The policy's second look at what a file tool opened (`RulePolicy.opened_refusal`), rule by rule,
on real files opened the way the tools open them. The race and session tests show the effect end to
end (tests/test_file_tool_races.py); these pin each check, so that removing one fails a test."""

from __future__ import annotations

import json
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


def test_a_search_tool_is_held_to_read_rules(place):
    proj, outside, home = place
    asks = policy(proj, home, ask=["Read(sub/**)"])
    assert "must be confirmed" in asks.opened_refusal("Glob", "read", who(proj / "sub" / "b.txt"), ())
    allowed = policy(proj, home, allow=[f"Read(/{outside}/**)"])
    assert allowed.opened_refusal("Grep", "read", who(outside / "o.txt"), ()) is None


def test_only_a_regular_file_with_several_names_is_looked_up(place, monkeypatch):
    proj, _, home = place
    monkeypatch.setattr(descriptor_checks, "HARD_LINK_WALK_LIMIT", 1)  # any look-up would fail
    p = policy(proj, home, deny=["Read(.env)"])
    assert refusal(p, "read", proj / "a.txt", (str(proj / "a.txt"),)) is None
    directory = who(proj / "sub")
    assert directory.links > 1 and p.opened_refusal("Read", "read", directory, (str(proj / "sub"),)) is None


def linked(proj: Path, target: Path) -> Path:
    os.link(target, proj / "innocent.txt")
    return proj / "innocent.txt"


def test_a_rule_anchored_at_the_root_walks_from_the_root(place, monkeypatch):
    proj, _, home = place
    monkeypatch.setattr(descriptor_checks, "HARD_LINK_WALK_LIMIT", 50)
    path = linked(proj, proj / "a.txt")
    p = policy(proj, home, deny=["Read(//**/never-there)"])
    assert "too many" in refusal(p, "read", path, (str(path),))


def test_the_walk_limit_is_a_count_of_entries(place, monkeypatch):
    proj, _, home = place
    path = linked(proj, proj / "a.txt")
    entries = sum(len(dirs) + len(files) for _, dirs, files in os.walk(proj))
    p = policy(proj, home, deny=["Read(.env)"])
    monkeypatch.setattr(descriptor_checks, "HARD_LINK_WALK_LIMIT", entries)
    assert refusal(p, "read", path, (str(path),)) is None
    monkeypatch.setattr(descriptor_checks, "HARD_LINK_WALK_LIMIT", entries - 1)
    assert "too many" in refusal(p, "read", path, (str(path),))


def test_a_directory_below_another_is_walked_once(place, monkeypatch):
    proj, _, home = place
    path = linked(proj, proj / "a.txt")
    entries = sum(len(dirs) + len(files) for _, dirs, files in os.walk(proj))
    monkeypatch.setattr(descriptor_checks, "HARD_LINK_WALK_LIMIT", entries)
    p = policy(proj, home, deny=["Read(.env)", "Read(./sub/**)"])
    assert refusal(p, "read", path, (str(path),)) is None


def test_links_to_directories_are_not_walked(place, monkeypatch):
    proj, _, home = place
    (proj / "sub" / "loop").symlink_to(proj)
    path = linked(proj, proj / "a.txt")
    monkeypatch.setattr(descriptor_checks, "HARD_LINK_WALK_LIMIT", 100)
    assert refusal(policy(proj, home, deny=["Read(.env)"]), "read", path, (str(path),)) is None


@pytest.mark.parametrize("sibling", ["outside", "proj2"])
async def test_every_rule_root_is_walked_even_a_sibling_with_the_same_start(place, sibling):
    proj, outside, home = place
    other = outside if sibling == "outside" else proj.parent / "proj2"
    (other / "deep").mkdir(parents=True, exist_ok=True)
    (other / "deep" / "k.pem").write_text("k")
    path = linked(proj, other / "deep" / "k.pem")
    p = policy(proj, home, deny=["Read(.env)", f"Read(/{other}/deep/**)"])
    assert "Read deny rule" in refusal(p, "read", path, (str(path),))


def test_a_file_any_one_rule_covers_counts(place):
    proj, _, home = place
    path = linked(proj, proj / ".env")
    p = policy(proj, home, deny=["Read(*.pem)", "Read(.env)"])
    assert "Read deny rule" in refusal(p, "read", path, (str(path),))


def test_a_denied_name_that_is_a_link_covers_the_file_it_leads_to(place):
    proj, outside, home = place
    (outside / "real-secret").write_text("s")
    (proj / ".env").unlink()
    (proj / ".env").symlink_to(outside / "real-secret")
    (proj / "sub" / ".env").symlink_to(outside / "missing")  # a dangling one is no file at all
    path = linked(proj, outside / "real-secret")
    assert "Read deny rule" in refusal(policy(proj, home, deny=["Read(.env)"]), "read", path, (str(path),))


def test_a_protected_path_that_does_not_exist_is_no_inode(place):
    proj, _, home = place
    path = linked(proj, proj / "a.txt")
    p = policy(proj, home, "acceptEdits")
    p.protected_paths.add(str(proj / "missing.json"))
    assert refusal(p, "edit", path, (str(path),)) is None


# ---- through the pipeline: a link flipped right after the decision -----------------------------------

class FlipAfterDeciding(RulePolicy):
    """Decides, then swaps the link: exactly the moment a background command would need."""

    flip: tuple[Path, Path] | None = None

    def decide(self, query):
        decision = super().decide(query)
        if self.flip is not None:
            name, target = self.flip
            name.unlink()
            name.symlink_to(target)
        return decision


def test_the_decision_carries_the_spellings_it_was_made_on(place):
    from tests.perm_specs import READ
    from tui_app.runtime.permissions.decision import PermissionQuery

    proj, outside, home = place
    (proj / "link").symlink_to(outside / "o.txt")
    p = policy(proj, home)
    data = {"file_path": str(proj / "link")}
    decision = p.decide(PermissionQuery(READ, data, READ.flags_of(data), str(proj)))
    assert decision.paths == (str(proj / "link"), str(outside / "o.txt"))


@pytest.mark.parametrize("tool", ["Read", "Write"])
async def test_a_link_flipped_after_the_decision_is_refused_by_the_tool(place, tool):
    from tests.file_tools import file_env
    from tui_app.runtime.events import ToolCallError
    from tui_app.tools.write import WRITE

    proj, outside, home = place
    (outside / "o.txt").write_text("CANARY\n")
    flip = proj / "flip.txt"
    flip.symlink_to(proj / "a.txt")
    p = FlipAfterDeciding(cwd=str(proj), home=str(home), mode="acceptEdits")
    fe = file_env(proj, WRITE, policy=p)
    fe.env.services["path_guard"] = p.opened_refusal
    p.flip = (flip, outside / "o.txt")
    data = {"file_path": str(flip)} if tool == "Read" else {"file_path": str(flip), "content": "mine\n"}
    if tool == "Write":
        (proj / "a.txt").unlink()  # a new file: no read needed first
        flip.unlink()
        flip.symlink_to(proj / "a.txt")
    out = await fe.call(tool, data)
    assert isinstance(out, ToolCallError) and "Refused:" in out.model_content, out.model_content
    assert "CANARY" not in out.model_content and (outside / "o.txt").read_text() == "CANARY\n"


async def test_a_hooks_rewrite_is_checked_on_the_spellings_of_the_rewrite(place):
    """A PermissionRequest hook that rewrites the path: the tool compares what it opens with the
    new decision's spellings, not the first one's."""
    from tests.hook_helpers import handler, script
    from tests.perm_specs import READ
    from tests.permission.approving import setup
    from tui_app.runtime.approval_stage import approve
    from tui_app.runtime.call import CallState, make_context
    from tui_app.runtime.permissions.decision import PermissionDecision
    from tui_app.runtime.pipeline import ToolCall

    proj, outside, _ = place
    (outside / "p.txt").write_text("x\n")
    rewrite = {"file_path": str(outside / "p.txt")}
    output = json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                "decision": {"behavior": "allow", "updatedInput": rewrite}}})
    hooks = {"PermissionRequest": [{"hooks": [handler(script("respond.py", output))]}]}
    env, _, _ = setup(proj, READ, interactive=False, hooks_config=hooks,
                      rules={"allow": [f"Read(/{outside}/p.txt)"]})
    data = {"file_path": str(outside / "o.txt")}
    state = CallState(ToolCall("t1", "Read", dict(data)), env)
    state.spec, state.input, state.flags = READ, dict(data), READ.flags_of(data)
    state.ctx = make_context(state)
    state.checked_paths = (str(outside / "o.txt"),)
    await approve(state, PermissionDecision("ask", "guard", "outside", paths=state.checked_paths))
    assert state.input == rewrite and state.checked_paths == (str(outside / "p.txt"),)


def test_a_literal_denied_file_is_looked_at_without_a_walk(place, monkeypatch):
    proj, _, home = place
    for i in range(20):
        (home / f"other{i}").write_text("x")
    monkeypatch.setattr(descriptor_checks, "HARD_LINK_WALK_LIMIT", 5)
    path = linked(proj, home / "key.txt")
    reason = refusal(policy(proj, home, deny=["Read(~/key.txt)"]), "read", path, (str(path),))
    assert "Read deny rule" in reason and "too many" not in reason


def test_a_literal_denied_directory_is_walked(place):
    proj, outside, home = place
    (outside / "vault").mkdir()
    (outside / "vault" / "k.pem").write_text("k")
    path = linked(proj, outside / "vault" / "k.pem")
    reason = refusal(policy(proj, home, deny=[f"Read(/{outside}/vault)"]), "read", path, (str(path),))
    assert "Read deny rule" in reason


async def test_an_approval_diff_is_not_made_of_a_file_a_link_was_flipped_to(place):
    """Default mode asks about a Write; the link flips right after the decision: the dialog's diff
    does not show the outside file's text, and the approved write does not land there."""
    from tests.file_tools import file_env
    from tests.permission.approving import allow, answering
    from tui_app.runtime.permissions.broker import ApprovalBroker
    from tui_app.tools.write import WRITE

    proj, outside, home = place
    (outside / "o.txt").write_text("CANARY\n")
    flip = proj / "flip.txt"
    flip.symlink_to(proj / "a.txt")
    p = FlipAfterDeciding(cwd=str(proj), home=str(home))
    fe = file_env(proj, WRITE, policy=p)
    fe.env.broker = broker = ApprovalBroker(interactive=True)
    answering(fe.env, fe.rec, broker, allow)
    fe.env.services["path_guard"] = p.opened_refusal
    assert "x" in (await fe.call("Read", {"file_path": str(flip)})).model_content
    p.flip = (flip, outside / "o.txt")
    out = await fe.call("Write", {"file_path": str(flip), "content": "mine\n"})
    [asked] = fe.rec.of("PermissionRequested")
    assert "CANARY" not in asked.model_dump_json()
    assert any("Refused:" in w.message for w in fe.rec.of("Warning"))
    assert "Refused:" in out.model_content and (outside / "o.txt").read_text() == "CANARY\n"
