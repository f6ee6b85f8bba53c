"""Read/Edit rules as a user writes them (gitignore-style, Claude Code's anchors) against the files a
model asks for: what each spelling of a rule covers, and what it leaves alone.

Each row is a rule from a settings file, a call, and the decision Vigil must give. A rule that
covers too little lets a model read what the user denied; one that covers too much asks (or
denies) where nothing was meant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.perm_specs import BASH, EDIT, GREP, READ
from tui_app.config import load_settings
from tui_app.runtime.permissions.decision import PermissionDecision, PermissionQuery
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import RuleError, make_rule

#: the files of the project (under tmp_path/proj) and of the home directory (tmp_path/home)
PROJECT_FILES = ("secret/key", "sub/secret/key.txt", "sub/prod.env", "prod.env", "sub/notes.md", "build",
                 "logs/app.log", "notes*", "notes.txt", "secret.txt")
HOME_FILES = ("notes.txt",)


@pytest.fixture
def place(tmp_path) -> tuple[Path, Path]:
    proj, home = tmp_path / "proj", tmp_path / "home"
    for base, names in ((proj, PROJECT_FILES), (home, HOME_FILES)):
        for name in names:
            (base / name).parent.mkdir(parents=True, exist_ok=True)
            (base / name).write_text("x\n")
    return proj, home


def policy_for(proj: Path, home: Path, mode: str = "default", **rules: list[str]) -> RulePolicy:
    """The rules as the project's settings file gives them (`/path` is relative to the project)."""
    return RulePolicy(cwd=str(proj), home=str(home), mode=mode,  # type: ignore[arg-type]
                      rules=[make_rule(text, behavior, "project settings", str(proj))  # type: ignore[arg-type]
                             for behavior, texts in rules.items() for text in texts])


def decide(policy: RulePolicy, spec, data: dict) -> PermissionDecision:
    return policy.decide(PermissionQuery(spec, data, spec.flags_of(data), policy.cwd))


def read(path: str) -> tuple:
    return READ, {"file_path": path}


def bash(command: str) -> tuple:
    return BASH, {"command": command}


# rules, the call (paths relative to the project; `~/` the home; `@/` tmp_path), the decision
ROWS = [
    # `~` alone is the home directory with everything in it, not a file named "~" in the project
    ("deny", "Read(~)", read("~/notes.txt"), "deny"),
    ("deny", "Read(~)", read("sub/notes.md"), "allow"),
    ("allow", "Read(~)", read("~/notes.txt"), "allow"),  # outside the project, but the rule names it
    # `//` alone is the whole filesystem
    ("deny", "Read(//)", read("@/home/notes.txt"), "deny"),
    ("deny", "Read(//)", read("sub/notes.md"), "deny"),
    # a bare directory name with a trailing slash matches that directory at any depth ...
    ("deny", "Read(secret/)", read("sub/secret/key.txt"), "deny"),
    ("deny", "Read(secret/)", read("secret/key"), "deny"),
    # ... and only directories: a file of that name is not covered
    ("deny", "Read(build/)", read("build"), "allow"),
    ("deny", "Read(logs/)", read("logs/app.log"), "deny"),
    ("deny", "Read(logs/)", (GREP, {"pattern": "x", "path": "logs"}), "deny"),
    # `**.env` has no slash: like `*.env` (git's rule for `**` that is not a whole segment) it is a
    # bare name, so it matches at any depth, as `*.env` does
    ("deny", "Read(**.env)", read("sub/prod.env"), "deny"),
    ("deny", "Read(**.env)", read("prod.env"), "deny"),
    ("deny", "Read(*.env)", read("sub/prod.env"), "deny"),
    ("deny", "Read(./**.env)", read("sub/prod.env"), "allow"),  # `./` anchors it at the top
    # an escaped star is a literal star: the rule names the file `notes*`, nothing else
    ("deny", r"Read(./notes\*)", read("notes*"), "deny"),
    ("deny", r"Read(./notes\*)", read("notes.txt"), "allow"),
    ("deny", r"Read(./notes\*)", bash("grep -r TODO sub"), "allow"),
    ("deny", r"Read(./notes\*)", bash("grep -r TODO ."), "ask"),  # the search would read `notes*`
    # the filesystem root is no file of any rule: searching it is not "reading .env"
    ("deny", "Read(.env)", (GREP, {"pattern": "x", "path": "/"}), "ask"),  # asks: outside the project
]


@pytest.mark.parametrize("behavior, rule, call, expect", ROWS, ids=[f"{r[1]}-{r[2][1]}" for r in ROWS])
def test_what_a_path_rule_covers(place, behavior, rule, call, expect):
    proj, home = place
    spec, data = call
    data = {k: _where(v, proj, home) for k, v in data.items()}
    got = decide(policy_for(proj, home, **{behavior: [rule]}), spec, data)
    assert got.behavior == expect, got.reason
    if expect == "deny":
        assert got.rule == rule


def _where(value: str, proj: Path, home: Path) -> str:
    if value.startswith("~/"):
        return str(home / value[2:])
    if value.startswith("@/"):
        return str(proj.parent / value[2:])
    if value.startswith("/") or " " in value:
        return value
    return str(proj / value)


def test_the_filesystem_root_is_no_file_a_deny_rule_names(place):
    """In bypassPermissions nothing asks about where a search goes: a Grep over `/` runs (each file
    it finds is checked against the deny rules on its own)."""
    proj, home = place
    got = decide(policy_for(proj, home, "bypassPermissions", deny=["Read(.env)"]), GREP, {"pattern": "x", "path": "/"})
    assert got.behavior == "allow", got.reason


def test_a_rule_given_without_a_settings_file_is_relative_to_the_project(place):
    """`/secret.txt` is relative to the file the rule came from; a rule the policy is given
    without one (a caller's own list) is relative to the project."""
    proj, home = place
    policy = RulePolicy(cwd=str(proj / "sub"), project_dir=str(proj), home=str(home),
                        rules=[make_rule("Read(/secret.txt)", "deny")])
    assert decide(policy, READ, {"file_path": str(proj / "secret.txt")}).behavior == "deny"
    assert decide(policy, READ, {"file_path": str(proj / "sub" / "notes.md")}).behavior == "allow"


# ---- a project whose own name holds glob characters ------------------------------------------------

@pytest.mark.parametrize("call, expect", [
    (read("secret/key"), "deny"),
    (bash("cat secret/key"), "deny"),
    (bash("grep -r TODO ."), "ask"),        # the search would read secret/key
    (bash("grep -r TODO sub"), "allow"),    # nothing the rule covers is below sub/
    (read("sub/notes.md"), "allow"),
])
@pytest.mark.parametrize("name", ["proj[1]", "proj*", "we\\ird"])
def test_a_project_named_with_glob_characters_keeps_its_rules(tmp_path, name, call, expect):
    """`Read(./secret/**)` in a project at `…/proj[1]`: the project's own name is no pattern."""
    proj, home = tmp_path / name, tmp_path / "home"
    for sub in ("secret/key", "sub/notes.md"):
        (proj / sub).parent.mkdir(parents=True, exist_ok=True)
        (proj / sub).write_text("x\n")
    (tmp_path / "proj1" / "secret").mkdir(parents=True)  # what `proj[1]` would match as a pattern
    spec, data = call
    data = {k: _where(v, proj, home) for k, v in data.items()}
    got = decide(policy_for(proj, home, deny=["Read(./secret/**)"]), spec, data)
    assert got.behavior == expect, got.reason


# ---- searches that reach a denied file -------------------------------------------------------------

def test_a_recursive_search_of_the_whole_filesystem_asks_under_a_read_deny(place):
    """`Bash(grep *)` lets grep run anywhere; `grep -r password /` would still read the denied
    files (there is no sandbox here to hide them), so it asks."""
    proj, home = place
    policy = policy_for(proj, home, allow=["Bash(grep *)"], deny=["Read(./secret/**)"])
    got = decide(policy, BASH, {"command": "grep -r password /"})
    assert (got.behavior, got.decided_by) == ("ask", "guard") and "Read(./secret/**)" in got.reason
    assert decide(policy, BASH, {"command": "grep -r password sub"}).behavior == "allow"


# ---- a rule that is no pattern --------------------------------------------------------------------

@pytest.mark.parametrize("rule", ["Read(./notes\\)", "Edit(src\\)", "Grep(./a\\\\\\)"])
def test_a_path_rule_ending_in_a_lone_backslash_is_refused(rule):
    with pytest.raises(RuleError, match="gitignore"):
        make_rule(rule, "deny")


@pytest.mark.parametrize("rule", ["Read(./notes\\\\)", "Bash(echo \\)", "Read(./a\\*)"])
def test_an_escaped_backslash_or_another_tools_backslash_is_a_rule(rule):
    assert make_rule(rule, "deny").text == rule


def test_a_settings_file_with_such_a_deny_rule_is_reported_and_asks(place, tmp_path):
    """The rule cannot be followed: every decision it was asked about failed. Now it is reported
    where it stands, and everything it could have denied asks (a deny list is never silently
    shorter)."""
    proj, home = place
    (proj / ".vigil").mkdir()
    (proj / ".vigil" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(./notes\\)"]}}))
    loaded = load_settings(cwd=str(proj), home=home, config_dir=tmp_path / "config", no_claude_settings=True)
    assert any("gitignore" in e["reason"] for e in loaded.errors), loaded.errors
    policy = RulePolicy(cwd=str(proj), home=str(home), rules=loaded.rules, guards=loaded.guards)
    for spec, data in (read(str(proj / "notes.txt")), bash("cat notes.txt")):
        assert decide(policy, spec, data).behavior == "ask"
    warnings: list[str] = []
    policy.on_warning = lambda code, _message: warnings.append(code)
    assert policy.add_rules("deny", ["Read(./x\\)"], "session") == [] and warnings == ["rule_invalid"]


# ---- the rule an "always allow" saves --------------------------------------------------------------

@pytest.mark.parametrize("cwd, path, rule", [
    ("{proj}", "{proj}/sub/a.txt", "Edit(/sub/a.txt)"),
    ("{proj}/", "{proj}/sub/a.txt", "Edit(/sub/a.txt)"),  # the project given with a trailing slash
    ("{proj}", "{proj}/a*b.txt", "Edit(/a\\*b.txt)"),    # a star in a name is escaped: only that file
    # at the filesystem root the rule says so (`//`): `/etc/x` would depend on which file it is saved in
    ("/", "/etc/vigil-test.conf", "Edit(//etc/vigil-test.conf)"),
])
def test_the_suggested_edit_rule_names_exactly_the_file(place, cwd, path, rule):
    proj, home = place
    fill = {"proj": str(proj)}
    policy = RulePolicy(cwd=cwd.format(**fill), home=str(home))
    got = decide(policy, EDIT, {"file_path": path.format(**fill), "old_string": "a", "new_string": "b"})
    assert got.behavior == "ask" and got.suggested_rules == (rule,), got


@pytest.mark.parametrize("lost, spec, data, expect", [
    # a Read deny also stops the commands that read the file and edits of it ...
    ("Read(./notes\\)", BASH, {"command": "cat notes.txt"}, "ask"),
    ("Read(./notes\\)", EDIT, {"file_path": "notes.txt", "old_string": "x", "new_string": "y"}, "ask"),
    # ... an Edit deny the commands that write it
    ("Edit(./notes\\)", BASH, {"command": "echo hi > notes.txt"}, "ask"),
    ("Write(./notes\\)", BASH, {"command": "echo hi > notes.txt"}, "ask"),
    # what such a rule could never deny runs as before (a command asks whatever it does: the guard
    # knows the tool, not what the lost rule would have matched)
    ("Edit(./notes\\)", READ, {"file_path": "notes.txt"}, "allow"),
])
def test_a_lost_path_deny_asks_for_every_tool_it_reaches(place, tmp_path, lost, spec, data, expect):
    """In acceptEdits (edits and read-only commands run unasked) with a deny rule that could not
    be loaded: whatever that rule could have denied asks."""
    proj, home = place
    (proj / ".vigil").mkdir()
    (proj / ".vigil" / "settings.json").write_text(json.dumps({"permissions": {"deny": [lost]}}))
    loaded = load_settings(cwd=str(proj), home=home, config_dir=tmp_path / "config", no_claude_settings=True)
    policy = RulePolicy(cwd=str(proj), home=str(home), mode="acceptEdits", rules=loaded.rules, guards=loaded.guards)
    data = {k: str(proj / v) if k == "file_path" else v for k, v in data.items()}
    got = decide(policy, spec, data)
    assert got.behavior == expect, got.reason
    if expect == "ask":
        assert got.decided_by == "guard" and "could not be loaded" in got.reason
