"""Glob's roots come from the pattern as well as from `path` (issue 27, class 5): `/abs/*`, `~/x/*`,
`../x/*`, a literal start through a link, are searches of that directory, and the permission check
sees it: outside the working directories they ask; files Read deny rules cover are not listed;
`..` after a wildcard is refused. Real tool, real policy, real files."""

from __future__ import annotations

import pytest

from tests.fakes import make_env
from tui_app.runtime.events import ToolCallError, ToolCallResult
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.tools.glob import GLOB


@pytest.fixture
def place(tmp_path, monkeypatch):
    proj, outside, home = tmp_path / "proj", tmp_path / "outside", tmp_path / "home"
    for d in (proj / "sub", outside / "secret", home / "x"):
        d.mkdir(parents=True)
    (proj / "sub" / "mine.txt").write_text("x")
    (outside / "theirs-canary.txt").write_text("x")
    (outside / "secret" / "key-canary.txt").write_text("x")
    (home / "x" / "home-canary.txt").write_text("x")
    (proj / "link").symlink_to(outside)
    monkeypatch.setenv("HOME", str(home))
    return proj, outside, home


async def glob(proj, data: dict, mode: str = "default", deny: tuple[str, ...] = ()):
    policy = RulePolicy(cwd=str(proj), home=str(proj.parent / "home"), mode=mode,  # type: ignore[arg-type]
                        rules=[make_rule(r, "deny") for r in deny])
    env, rec = make_env(GLOB, policy=policy, cwd=str(proj))
    if (read_denial := policy.read_denial) is not None:
        env.services["read_denial"] = read_denial
    return await run_call(ToolCall("g1", "Glob", data), env), rec


@pytest.mark.parametrize("pattern", ["{outside}/*", "{outside}/**/*.txt", "../outside/*", "~/x/*", "link/*",
                                     "sub/../../outside/*", "link/../outside/*"])
async def test_a_pattern_that_leads_out_asks(place, pattern):
    proj, outside, _ = place
    out, rec = await glob(proj, {"pattern": pattern.format(outside=outside)})
    assert isinstance(out, ToolCallError), out.model_content
    assert "canary" not in out.model_content
    asked = rec.of("PermissionRequested")
    assert asked and "outside the working directories" in asked[0].reason


@pytest.mark.parametrize("pattern", ["**/../../outside/*", "*/../../*", "sub/**/../../../*"])
async def test_dotdot_after_a_wildcard_is_refused(place, pattern):
    proj, _, _ = place
    out, _ = await glob(proj, {"pattern": pattern}, mode="bypassPermissions")
    assert isinstance(out, ToolCallError) and "climbs with .." in out.model_content


async def test_a_pattern_inside_runs_unasked_and_unchanged(place):
    proj, _, _ = place
    out, rec = await glob(proj, {"pattern": "sub/*.txt"})
    assert isinstance(out, ToolCallResult) and out.model_content == str(proj / "sub" / "mine.txt")
    assert rec.of("ToolCallStarted")[0].input == {"pattern": "sub/*.txt"}


async def test_the_root_moves_into_path_where_hooks_and_rules_see_it(place):
    proj, outside, _ = place
    out, rec = await glob(proj, {"pattern": "../outside/*.txt"}, mode="bypassPermissions")
    assert isinstance(out, ToolCallResult) and out.model_content == str(outside / "theirs-canary.txt")
    assert rec.of("ToolCallStarted")[0].input == {"pattern": "*.txt", "path": str(outside)}


async def test_files_read_deny_rules_cover_are_not_listed_from_a_pattern_root(place):
    proj, outside, _ = place
    out, _ = await glob(proj, {"pattern": f"{outside}/**/*.txt"}, mode="bypassPermissions",
                        deny=(f"Read(/{outside}/secret/**)",))
    assert isinstance(out, ToolCallResult)
    assert "theirs-canary.txt" in out.model_content and "key-canary" not in out.model_content
    assert "(1 matching file left out: Read deny rules)" in out.model_content
