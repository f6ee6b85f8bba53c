"""A Bash line whose file or directory is only known at run time never runs unasked.

`cd -` goes wherever OLDPWD points, `cd $X` wherever the environment says; a `< $X` redirection
reads whatever file the environment names. After such a step neither the deny rules nor the
working-directory check can see what is read or written, so Vigil asks — while what does not
depend on it (an absolute path, a line without the unknown step) still runs unasked.

Each row goes through the real policy (`RulePolicy.decide`) with the real Bash tool's spec."""

from __future__ import annotations

import pytest

from tests.perm_specs import BASH
from tui_app.runtime.permissions.decision import PermissionQuery
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("project")
    (tmp_path / "notes").write_text("n")
    (tmp_path / ".env").write_text("SECRET=1")
    (tmp_path / "src").mkdir()
    return tmp_path


def decide(project, command, mode="default", allow=(), deny=()):
    rules = [make_rule(r, "allow") for r in allow] + [make_rule(r, "deny") for r in deny]
    policy = RulePolicy(cwd=str(project), mode=mode, rules=rules, home="/home/nobody")
    data = {"command": command.replace("{project}", str(project))}
    return policy.decide(PermissionQuery(BASH, data, BASH.flags_of(data), str(project)))


@pytest.mark.parametrize("command, deny", [
    # an input redirection from a file the environment names (a credentials file …)
    ("cat < $GOOGLE_APPLICATION_CREDENTIALS", ()),
    ('wc -l < "$X"', ()),
    ("cat < ~root/.ssh/id_rsa", ()),
    ("cat < se{cret,x}/key", ()),
    # … or from a file in a directory only known at run time, even one a deny rule may cover
    ("cd - && wc -l < .env", ("Read(**/.env)",)),
    ("cd - && cat < ~/.ssh/id_rsa", ()),
    # a command reading in a directory only known at run time
    ("cd - && cat notes", ()),
    ("cd - && cat .env", ("Read(**/.env)",)),
    ("cd - && ls", ()),
    ("cd - && grep -r TOKEN", ()),
    ("cd - && cat *.txt", ()),
    # a word only known at run time: the value of a secret, an option smuggled in
    ("echo $ANTHROPIC_API_KEY", ()),
    ("git log $X", ()),
])
def test_what_is_read_from_a_place_only_known_at_run_time_asks(project, command, deny):
    decision = decide(project, command, deny=deny)
    assert decision.behavior == "ask", (decision.reason, decision.decided_by)


@pytest.mark.parametrize("command", [
    "cd - && cat {project}/notes",  # an absolute path is the same wherever the line is
    "wc -l < notes",
    "cd / && cat -",  # `-` is the input, no file
])
def test_what_does_not_depend_on_the_unknown_place_runs_unasked(project, command):
    decision = decide(project, command)
    assert (decision.behavior, decision.decided_by, decision.reason) == ("allow", "tool", "read-only")


@pytest.mark.parametrize("command, allow", [
    # acceptEdits lets a write inside the working directory run; after `cd -`, `cd $X`, `pushd $X`
    # or `popd` the shell is somewhere else, and `> notes` may be ~/.bashrc's directory's notes
    ("cd - && echo hi > notes", ()),
    ("cd $X && echo hi > notes", ("Bash(cd *)",)),
    ("pushd $X && echo hi > notes", ("Bash(pushd *)",)),
    ("popd && echo hi > notes", ("Bash(popd)",)),
    # the unknown directory is not forgotten by a later command
    ("cd $X && npm test && echo hi > notes", ("Bash(cd *)", "Bash(npm test)")),
    ("cd $X; npm test; make; echo hi > notes", ("Bash(cd *)", "Bash(npm test)", "Bash(make)")),
])
def test_accept_edits_does_not_allow_a_write_after_a_move_to_an_unknown_directory(project, command, allow):
    decision = decide(project, command, mode="acceptEdits", allow=allow)
    assert decision.behavior == "ask", decision.reason
    assert "only known at run time" in decision.reason


def test_accept_edits_allows_the_same_write_where_the_shell_is_known(project):
    decision = decide(project, "echo hi > notes", mode="acceptEdits")
    assert (decision.behavior, decision.decided_by) == ("allow", "mode")


def test_an_allow_rule_for_one_command_does_not_let_another_read_outside_through_a_redirection(project):
    # the redirection belongs to the line: every command reading it must be allowed by a rule
    decision = decide(project, "cat notes; wc -l < /etc/hostname", allow=("Bash(cat *)",))
    assert (decision.behavior, decision.decided_by) == ("ask", "guard")
    assert "/etc/hostname is outside the working directories" in decision.reason
    both = decide(project, "cat notes; wc -l < /etc/hostname", allow=("Bash(cat *)", "Bash(wc *)"))
    assert both.behavior == "allow"
