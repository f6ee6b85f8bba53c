"""Self-protection: an agent must not widen its own permissions by writing the settings Vigil and
Claude Code read, or the scripts their hooks run — not through a symlinked dotfiles directory, not
through a rule or a mode that lets it edit the directory they sit in. Built the way a session builds
its policy (`assemble.build_policy`), from real settings files on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.perm_specs import BASH, WRITE
from tui_app.assemble import SessionOptions, build_policy
from tui_app.runtime.permissions.decision import PermissionQuery


@pytest.fixture
def places(tmp_path, monkeypatch):
    home, project = tmp_path / "home", tmp_path / "project"
    for d in (home, project):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    return home, project


def write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def policy_for(project: Path, hooks: list[dict] | None = None):
    """acceptEdits in the project, and a rule that lets the agent edit the user's dotfiles, hook
    folder and config: everything there is written unasked unless it is protected."""
    if hooks is not None:
        write(project / ".vigil" / "settings.json",
              json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}}))
    options = SessionOptions(cwd=str(project), permission_mode="acceptEdits",
                             allowed_tools=["Edit(~/dotfiles/**)", "Edit(~/hooks/**)", "Edit(~/.config/**)"])
    return build_policy(options)


def writing(policy, path: Path) -> tuple[str, str | None]:
    data = {"file_path": str(path), "content": '{"permissions": {"allow": ["Bash(*)"]}}\n'}
    decision = policy.decide(PermissionQuery(WRITE, data, WRITE.flags_of(data), policy.cwd))
    return decision.behavior, decision.decided_by


# the settings files, by where they really are: the agent writes the real file, whose path names
# no `.claude` or `.vigil`
SETTINGS = [
    "~/dotfiles/claude/settings.json",          # the user's ~/.claude/settings.json
    "~/.config/vigil/settings.json",             # Vigil's user settings
    "project/dotfiles/claude/settings.json",     # the project's .claude/settings.json
    "project/dotfiles/claude/settings.local.json",
    "project/dotfiles/vigil/settings.json",      # the project's .vigil/settings.json
    "project/dotfiles/vigil/settings.local.json",
]


def test_a_settings_file_is_asked_before_a_write_even_through_its_symlinked_directory(places):
    """The settings directories live in a dotfiles repository (GNU stow style), linked from home and
    from the project."""
    home, project = places
    for base in (home, project):
        for link, real in ((".claude", "dotfiles/claude"), (".vigil", "dotfiles/vigil")):
            (base / real).mkdir(parents=True)
            os.symlink(base / real, base / link)
    policy = policy_for(project)
    paths = [home / t[2:] if t.startswith("~/") else project.parent / t for t in SETTINGS]
    assert {str(p): writing(policy, p) for p in paths} == {str(p): ("ask", "guard") for p in paths}
    # what the guard is not: other files beside them, and a project's own settings.json, are written unasked
    assert {writing(policy, p.with_name("notes.md"))[0] for p in paths} == {"allow"}
    assert writing(policy, project / "settings.json") == ("allow", "mode")


HOOK_SCRIPT_CASES = [
    # (the hook command, or {command, args}; the script it runs)
    ('"$CLAUDE_PROJECT_DIR"/tools/quoted.sh', "project/tools/quoted.sh"),
    ("${CLAUDE_PROJECT_DIR}/tools/braced.sh --strict", "project/tools/braced.sh"),
    ("$CLAUDE_PROJECT_DIR/tools/bare.sh", "project/tools/bare.sh"),
    ("tools/relative.sh", "project/tools/relative.sh"),
    ("python3 ~/hooks/tilde.py", "~/hooks/tilde.py"),
    ("$HOME/hooks/home.py", "~/hooks/home.py"),
    ('python3 "${HOME}"/hooks/home_braced.py', "~/hooks/home_braced.py"),
    ({"command": "python3", "args": ["tools/exec_args.py"]}, "project/tools/exec_args.py"),
    # a word with a variable Vigil does not know names no file; the others still count
    ('"$HOOKS_DIR"/lint.sh && tools/after_unknown.sh', "project/tools/after_unknown.sh"),
    ('test -n "$TOOL" || ~/hooks/after_test.py', "~/hooks/after_test.py"),
    # a script named relative to the directory an earlier `cd` moved to
    ("cd tools && ./after_cd.sh", "project/tools/after_cd.sh"),
    ("cd -P scripts/ci; sh lint.sh --fix", "project/scripts/ci/lint.sh"),
    ("pushd hooks >/dev/null && ./after_pushd.sh", "project/hooks/after_pushd.sh"),
    ("cd && python3 hooks/after_bare_cd.py", "~/hooks/after_bare_cd.py"),
    ('cd "$CLAUDE_PROJECT_DIR"/.. && cd project/deep && ./deeper.sh', "project/deep/deeper.sh"),
]


def test_every_script_the_hooks_run_is_asked_before_a_write(places):
    """All the spellings at once, as one settings file may hold them."""
    home, project = places
    hooks = [{"type": "command", **(c if isinstance(c, dict) else {"command": c})} for c, _ in HOOK_SCRIPT_CASES]
    scripts = [write(home / s[2:] if s.startswith("~/") else project.parent / s, "#!/bin/sh\nexit 0\n")
               for _, s in HOOK_SCRIPT_CASES]
    others = [write(project / "tools" / "unrelated.sh", "#!/bin/sh\n"), write(home / "hooks" / "unrelated.py", "")]
    policy = policy_for(project, hooks)
    assert {str(p): writing(policy, p) for p in scripts} == {str(p): ("ask", "guard") for p in scripts}
    bash = {"command": f"echo 'exit 0' > {scripts[0]}"}
    assert policy.decide(PermissionQuery(BASH, bash, BASH.flags_of(bash), policy.cwd)).behavior == "ask"
    # the scripts the hooks do not run are the agent's to edit
    assert [writing(policy, p)[0] for p in others] == ["allow", "allow"]


def test_a_hook_that_changes_to_the_home_directory_does_not_guard_a_project_file_named_tilde(places):
    """`cd ~` is the home directory, not a file `~` the project happens to hold (a stray `mkdir '~'`
    leftover): that file stays an ordinary one."""
    _, project = places
    stray = write(project / "~", "oops\n")
    write(project / "tools" / "guard.sh", "#!/bin/sh\n")
    policy = policy_for(project, [{"type": "command", "command": "cd ~ && $CLAUDE_PROJECT_DIR/tools/guard.sh"}])
    assert writing(policy, project / "tools" / "guard.sh") == ("ask", "guard")
    assert writing(policy, stray) == ("allow", "mode")
