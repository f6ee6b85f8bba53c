"""The git guard's parts, each against real git and real files (fast: no session). The attacks
end to end are in test_git_guard.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tui_app.runtime.permissions.bash import git_guard
from tui_app.runtime.permissions.bash.git_guard import (
    DROPPED_VARIABLES,
    KEYS,
    NEUTRALISED,
    PROGRAM_WORDS,
    RUN_CONFIG,
    config_problem,
    discover,
    git_problem,
    key_problem,
    repository_problem,
    run_env,
)
from tui_app.runtime.permissions.bash.parse import parse_command
from tui_app.runtime.permissions.bash.readonly import classify
from tui_app.runtime.permissions.bash.words import Where

PLAIN = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}


def git(cwd: Path, *argv: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    done = subprocess.run(["git", *argv], cwd=cwd, env=env or PLAIN, capture_output=True, text=True, input=stdin,
                          check=False, timeout=60)
    return done.stdout + done.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    git(proj, "init", "-q")
    (proj / "a.txt").write_text("one\n")
    git(proj, "add", "-A")
    git(proj, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "one")
    return proj


def plant(repo: Path, text: str) -> None:
    with open(repo / ".git" / "config", "a", encoding="utf-8") as handle:
        handle.write(text)


def instance(pattern: str) -> str:
    return pattern.replace("*", "x")


# ---- the tables -------------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern", KEYS)
def test_every_listed_key_names_a_program(pattern):
    assert "names a program" in (key_problem(instance(pattern), "prog") or "")
    assert "names a program" in (key_problem(instance(pattern).upper(), "prog") or "")  # any case


@pytest.mark.parametrize("word", sorted(PROGRAM_WORDS))
def test_any_other_key_whose_name_says_program_may_name_one(word):
    assert "may name a program" in (key_problem(f"vendor.x.{word}", "prog") or "")
    assert "may name a program" in (key_problem(f"vendor.{word}", "prog") or "")


@pytest.mark.parametrize("pattern", NEUTRALISED)
def test_keys_the_run_environment_switches_off_never_ask(pattern):
    assert key_problem(instance(pattern), "!prog") is None


def test_a_shell_command_value_asks_and_a_plain_key_does_not():
    assert "shell command" in (key_problem("vendor.x.run", " !touch x") or "")
    assert key_problem("vendor.x.run", "touch x") is None
    assert key_problem("vendor.x.run", None) is None
    assert key_problem("include.path", "x") is None and key_problem("includeIf.gitdir:/.path", "x") is None


def test_patterns_match_the_subsection_as_a_whole():
    assert "may name a program" in (key_problem("diff.command", "x") or "")  # two levels: not diff.*.command
    assert "may name a program" in (key_problem("diff.textconv", "x") or "")
    assert "names a program" in (key_problem("gpg.ssh.defaultKeyCommand", "x") or "")
    assert key_problem("gpg.other.defaultKeyCommand", "x") is None
    assert key_problem("diff.external", "x") is not None
    assert key_problem("diff.a.b.external", "x") is None  # three levels: not diff.external
    assert key_problem("gpg.ssh.program", "x") is not None and key_problem("gpg.program", "x") is not None
    assert key_problem("credential.helper", "x") is None  # reset by the run environment
    assert "names a program" in (key_problem("credential.https://h.helper", "x") or "")
    assert "names a program" in (key_problem("filter.a.b.clean", "x") or "")  # a dotted subsection


def test_the_run_environment_switches_off_what_it_says(tmp_path, repo):
    env = run_env({"GIT_CONFIG_COUNT": "x", **{k: "v" for k in DROPPED_VARIABLES}, "A": "b"})
    assert env["A"] == "b" and not set(DROPPED_VARIABLES) & set(env)
    pairs = {(env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"]) for i in range(int(env["GIT_CONFIG_COUNT"]))}
    assert pairs == set(RUN_CONFIG)
    assert run_env({})["GIT_CONFIG_COUNT"] == str(len(RUN_CONFIG))
    assert run_env({"GIT_CONFIG_COUNT": ""})["GIT_CONFIG_KEY_0"] == RUN_CONFIG[0][0]
    assert run_env({"GIT_CONFIG_COUNT": "-3"})["GIT_CONFIG_KEY_0"] == RUN_CONFIG[0][0]
    # git itself sees the overrides on top of a repository that sets the opposite
    marker = tmp_path / "pwned"
    plant(repo, f'[core]\n\tfsmonitor = "touch {marker}; false"\n\thooksPath = hooks\n[log]\n\tshowSignature = true\n')
    (repo / "a.txt").write_text("two\n")
    safe = run_env(PLAIN)
    assert git(repo, "config", "core.hooksPath", env=safe).strip() == "/dev/null"
    assert git(repo, "config", "log.showSignature", env=safe).strip() == "false"
    assert "a.txt" in git(repo, "status", "--short", env=safe)
    assert not marker.exists()
    # an external diff named by the user's environment is not run either
    assert "two" in git(repo, "diff", env=run_env({**PLAIN, "GIT_EXTERNAL_DIFF": f"touch {marker}; true"}))
    assert not marker.exists()
    # `git status` does not refresh the index (a write) under the run environment
    index = repo / ".git" / "index"
    (repo / "a.txt").write_text("one\n")  # as committed: only its time differs from the index
    os.utime(repo / "a.txt", (1, 1))
    before = index.read_bytes()
    git(repo, "status", "--short", env=safe)
    assert index.read_bytes() == before
    git(repo, "-c", "core.fsmonitor=false", "status", "--short")
    assert index.read_bytes() != before  # it would have
    git(repo, "status", env=PLAIN)
    assert marker.exists()  # the plant is live


# ---- configuration files ----------------------------------------------------------------------------

def test_configuration_is_read_as_git_reads_it(tmp_path, repo):
    plant(repo, '[diff "x"]\n\ttextconv = cat\n')
    assert "diff.x.textconv" in (config_problem([str(repo / ".git" / "config")], str(tmp_path)) or "")
    assert config_problem([str(tmp_path / "missing")], str(tmp_path)) is None
    (tmp_path / "bad").write_text("[broken\n")
    assert "cannot read" in (config_problem([str(tmp_path / "bad")], str(tmp_path)) or "")


def test_config_on_the_same_line_as_its_section_and_continued_values_are_seen(tmp_path):
    path = tmp_path / "c"
    path.write_text('[filter "x"] clean = a\\\n b\n')
    assert "filter.x.clean" in (config_problem([str(path)], str(tmp_path)) or "")


def test_includes_are_followed_relative_to_the_including_file_and_from_home(tmp_path, repo):
    home = tmp_path / "home"
    home.mkdir()
    (home / "inc").write_text('[filter "h"]\n\tclean = x\n')
    (repo / "inc").write_text('[filter "p"]\n\tclean = x\n')
    config = str(repo / ".git" / "config")
    plant(repo, "[include]\n\tpath = ../inc\n")
    assert "filter.p.clean" in (config_problem([config], str(home)) or "")
    (repo / "inc").write_text("[include]\n\tpath = ~/inc\n")
    assert "filter.h.clean" in (config_problem([config], str(home)) or "")
    (repo / "inc").write_text("[include]\n\tpath = ~\n")  # home itself: a directory git cannot read
    assert config_problem([config], str(home)) is not None
    (repo / "inc").write_text("[include]\n\tpath\n\tpath =\n\tpath = !x\n")  # nothing included, nothing run
    assert config_problem([config], str(home)) is None


def test_includes_nested_past_gits_limit_ask(tmp_path):
    for i in range(12):
        (tmp_path / f"c{i}").write_text(f"[include]\n\tpath = c{i + 1}\n")
    (tmp_path / "c12").write_text("[user]\n\tname = x\n")
    assert "too deeply" in (config_problem([str(tmp_path / "c0")], str(tmp_path)) or "")
    (tmp_path / "c11").write_text("[user]\n\tname = x\n")
    assert "too deeply" in (config_problem([str(tmp_path / "c0")], str(tmp_path)) or "")
    (tmp_path / "c10").write_text("[user]\n\tname = x\n")
    assert config_problem([str(tmp_path / "c0")], str(tmp_path)) is None


def test_a_file_read_once_is_read_from_the_cache_until_it_changes(tmp_path, monkeypatch):
    path = tmp_path / "c"
    path.write_text("[user]\n\tname = x\n")
    assert git_guard.config_entries(str(path)) == [("user.name", "x")]
    calls = []
    real = subprocess.run
    monkeypatch.setattr(git_guard.subprocess, "run", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert git_guard.config_entries(str(path)) == [("user.name", "x")]
    assert calls == []
    path.write_text("[user]\n\tname = yy\n\tbool\n")
    assert git_guard.config_entries(str(path)) == [("user.name", "yy"), ("user.bool", None)]
    assert len(calls) == 1


def test_a_file_that_cannot_be_opened_or_read_by_git_asks(tmp_path, monkeypatch):
    (tmp_path / "f").write_text("")
    assert "cannot be read" in (config_problem([str(tmp_path / "f" / "config")], str(tmp_path)) or "")
    (tmp_path / "c3").write_text("[user]\n\tname = w\n")

    def broken(*args, **kwargs):
        raise OSError("no processes left")

    monkeypatch.setattr(git_guard.subprocess, "run", broken)
    assert "could not be read by git" in (config_problem([str(tmp_path / "c3")], str(tmp_path)) or "")


def test_the_cache_stays_small(tmp_path):
    for i in range(300):
        (tmp_path / f"c{i}").write_text("")
        git_guard.config_entries(str(tmp_path / f"c{i}"))
    assert len(git_guard._cache) <= 257


def test_without_git_configuration_cannot_be_read_and_asks(tmp_path, monkeypatch):
    path = tmp_path / "c2"
    path.write_text("[user]\n\tname = z\n")
    monkeypatch.setattr(git_guard, "_git_program", lambda: None)
    assert "not installed" in (config_problem([str(path)], str(tmp_path)) or "")
    assert git_guard._git_program() is None


def test_the_configuration_reader_finds_the_systems_git():
    found = git_guard._git_program()
    assert found is not None and os.path.basename(found) == "git" and os.access(found, os.X_OK)


# ---- which repository -------------------------------------------------------------------------------

def test_discovery_finds_what_git_finds(tmp_path, repo):
    (repo / "src" / "deep").mkdir(parents=True)
    found = discover(str(repo / "src" / "deep"), {})
    assert found is not None and found.git_dir == str(repo / ".git") and found.work_tree == str(repo)
    assert discover(str(tmp_path), {}) is None
    # a worktree: `.git` is a file
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    found = discover(str(tmp_path / "wt"), {})
    assert found is not None and found.git_dir == str(repo / ".git" / "worktrees" / "wt")
    assert git(tmp_path / "wt", "rev-parse", "--absolute-git-dir").strip() == found.git_dir
    # a bare-shaped folder is a repository by itself
    bare = repo / "b"
    (bare / "objects").mkdir(parents=True)
    (bare / "refs").mkdir()
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    assert discover(str(bare), {}) == git_guard.Repository(str(bare), None)
    assert git(bare, "rev-parse", "--absolute-git-dir").strip() == str(bare)
    (bare / "refs").rmdir()
    assert discover(str(bare), {}).git_dir == str(repo / ".git")  # no refs: not a repository
    (bare / "refs").mkdir()
    (bare / "objects").rmdir()
    assert discover(str(bare), {}).git_dir == str(repo / ".git")
    (bare / "commondir").write_text("../.git\n")  # a commondir stands for objects and refs
    assert discover(str(bare), {}).git_dir == str(bare)
    (bare / "HEAD").unlink()
    assert discover(str(bare), {}).git_dir == str(repo / ".git")


def test_a_dot_git_folder_that_is_not_a_repository_is_passed_over_as_git_does(tmp_path, repo):
    sub = repo / "sub"
    (sub / ".git").mkdir(parents=True)
    assert discover(str(sub), {}).git_dir == str(repo / ".git")
    (sub / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (sub / ".git" / "objects").mkdir()
    (sub / ".git" / "refs").mkdir()
    assert discover(str(sub), {}).git_dir == str(sub / ".git")


def test_a_dot_git_file_points_to_its_git_directory(tmp_path, repo):
    sub = repo / "sub"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../elsewhere\n")
    assert discover(str(sub), {}).git_dir == str(repo / "elsewhere")
    (sub / ".git").write_text("gitdir:../elsewhere\n")  # no space: git takes it for no pointer
    assert discover(str(sub), {}).git_dir == str(sub / ".git")
    (sub / ".git").write_text("not a pointer\n")
    assert discover(str(sub), {}).git_dir == str(sub / ".git")
    (sub / ".git").write_text("")
    assert discover(str(sub), {}).git_dir == str(sub / ".git")
    assert git_guard._gitfile_target(str(tmp_path / "none")) is None


def test_git_dir_in_the_environment_is_the_repository(tmp_path, repo):
    found = discover(str(tmp_path), {"GIT_DIR": str(repo / ".git"), "GIT_WORK_TREE": str(repo)})
    assert found == git_guard.Repository(str(repo / ".git"), str(repo))
    assert discover(str(repo), {"GIT_DIR": "x"}) == git_guard.Repository(str(repo / "x"), None)


def test_a_repository_other_than_the_projects_own_is_unknown(tmp_path, repo):
    nested = repo / "vendor"
    nested.mkdir()
    git(nested, "init", "-q")
    assert repository_problem([str(repo)], [str(repo)], {}) is None
    assert "not the project's own" in (repository_problem([str(nested)], [str(repo)], {}) or "")
    assert "not the project's own" in (repository_problem([str(repo), str(nested)], [str(repo)], {}) or "")
    assert repository_problem([str(tmp_path)], [str(repo)], {}) is None  # no repository at all
    assert repository_problem([str(nested)], [str(tmp_path)], {}) is not None  # a project with none of its own
    assert "not the project's own" in (git_problem([str(nested)], [str(repo)], str(tmp_path), {}) or "")


def test_the_configuration_of_every_repository_file_counts(tmp_path, repo):
    home = str(tmp_path)
    assert git_problem([str(repo)], [str(repo)], home, {}) is None
    worktree_config = repo / ".git" / "config.worktree"
    worktree_config.write_text('[diff "w"]\n\ttextconv = x\n')
    assert "diff.w.textconv" in (git_problem([str(repo)], [str(repo)], home, {}) or "")
    worktree_config.unlink()
    # a real submodule: git writes core.worktree into its configuration, which is let be
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    (lib / "f").write_text("x\n")
    git(lib, "add", "-A")
    git(lib, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "libs/lib")
    module = repo / ".git" / "modules" / "libs" / "lib"
    assert "worktree" in (module / "config").read_text()
    assert git_problem([str(repo)], [str(repo)], home, {}) is None
    with open(module / "config", "a", encoding="utf-8") as handle:
        handle.write('[filter "m"]\n\tclean = x\n')
    assert "filter.m.clean" in (git_problem([str(repo)], [str(repo)], home, {}) or "")
    # a submodule's submodule, and nothing looked for inside their object stores
    nested = module / "modules" / "inner"
    for part in ("objects", "refs"):
        (nested / part).mkdir(parents=True)
    (nested / "HEAD").write_text("ref: refs/heads/main\n")
    (nested / "config").write_text('[diff "n"]\n\ttextconv = x\n[core]\n\tworktree = ../x\n')
    inside = module / "objects" / "in"
    for part in ("objects", "refs"):
        (inside / part).mkdir(parents=True)
    (inside / "HEAD").write_text("x")
    (inside / "config").write_text('[diff "o"]\n\ttextconv = x\n')  # never looked for in an object store
    found = git_guard.module_config_files(git_guard.Repository(str(repo / ".git"), str(repo)))
    assert found == [str(module / "config"), str(nested / "config")]
    (nested / "config").write_text("[core]\n\tworktree = ../x\n")
    assert "worktree" in (config_problem([str(nested / "config")], home) or "")  # elsewhere it asks
    assert config_problem([str(nested / "config")], home, git_guard.MODULE_KEYS) is None
    deep = repo / ".git" / "modules" / "a" / "b" / "c" / "d" / "e" / "f" / "g"
    for part in ("objects", "refs"):
        (deep / part).mkdir(parents=True)
    (deep / "HEAD").write_text("ref: refs/heads/main\n")
    (deep / "config").write_text("")
    assert str(deep / "config") not in git_guard.module_config_files(git_guard.Repository(str(repo / ".git"), None))
    assert str(deep.parent / "config") not in found
    (deep.parent / "HEAD").write_text("x")
    (deep.parent / "objects").mkdir()
    (deep.parent / "refs").mkdir()
    (deep.parent / "config").write_text("")
    assert str(deep.parent / "config") in git_guard.module_config_files(git_guard.Repository(str(repo / ".git"), None))
    (module / "config").write_text((module / "config").read_text().replace("clean = x", "name = x"))
    (nested / "config").write_text("")
    # a linked worktree reads the common directory's config
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    plant(repo, '[diff "c"]\n\tcommand = x\n')
    assert "diff.c.command" in (git_problem([str(tmp_path / "wt")], [str(tmp_path / "wt")], home, {}) or "")


def test_gitmodules_that_look_inside_submodules_ask(tmp_path, repo):
    home = str(tmp_path)
    modules = repo / ".gitmodules"
    modules.write_text('[submodule "s"]\n\tpath = s\n\tignore = all\n[other "s"]\n\tignore = none\n')
    assert git_problem([str(repo)], [str(repo)], home, {}) is None
    modules.write_text('[submodule "s"]\n\tignore\n')
    assert "submodule" in (git_problem([str(repo)], [str(repo)], home, {}) or "")
    modules.write_text("[broken\n")
    assert "cannot read" in (git_problem([str(repo)], [str(repo)], home, {}) or "")


def test_a_bare_repository_has_no_gitmodules_to_read(tmp_path):
    bare = tmp_path / "b.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    (bare / ".gitmodules").write_text("[broken\n")  # not a work tree's file: never read
    assert git_problem([str(bare)], [str(bare)], str(tmp_path), {}) is None


# ---- in the classifier ------------------------------------------------------------------------------

def reading(command: str, cwd: Path, home: Path):
    return classify(parse_command(command), Where((str(cwd),), str(home)))


def test_the_classifier_asks_where_the_guard_says_so(tmp_path, repo):
    nested = repo / "vendor"
    nested.mkdir()
    git(nested, "init", "-q")
    assert reading("git status", repo, tmp_path).read_only
    assert reading("cd vendor/.. && git log", repo, tmp_path).read_only
    for command in ("cd vendor && git status", "cd vendor; git log", "git -C vendor status",
                    "GIT_DIR=vendor/.git git status", "env git -C vendor status", "/usr/bin/git -C vendor log",
                    "git --git-dir=vendor/.git log", "git --work-tree vendor status", "git -c x=y -C vendor log",
                    "nice git -C vendor status", "LANG=C git -C vendor status", "GIT_CONFIG_GLOBAL=x git log",
                    "GIT_WORK_TREE=vendor git status", "env GIT_COMMON_DIR=vendor/.git git log"):
        found = reading(command, repo, tmp_path)
        assert not found.read_only, command
        assert found.runs_config, command
    assert not reading("git -C vendor/.. log", repo, tmp_path).runs_config
    assert not reading("git commit -m x", repo, tmp_path).runs_config  # the project's own: its business
    assert not reading("cat a.txt", repo, tmp_path).runs_config
    assert not reading("git -C", repo, tmp_path).runs_config
    assert reading("git -C $X status", repo, tmp_path).runs_config
    assert reading("cd $X && git -C vendor status", repo, tmp_path).runs_config
    assert reading("cd $X && git status", repo, tmp_path).runs_config
    plant(repo, '[diff "x"]\n\ttextconv = cat\n')
    found = reading("git diff", repo, tmp_path)
    assert not found.read_only and "diff.x.textconv" in found.runs_config[0]
    assert not reading("GIT_PAGER=x git log", repo, tmp_path).runs_config  # the model's own setting: asks anyway
    assert "sets GIT_PAGER" in reading("GIT_PAGER=x git log", repo, tmp_path).reason
