"""Protected trees, not files: moving, removing or re-owning a folder that holds a protected path
(`.git`, `.claude`, `.vigil`, `.mcp.json`, a hook script — however deep) is a write to that path
and always asks, in acceptEdits too; so are the git directories a worktree's `.git` file points
to. Moves and copies *into* an existing folder stay ordinary edits. Built the way a session builds
its policy, from real files on disk."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.perm_specs import BASH, WRITE
from tui_app.assemble import SessionOptions, build_policy
from tui_app.runtime.permissions.decision import PermissionQuery


@pytest.fixture
def project(tmp_path, monkeypatch):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for rel, text in (("tools/ci/hooks/guard.sh", "#!/bin/sh\nexit 0\n"), ("notes.txt", "hi\n"),
                      ("docs/readme.md", "doc\n"), ("evil/guard.sh", "touch PWNED\n"),
                      (".claude/commands/x.md", "x\n")):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "tools/ci/hooks/guard.sh"}]}]}
    (project / ".vigil").mkdir()
    (project / ".vigil" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def bash(policy, command: str) -> str:
    data = {"command": command}
    return policy.decide(PermissionQuery(BASH, data, BASH.flags_of(data), policy.cwd)).behavior


#: acceptEdits lets mkdir, touch, mv and cp run; these rules let the other writers run too
WRITER_RULES = ["Bash(rm *)", "Bash(rmdir *)", "Bash(chmod *)", "Bash(chown *)", "Bash(ln *)", "Bash(install *)"]


def policy_in(project: Path, mode: str = "acceptEdits", add_dirs: tuple[str, ...] = ()):
    return build_policy(SessionOptions(cwd=str(project), permission_mode=mode, add_dirs=list(add_dirs),  # type: ignore[arg-type]
                                       allowed_tools=WRITER_RULES))


MOVES_OF_A_PROTECTED_TREE = [
    "mv .git g", "mv -- .git g", "rm -rf .git", "rm -rf .claude", "mv .vigil v", "rmdir .claude",
    "mv tools/ci/hooks h2 && mkdir -p tools/ci/hooks", "mv tools t2", "mv tools/ci tools/c2",
    "rm -rf tools", "rm -r tools/ci", "rm -rf .", "cd tools && mv ci c2", "chmod -R 777 tools",
    "chown -R nobody tools/ci", "install -d tools/ci/hooks", "cp -rT evil tools/ci/hooks",
    "cp -r -T evil tools/ci/hooks",
    "cp -r --no-target-directory evil tools/ci/hooks", "ln -sfnT /tmp tools/ci", "mv -T evil tools/ci/hooks",
    "cp notes.txt tools/ci/hooks/guard.sh",
]


@pytest.mark.parametrize("command", MOVES_OF_A_PROTECTED_TREE)
def test_moving_or_removing_a_folder_above_a_protected_path_asks(project, command):
    assert bash(policy_in(project), command) == "ask"


@pytest.mark.parametrize("command", [
    "mv notes.txt docs", "cp notes.txt .", "mv docs/readme.md .", "cp -r evil docs", "mkdir -p tools/ci/hooks",
    "touch tools/ci/hooks/new.sh", "cp notes.txt tools/ci/hooks", "rm -rf evil", "mv evil evil2",
    "chmod -R 755 docs", "cp -r docs tools/ci/hooks", "rmdir evil", "ln -s notes.txt docs", "chown -R nobody docs",
    "cp -r evil/ tools/ci/hooks", "cp -- -Tx tools/ci/hooks", "cp -r --no-clobber evil tools/ci/hooks",
    "cp Tnotes.txt tools/ci/hooks", "cp --suffix=.T notes.txt tools/ci/hooks",
    "mv --no-target evil2 docs",
])
def test_edits_beside_protected_paths_run_in_accept_edits(project, command):
    """What the guard is not: writing into a hook's folder, or moving things into an existing
    directory (the project's root included), is an ordinary edit."""
    assert bash(policy_in(project), command) == "allow"


def test_a_project_that_holds_nothing_protected_is_the_rules_business(tmp_path, monkeypatch):
    """No `.git`, `.claude`, `.vigil` or `.mcp.json`, no hooks: removing the whole project is what
    the `Bash(rm *)` rule allows (the names protected do not exist to be removed)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    bare = tmp_path / "bare"
    (bare / "sub").mkdir(parents=True)
    assert bash(policy_in(bare), "rm -rf .") == "allow"
    (bare / "sub" / ".mcp.json").write_text("{}")
    assert bash(policy_in(bare), "rm -rf sub") == "allow"  # not the project's own .mcp.json
    (bare / ".mcp.json").write_text("{}")
    assert bash(policy_in(bare), "rm -rf .") == "ask"


def test_a_destination_glob_of_several_folders_is_each_folder(project):
    """`cp notes.txt tools/ci/h*` is `cp notes.txt tools/ci/h2 tools/ci/hooks`: the last folder
    receives the others, so the guard looks at each of them."""
    (project / "tools" / "ci" / "h2").mkdir()
    assert bash(policy_in(project), "cp notes.txt tools/ci/h*") == "ask"
    assert bash(policy_in(project), "cp notes.txt tools/ci/h2") == "allow"


def test_in_bypass_permissions_a_folder_above_a_protected_path_is_the_users_to_move(project):
    assert bash(policy_in(project, "bypassPermissions"), "mv tools t2") == "allow"


def test_the_git_directories_a_worktree_points_to_are_protected_whole(project, tmp_path):
    """The worktree's `.git` file names `main/.git/worktrees/wt`, whose `commondir` names
    `main/.git`: with the main checkout as a working directory, acceptEdits still asks before a
    write anywhere in either, or to the pointer file itself."""
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], cwd=project, env=env, check=True)
    worktree = tmp_path / "wt"
    subprocess.run([*git, "worktree", "add", "-q", str(worktree)], cwd=project, env=env, check=True)
    # the main repository's git directory under a name that is not `.git`: only the pointer tells
    (project / ".git").rename(project / "repo.git")
    (worktree / ".git").write_text(f"gitdir: {project / 'repo.git' / 'worktrees' / 'wt'}\n")
    policy = policy_in(worktree, add_dirs=(str(project),))

    def write(path: Path) -> str:
        data = {"file_path": str(path), "content": "x"}
        return policy.decide(PermissionQuery(WRITE, data, WRITE.flags_of(data), policy.cwd)).behavior

    assert write(project / "repo.git" / "config") == "ask"
    assert write(project / "repo.git" / "worktrees" / "wt" / "commondir") == "ask"
    assert write(worktree / ".git") == "ask"
    assert bash(policy, f"mv {project / 'repo.git'} {tmp_path / 'elsewhere'}") == "ask"
    assert write(project / "notes.txt") == "allow"
