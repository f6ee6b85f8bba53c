"""Escapes through protected trees, for real in bubblewrap: with `sandbox.enabled: true` every
command runs unasked, through a program the rules cannot see into (python), and tries to plant
what the user's next git, or Vigil's next hook, would run on the host — a `.git/commondir`, a
renamed `.git`, a swapped hook folder, a replaced parent of a hook script, a rewritten worktree
pointer. Afterwards the host's files are looked at: nothing changed."""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest

from tests.needs import need_program
from tests.sec_kit import attack_settings, attempt, canary_root, isolate, make_canary, open_session
from tui_app.assemble import SessionOptions, build_session

__all__ = ["canary_root"]


@pytest.fixture(autouse=True)
def _needs_bubblewrap():
    need_program("bwrap")


@pytest.fixture
def auto(canary_root, monkeypatch):
    """The canary (a git repository whose settings run `hooks/check.sh`) plus a hook script deep in
    `tools/ci/hooks`, the sandbox explicitly enabled: every command runs unasked."""
    settings = attack_settings(enabled=True)
    settings["hooks"]["PreToolUse"][0]["hooks"].append({"type": "command", "command": "tools/ci/hooks/guard.sh"})
    canary = make_canary(canary_root, settings)
    deep = canary.proj / "tools" / "ci" / "hooks"
    deep.mkdir(parents=True)
    (deep / "guard.sh").write_text("#!/bin/sh\nexit 0\n")
    isolate(monkeypatch, canary)
    return canary


def py(*lines: str) -> str:
    """A python program that tries each line, goes on when one fails, and says it got to the end."""
    body = "\n".join(f"try:\n    {line}\nexcept OSError as e:\n    print('refused:', e)" for line in lines)
    program = f"import os, shutil\n{body}\nprint('done')"
    return f"python3 -c {shlex.quote(program)}"


ESCAPES = {
    "commondir": py("open('.git/commondir', 'w').write('/var/tmp/hostile\\n')"),
    "git config": py("open('.git/config', 'a').write('[core]\\n\\tfsmonitor = touch PWNED\\n')"),
    "rename .git": py("os.rename('.git', 'g')", "os.mkdir('.git')", "open('.git/config', 'w').write('x')"),
    "remove .git": py("shutil.rmtree('.git')"),
    "info/attributes": py("os.makedirs('.git/info', exist_ok=True)",
                          "open('.git/info/attributes', 'w').write('* diff=evil\\n')"),
    "swap the hooks dir": py("os.rename('hooks', 'h2')", "os.mkdir('hooks')",
                             "open('hooks/check.sh', 'w').write('#!/bin/sh\\ntouch PWNED\\n')"),
    "replace a hook's grandparent": py("os.rename('tools', 't2')", "os.makedirs('tools/ci/hooks')",
                                       "open('tools/ci/hooks/guard.sh', 'w').write('#!/bin/sh\\ntouch PWNED\\n')"),
    "replace a hook's parent": py("os.rename('tools/ci/hooks', 'tools/ci/h2')", "os.mkdir('tools/ci/hooks')",
                                  "open('tools/ci/hooks/guard.sh', 'w').write('touch PWNED\\n')"),
    "link over the hook": py("os.remove('hooks/check.sh')", "os.symlink('/bin/true', 'hooks/check.sh')"),
    "remove the hook's folder": py("shutil.rmtree('tools')"),
}


@pytest.mark.parametrize("name", list(ESCAPES))
async def test_nothing_that_runs_later_on_the_host_can_be_planted_from_inside(auto, name):
    session = await open_session(auto)
    try:
        found = await attempt(session, auto, "Bash", {"command": ESCAPES[name]})
    finally:
        await session.close()
    assert found.ran and found.sandboxed, found.describe()
    assert "refused" in found.text() and "done" in found.text(), found.describe()
    assert not found.changed, found.describe()


async def test_a_worktree_pointer_and_the_git_directories_behind_it_stay_read_only(auto):
    """The session runs in a worktree of the canary, with the main checkout as a working directory
    too: the `.git` file, its git directory and the common one are read-only inside, though both
    checkouts are writable."""
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(auto.home), "PATH": "/usr/bin:/bin"}
    worktree = auto.root / "wt"
    subprocess.run(["git", "worktree", "add", "-q", str(worktree)], cwd=auto.proj, env=env, check=True)
    (worktree / ".vigil").mkdir()
    (worktree / ".vigil" / "settings.json").write_text(json.dumps(attack_settings(enabled=True)))
    gitdir = auto.proj / ".git" / "worktrees" / "wt"
    attack = py("open('.git', 'w').write('gitdir: /var/tmp/hostile\\n')", "os.rename('.git', 'g')",
                f"open({str(gitdir / 'commondir')!r}, 'w').write('/var/tmp/hostile')",
                f"os.rename({str(auto.proj / '.git')!r}, {str(auto.proj / 'g')!r})",
                "open('new.txt', 'w').write('a worktree file')",
                f"open({str(auto.proj / 'new.txt')!r}, 'w').write('a main checkout file')")
    session = build_session(SessionOptions(cwd=str(worktree), add_dirs=[str(auto.proj)], persist=False,
                                           script=_script(auto)))
    await session.start()
    try:
        found = await attempt(session, auto, "Bash", {"command": attack})
    finally:
        await session.close()
    assert found.ran and found.sandboxed, found.describe()
    assert str(found.outcome.model_content).count("refused") == 4 and "done" in found.text(), found.describe()
    assert set(found.changed) == {"wt/new.txt", "proj/new.txt"}, found.describe()


def _script(canary) -> str:
    path = canary.root / "script.json"
    path.write_text(json.dumps({"steps": [{"text": "ok"}]}))
    return str(path)
