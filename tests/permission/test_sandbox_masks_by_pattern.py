"""What a sandboxed command cannot read: the files a Read deny rule with a wildcard names, found
from the directory the pattern starts in (a pattern may start mid-name: `Read(./sec*)`)."""

from __future__ import annotations

import asyncio
import os

import pytest

from tests.needs import need_program
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule
from tui_app.runtime.permissions.sandbox_policy import SandboxPolicy, SandboxSettings


async def run_sandboxed(policy: SandboxPolicy, cwd: str, command: str) -> str:
    from tui_app.tools.bash.sandbox import prepare

    launch = await prepare(policy, cwd, dict(os.environ), command)
    try:
        process = await asyncio.create_subprocess_exec(
            *launch.wrap(["bash", "-c", command]), env=launch.env, cwd=cwd,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await process.communicate()
        return out.decode()
    finally:
        await launch.close()


@pytest.mark.parametrize("rule, hidden, seen", [
    ("Read(./sec*)", ["secret.txt", "second/key"], ["notes.txt", "docs/secret.txt"]),
    ("Read(./docs/*.key)", ["docs/a.key"], ["notes.txt", "docs/secret.txt"]),
    ("Read(*.key)", ["docs/a.key", "second/b.key"], ["notes.txt"]),
])
async def test_files_a_wildcard_deny_names_are_masked(tmp_path, rule, hidden, seen):
    need_program("bwrap")
    proj = tmp_path / "proj"
    for name in ("secret.txt", "second/key", "second/b.key", "notes.txt", "docs/secret.txt", "docs/a.key"):
        (proj / name).parent.mkdir(parents=True, exist_ok=True)
        (proj / name).write_text(f"CONTENT-OF-{name}\n")
    policy = RulePolicy(cwd=str(proj), home=str(tmp_path), rules=[make_rule(rule, "deny", "settings", str(proj))])
    sandbox = SandboxPolicy(SandboxSettings(enabled=True), dirs=policy.dirs, home=str(tmp_path),
                            read_denials=policy.read_patterns)
    out = await run_sandboxed(sandbox, str(proj), "cat " + " ".join(hidden + seen) + " 2>&1; true")
    for name in seen:
        assert f"CONTENT-OF-{name}" in out, out
    for name in hidden:
        assert f"CONTENT-OF-{name}" not in out, out
