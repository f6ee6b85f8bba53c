"""A mask the sandbox cannot complete fails closed: when a wildcard Read deny rule covers a tree
too large to search, the sandbox cannot hide every file it names, so a command that would have
run unasked in the sandbox asks, and the dialog says why (dontAsk: it is denied)."""

from __future__ import annotations

import pytest

from tests.perm_specs import BASH
from tests.sec_kit import attack_settings, attempt, canary_root, isolate, make_canary, open_session
from tui_app.runtime.permissions import sandbox_policy
from tui_app.runtime.permissions.decision import PermissionQuery
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule
from tui_app.runtime.permissions.sandbox_policy import SandboxPolicy, SandboxSettings
from tui_app.runtime.permissions.working_dirs import WorkingDirs

__all__ = ["canary_root"]
LIMIT = 40


@pytest.fixture
def small_walk(monkeypatch):
    """The walk limit made small, so a tree past it takes 60 files rather than 20,000."""
    monkeypatch.setattr(sandbox_policy, "MAX_WALK", LIMIT)


def tree(root, files: int) -> None:
    for i in range(files):
        (root / f"d{i % 7}").mkdir(parents=True, exist_ok=True)
        (root / f"d{i % 7}" / f"f{i}.txt").write_text("x\n")


def decide(tmp_path, command: str, mode: str = "default", **settings):
    policy = RulePolicy(
        cwd=str(tmp_path),
        home=str(tmp_path),
        mode=mode,  # type: ignore[arg-type]
        rules=[make_rule("Read(**/.env)", "deny", "settings", str(tmp_path))],
    )
    policy.sandbox = SandboxPolicy(
        SandboxSettings(**settings),
        dirs=policy.dirs,
        home=str(tmp_path),
        read_denials=policy.read_patterns,
        available=True,
    )
    data = {"command": command}
    return policy.decide(PermissionQuery(BASH, data, BASH.flags_of(data), policy.cwd))


@pytest.mark.parametrize(
    "settings, command",
    [
        ({}, "ls"),  # read-only: would run unasked in the sandbox
        ({"enabled": True}, "make"),  # autoAllowBashIfSandboxed: would run unasked
    ],
)
def test_an_incomplete_mask_asks_and_says_why(tmp_path, small_walk, settings, command):
    tree(tmp_path, LIMIT + 20)
    got = decide(tmp_path, command, **settings)
    assert (got.behavior, got.decided_by) == ("ask", "guard"), got.reason
    assert "Read(**/.env)" in got.reason and "cannot hide" in got.reason and str(LIMIT) in got.reason


def test_the_layout_says_whether_its_masks_are_complete(tmp_path, small_walk):
    policy = RulePolicy(
        cwd=str(tmp_path), home=str(tmp_path), rules=[make_rule("Read(**/.env)", "deny", "settings", str(tmp_path))]
    )
    sandbox = SandboxPolicy(SandboxSettings(), dirs=policy.dirs, home=str(tmp_path), read_denials=policy.read_patterns)
    tree(tmp_path, LIMIT - 10)
    assert sandbox.layout().complete is True
    tree(tmp_path, LIMIT + 20)
    assert sandbox.layout().complete is False


def test_in_dont_ask_mode_an_incomplete_mask_denies(tmp_path, small_walk):
    tree(tmp_path, LIMIT + 20)
    got = decide(tmp_path, "ls", mode="dontAsk", enabled=True)
    assert got.behavior == "deny" and "cannot hide" in got.reason


@pytest.mark.parametrize("settings, command", [({}, "ls"), ({"enabled": True}, "make")])
def test_a_mask_that_is_complete_changes_nothing(tmp_path, small_walk, settings, command):
    tree(tmp_path, LIMIT - 10)
    got = decide(tmp_path, command, **settings)
    assert (got.behavior, got.decided_by) == ("allow", "tool"), got.reason
    sandbox = SandboxPolicy(SandboxSettings(), dirs=WorkingDirs(str(tmp_path)), home=str(tmp_path))
    assert sandbox.mask_gap() == ""


def test_an_incomplete_mask_does_not_stop_bypass_permissions(tmp_path, small_walk):
    tree(tmp_path, LIMIT + 20)
    assert decide(tmp_path, "ls", mode="bypassPermissions").behavior == "allow"


async def test_a_deep_secret_past_the_walk_limit_never_reaches_the_model(canary_root, monkeypatch, small_walk):
    """The issue's attack: a `.env` deep in a large tree, an auto-allowed `grep -r` in the sandbox."""
    settings = attack_settings(enabled=True)
    settings["permissions"]["deny"].append("Read(**/.env)")
    canary = make_canary(canary_root, settings)
    isolate(monkeypatch, canary)
    tree(canary.proj / "big", LIMIT + 20)
    (canary.proj / "big" / "d6" / "deep").mkdir()
    (canary.proj / "big" / "d6" / "deep" / ".env").write_text(canary.secret + "\n")
    session = await open_session(canary)
    try:
        for command in ("grep -r CANARY .", "cat big/d6/deep/.env", "bash -c 'grep -r CANARY big'"):
            found = await attempt(session, canary, "Bash", {"command": command})
            assert not found.ran and not found.leaked, found.describe()
    finally:
        await session.close()
