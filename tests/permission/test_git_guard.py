"""The git guard for real (issue 27, class 1): a repository's configuration never runs a program
through a git command that runs without asking.

Every attack is live: before Vigil sees it, the same git command run the ordinary way writes the
marker file (so the test would notice a guard that does nothing). Then the command goes through a
headless session built from real settings — default, plan, acceptEdits and dontAsk, with the
sandbox and without it — and the marker must not exist afterwards: either the command was asked
(headless: denied), or it ran with the program switched off and printed what git prints.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.needs import need_program
from tests.sec_kit import Canary, attack_settings, attempt, canary_root, isolate, make_canary, open_session
from tui_app.runtime.permissions.bash.git_guard import git_problem, key_problem, run_env
from tui_app.runtime.permissions.decision import PermissionQuery

__all__ = ["canary_root"]  # the fixture, imported for pytest

MODES = ("default", "plan", "acceptEdits", "dontAsk")
SANDBOX = {"sandboxed": {}, "no-sandbox": {"enabled": False}, "sandbox-auto": {"enabled": True}}
MARK = "pwned"


def _git(cwd: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", **(env or {})}
    return subprocess.run(["git", *argv], cwd=cwd, env=base, capture_output=True, text=True, check=False,
                          timeout=60)


def _commit(cwd: Path, message: str) -> None:
    _git(cwd, "add", "-A")
    done = _git(cwd, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", message)
    assert done.returncode == 0, done.stderr


def _sign_head(proj: Path) -> None:
    """Give HEAD a (bogus) PGP signature, so that showing signatures runs gpg.program."""
    body = _git(proj, "cat-file", "commit", "HEAD").stdout
    head, _, message = body.partition("\n\n")
    signature = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----"
    crafted = f"{head}\n{signature}\n\n{message}"
    made = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=proj, input=crafted,
                          capture_output=True, text=True, check=True)
    _git(proj, "update-ref", "HEAD", made.stdout.strip())


def _marker(canary: Canary) -> Path:
    return canary.proj / MARK


def _live(canary: Canary, where: Path, command: str) -> None:
    """The attack works when Vigil is not in the way: the plain command writes the marker."""
    subprocess.run(["bash", "-c", command], cwd=where, capture_output=True, timeout=60, check=False,
                   env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(canary.home)})
    assert _marker(canary).exists(), f"the planted configuration is not live: {command}"
    _marker(canary).unlink()


@dataclass(frozen=True)
class Planted:
    id: str
    #: appended to the project's .git/config ({m}: the marker's path, {root}: the test's root)
    config: str
    command: str
    #: True: the run environment switches the program off, so the command runs; False: it asks
    runs: bool
    attributes: str = ""
    #: prepared before the command: "dirty" (notes.txt changed), "signed" (HEAD signed)
    state: str = "dirty"
    #: what the command prints when it runs
    prints: str = ""


TOUCH = "touch {m}; "
PLANTED = [
    Planted("fsmonitor", '[core]\n\tfsmonitor = "' + TOUCH + 'false"\n', "git status", True, prints="notes.txt"),
    Planted("fsmonitor-spelled", '[CORE]\n\tFsMonitor = "' + TOUCH + 'false"\n', "git status --short", True,
            prints="notes.txt"),
    Planted("fsmonitor-diff", '[core]\n\tfsmonitor = "' + TOUCH + 'false"\n', "git diff --stat", True,
            prints="notes.txt"),
    Planted("external-diff", '[diff]\n\texternal = "' + TOUCH + 'true"\n', "git diff", False),
    Planted("textconv", '[diff "evil"]\n\ttextconv = "' + TOUCH + 'cat"\n', "git diff", False,
            attributes="*.txt diff=evil\n"),
    Planted("textconv-show", '[diff "evil"]\n\ttextconv = "' + TOUCH + 'cat"\n', "git show HEAD", False,
            attributes="*.txt diff=evil\n", state="committed"),
    Planted("diff-driver", '[diff "evil"]\n\tcommand = "' + TOUCH + 'true"\n', "git diff", False,
            attributes="*.txt diff=evil\n"),
    Planted("clean-filter", '[filter "evil"]\n\tclean = "' + TOUCH + 'cat"\n', "git status", False,
            attributes="*.txt filter=evil\n"),
    Planted("clean-filter-diff", '[filter "evil"]\n\tclean = "' + TOUCH + 'cat"\n', "git diff", False,
            attributes="*.txt filter=evil\n"),
    Planted("filter-process", '[filter "evil"]\n\tprocess = "' + TOUCH + 'false"\n', "git status", False,
            attributes="*.txt filter=evil\n"),
    Planted("gpg-program", '[gpg]\n\tprogram = {root}/gpg.sh\n[log]\n\tshowSignature = true\n', "git log -1", False,
            state="signed"),
    Planted("include", "[include]\n\tpath = ../evil.inc\n", "git status", False, attributes="*.txt filter=evil\n"),
    Planted("include-if", '[includeIf "gitdir:/"]\n\tpath = ../evil.inc\n', "git diff", False,
            attributes="*.txt filter=evil\n"),
]


def _plant(canary: Canary, case: Planted) -> None:
    proj = canary.proj
    gpg = canary.root / "gpg.sh"
    gpg.write_text(f"#!/bin/sh\ntouch {_marker(canary)}\nexit 1\n")
    gpg.chmod(0o755)
    (proj / "evil.inc").write_text('[filter "evil"]\n\tclean = "touch ' + str(_marker(canary)) + '; cat"\n')
    if case.attributes:
        (proj / ".gitattributes").write_text(case.attributes)
    _commit(proj, "attributes")
    if case.state == "signed":
        _sign_head(proj)
    if case.state == "committed":
        (proj / "notes.txt").write_text("hello\nthere\n")
        _commit(proj, "change")
    if case.state == "dirty":
        # the same size, so that git must read the file (and run its clean filter) to tell
        (proj / "notes.txt").write_text("hello\nWORLD\n")
    text = case.config.replace("{m}", str(_marker(canary))).replace("{root}", str(canary.root))
    with open(proj / ".git" / "config", "a", encoding="utf-8") as handle:
        handle.write(text)


def _decision(session, canary: Canary, command: str):
    spec = session.registry.resolve("Bash")
    data = {"command": command}
    return session.policy.decide(PermissionQuery(spec, data, spec.flags_of(data), str(canary.proj)))


def _sandbox_ready(where: str) -> None:
    if where != "no-sandbox":
        need_program("bwrap")
        need_program("socat")


@pytest.mark.parametrize("where", list(SANDBOX))
@pytest.mark.parametrize("case", PLANTED, ids=lambda c: c.id)
async def test_a_planted_git_config_never_runs_through_an_auto_allowed_command(case, where, canary_root,
                                                                               monkeypatch):
    _sandbox_ready(where)
    canary = make_canary(canary_root, attack_settings(**SANDBOX[where]))
    isolate(monkeypatch, canary)
    _plant(canary, case)
    _live(canary, canary.proj, case.command)
    for mode in MODES:
        session = await open_session(canary, mode=mode)
        try:
            found = await attempt(session, canary, "Bash", {"command": case.command})
            if mode == "default" and not case.runs:  # the question says why
                assert "git configuration" in _decision(session, canary, case.command).reason
        finally:
            await session.close()
        assert not _marker(canary).exists(), f"{mode}: the planted program ran\n{found.describe()}"
        if case.runs:
            assert found.ran and not found.denied, f"{mode}: {found.describe()}"
            assert case.prints in found.text(), f"{mode}: {found.describe()}"
            if where != "no-sandbox":
                assert found.sandboxed, found.describe()
        else:
            assert found.denied and not found.ran, f"{mode}: {found.describe()}"



# ---- repositories that are not the project's own ----------------------------------------------------

def _bare_repository(folder: Path, canary: Canary) -> None:
    """A bare repository with one signed commit, whose configuration shows signatures with a
    program of its own (and names an fsmonitor): all plain files, which a commit can hold."""
    assert _git(canary.root, "init", "-q", "--bare", str(folder)).returncode == 0

    def git(*argv: str, stdin: str) -> str:
        return subprocess.run(["git", f"--git-dir={folder}", *argv], input=stdin, capture_output=True, text=True,
                              check=True).stdout.strip()

    blob = git("hash-object", "-w", "--stdin", stdin="x\n")
    tree = git("mktree", stdin=f"100644 blob {blob}\tf.txt\n")
    commit = git("hash-object", "-t", "commit", "-w", "--stdin", stdin=(
        f"tree {tree}\nauthor t <t@t> 0 +0000\ncommitter t <t@t> 0 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEz\n -----END PGP SIGNATURE-----\n\nsigned\n"))
    git("update-ref", "refs/heads/main", commit, stdin="")
    git("symbolic-ref", "HEAD", "refs/heads/main", stdin="")
    gpg = canary.root / "gpg.sh"
    gpg.write_text(f"#!/bin/sh\ntouch {_marker(canary)}\nexit 1\n")
    gpg.chmod(0o755)
    with open(folder / "config", "a", encoding="utf-8") as handle:
        handle.write(f'[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {gpg}\n'
                     f'[core]\n\tfsmonitor = "touch {_marker(canary)}; false"\n')


def _cloned_with_bare_folder(canary: Canary) -> None:
    """The project as a clone of a repository that commits a bare-shaped folder `evil`: the folder
    survives `git clone`."""
    proj = canary.proj
    _bare_repository(proj / "evil", canary)
    _commit(proj, "a folder that looks like a repository")
    clone = canary.root / "clone"
    done = _git(canary.root, "clone", "-q", str(proj), str(clone))
    assert done.returncode == 0, done.stderr
    (clone / "secret").mkdir(exist_ok=True)
    (clone / "secret" / "key").write_text(canary.secret + "\n")
    (clone / ".vigil").mkdir(exist_ok=True)
    (clone / ".vigil" / "settings.json").write_text((proj / ".vigil" / "settings.json").read_text())
    subprocess.run(["rm", "-rf", str(proj)], check=True)
    clone.rename(proj)
    assert (proj / "evil" / "HEAD").exists() and (proj / "evil" / "refs" / "heads" / "main").exists()


SPELLINGS = [
    "cd evil && git status",
    "cd evil; git status",
    "(cd evil && git log)",
    "cd ./evil/ && git diff",
    'cd "$PWD"/evil && git status',
    "cd ~+/evil && git status",
    "pushd evil >/dev/null && git status",
    "cd evil && cd . && git branch --list",
    "git -C evil status",
    "git --git-dir=evil status",
    "git --git-dir evil log",
    "GIT_DIR=evil git status",
    "env GIT_DIR=evil git status",
    "env git -C evil status",
    "cd evil && git --no-pager status",
]


@pytest.mark.parametrize("where", list(SANDBOX))
async def test_a_committed_repository_shaped_folder_is_unknown_ground(where, canary_root, monkeypatch):
    _sandbox_ready(where)
    canary = make_canary(canary_root, attack_settings(**SANDBOX[where]))
    isolate(monkeypatch, canary)
    _cloned_with_bare_folder(canary)
    _live(canary, canary.proj / "evil", "git log")
    for mode in MODES:
        session = await open_session(canary, mode=mode)
        try:
            for command in SPELLINGS:
                found = await attempt(session, canary, "Bash", {"command": command})
                assert not _marker(canary).exists(), f"{mode}: {found.describe()}"
                assert found.denied and not found.ran, f"{mode}: {found.describe()}"
        finally:
            await session.close()


@pytest.mark.parametrize("where", list(SANDBOX))
async def test_a_nested_repository_is_unknown_ground(where, canary_root, monkeypatch):
    _sandbox_ready(where)
    canary = make_canary(canary_root, attack_settings(**SANDBOX[where]))
    isolate(monkeypatch, canary)
    nested = canary.proj / "vendor" / "lib"
    nested.mkdir(parents=True)
    assert _git(nested, "init", "-q").returncode == 0
    with open(nested / ".git" / "config", "a", encoding="utf-8") as handle:
        handle.write('[core]\n\tfsmonitor = "touch ' + str(_marker(canary)) + '; false"\n')
    _live(canary, nested, "git status")
    for mode in ("default", "plan", "dontAsk"):
        session = await open_session(canary, mode=mode)
        try:
            for command in ("cd vendor/lib && git status", "cd vendor && cd lib && git log"):
                found = await attempt(session, canary, "Bash", {"command": command})
                assert not _marker(canary).exists(), f"{mode}: {found.describe()}"
                assert found.denied and not found.ran, f"{mode}: {found.describe()}"
            found = await attempt(session, canary, "Bash", {"command": "git status"})  # the project's own
            assert found.ran and "On branch" in found.text(), found.describe()
        finally:
            await session.close()


@pytest.mark.parametrize("where", list(SANDBOX))
async def test_a_repository_the_model_writes_itself_in_accept_edits_is_unknown_ground(where, canary_root,
                                                                                      monkeypatch):
    _sandbox_ready(where)
    canary = make_canary(canary_root, attack_settings(**SANDBOX[where]))
    isolate(monkeypatch, canary)
    head = _git(canary.proj, "rev-parse", "HEAD").stdout.strip()
    x = canary.proj / "x"
    config = '[core]\n\tbare = true\n[diff "evil"]\n\ttextconv = "touch ' + str(_marker(canary)) + '; cat"\n'
    steps = [("Write", {"file_path": str(x / "config"), "content": config}),
             ("Write", {"file_path": str(x / "HEAD"), "content": "ref: refs/heads/main\n"}),
             ("Write", {"file_path": str(x / "refs" / "heads" / "main"), "content": head + "\n"}),
             ("Write", {"file_path": str(x / "info" / "attributes"), "content": "*.txt diff=evil\n"}),
             ("Bash", {"command": "cp -r .git/objects x/objects"})]
    session = await open_session(canary, mode="acceptEdits")
    try:
        for tool, data in steps:
            found = await attempt(session, canary, tool, data)
            assert found.ran and not found.denied, found.describe()
        _live(canary, x, "git log -p")
        for command in ("cd x && git log -p", "cd x; git show", "git -C x log -p", "git --git-dir=x log -p",
                        "cd x && git diff HEAD~0 HEAD"):
            found = await attempt(session, canary, "Bash", {"command": command})
            assert not _marker(canary).exists(), found.describe()
            assert found.denied and not found.ran, found.describe()
    finally:
        await session.close()


# ---- the guard's own answers ----------------------------------------------------------------------

def test_harmless_configuration_of_the_projects_own_repository_does_not_ask(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    assert _git(proj, "init", "-q").returncode == 0
    with open(proj / ".git" / "config", "a", encoding="utf-8") as handle:
        handle.write('[remote "origin"]\n\turl = https://example.com/x.git\n'
                     '\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
                     '[branch "main"]\n\tremote = origin\n[user]\n\tname = someone\n[alias]\n\tst = !git status\n'
                     '[core]\n\tfsmonitor = x\n\tpager = less\n[pager]\n\tlog = x\n')
    (proj / "src").mkdir()
    assert git_problem([str(proj), str(proj / "src")], [str(proj)], str(tmp_path)) is None
    # a directory in no repository at all: git has no repository configuration to run
    assert git_problem([str(tmp_path)], [str(proj)], str(tmp_path)) is None


@pytest.mark.parametrize("key", ["diff.external", "diff.x.textconv", "diff.x.command", "filter.x.clean",
                                 "filter.x.smudge", "filter.x.process", "merge.x.driver", "gpg.program",
                                 "gpg.ssh.program", "core.sshCommand", "core.gitProxy", "credential.https://h.helper",
                                 "core.worktree", "FILTER.x.CLEAN", "difftool.x.cmd", "man.x.path",
                                 "browser.x.cmd", "core.askPass", "remote.origin.uploadpack"])
def test_keys_that_name_a_program_nothing_switches_off_ask(key):
    assert key_problem(key, "prog") is not None


@pytest.mark.parametrize("key", ["core.fsmonitor", "core.pager", "pager.log", "core.hooksPath", "alias.x",
                                 "core.editor", "remote.origin.url", "user.name", "core.excludesFile"])
def test_keys_the_run_environment_switches_off_or_that_run_nothing_do_not_ask(key):
    assert key_problem(key, "!prog" if key == "alias.x" else "prog") is None


def test_any_other_key_that_runs_a_shell_command_asks():
    assert key_problem("submodule.x.update", "!touch pwned") is not None


def test_an_unreadable_include_or_configuration_asks(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    assert _git(proj, "init", "-q").returncode == 0
    config = proj / ".git" / "config"
    with open(config, "a", encoding="utf-8") as handle:
        handle.write("[include]\n\tpath = ../inc\n")
    (proj / "inc").write_text("[broken\n")
    assert "cannot read" in (git_problem([str(proj)], [str(proj)], str(tmp_path)) or "")
    (proj / "inc").write_text("[include]\n\tpath = inc\n")  # includes itself: followed once
    assert git_problem([str(proj)], [str(proj)], str(tmp_path)) is None


def test_gitmodules_that_make_git_look_inside_a_submodule_ask(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    assert _git(proj, "init", "-q").returncode == 0
    (proj / ".gitmodules").write_text('[submodule "s"]\n\tpath = s\n\turl = ./s\n\tignore = dirty\n')
    assert git_problem([str(proj)], [str(proj)], str(tmp_path)) is None
    (proj / ".gitmodules").write_text('[submodule "s"]\n\tpath = s\n\turl = ./s\n\tignore = none\n')
    assert "submodule" in (git_problem([str(proj)], [str(proj)], str(tmp_path)) or "")


def test_the_run_environment_comes_after_the_users_own_command_line_configuration():
    env = run_env({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "me",
                   "GIT_EXTERNAL_DIFF": "x", "PATH": "/usr/bin"})
    assert env["GIT_CONFIG_KEY_0"] == "user.name" and env["GIT_CONFIG_KEY_1"] == "core.fsmonitor"
    assert int(env["GIT_CONFIG_COUNT"]) == 1 + len([k for k in env if k.startswith("GIT_CONFIG_KEY_")]) - 1
    assert "GIT_EXTERNAL_DIFF" not in env and env["GIT_PAGER"] == "cat"


def test_a_submodule_with_a_planted_configuration_runs_nothing_under_the_run_environment(tmp_path):
    """git status looks into a submodule (a gitlink with a repository in its place): the run
    environment keeps it from running the submodule's filters and fsmonitor."""
    marker = tmp_path / MARK
    proj = tmp_path / "proj"
    sub = proj / "sub"
    sub.mkdir(parents=True)
    assert _git(proj, "init", "-q").returncode == 0
    assert _git(sub, "init", "-q").returncode == 0
    (sub / "a.txt").write_text("x\n")
    (sub / ".gitattributes").write_text("* filter=evil\n")
    _commit(sub, "sub")
    head = _git(sub, "rev-parse", "HEAD").stdout.strip()
    assert _git(proj, "update-index", "--add", "--cacheinfo", f"160000,{head},sub").returncode == 0
    _commit(proj, "super")
    with open(sub / ".git" / "config", "a", encoding="utf-8") as handle:
        handle.write(f'[filter "evil"]\n\tclean = "touch {marker}; cat"\n'
                     f'[core]\n\tfsmonitor = "touch {marker}; false"\n')
    (sub / "a.txt").write_text("x\ny\n")
    _git(proj, "status")
    assert marker.exists()  # live
    marker.unlink()
    safe = run_env({**os.environ, "GIT_CONFIG_NOSYSTEM": "1"})
    done = subprocess.run(["git", "status", "--short"], cwd=proj, env=safe, capture_output=True, text=True,
                          check=False)
    assert not marker.exists(), done.stderr
    assert done.returncode == 0


def test_every_read_only_program_was_reviewed_for_configuration_that_runs_something():
    from tui_app.runtime.permissions.bash.programs import CONFIGURATION, PROGRAMS, SPECIAL

    assert set(CONFIGURATION) == set(PROGRAMS) | set(SPECIAL)


def test_a_relative_ripgrep_config_is_the_projects_and_is_dropped():
    assert "RIPGREP_CONFIG_PATH" not in run_env({"RIPGREP_CONFIG_PATH": ".ripgreprc"})
    assert run_env({"RIPGREP_CONFIG_PATH": "/home/u/.ripgreprc"})["RIPGREP_CONFIG_PATH"] == "/home/u/.ripgreprc"
