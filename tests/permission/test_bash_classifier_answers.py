"""The read-only classifier's answers that the Bash rules build on, one row per line a user or an
agent writes: where the line may end up (`dirs`, None after a move to a place only known at run
time), which of its commands are known read-only ones (`known`: the others need a rule or a
question), and which syntax may run commands no simple command shows (`hidden`: only an exact
rule allows such a line).

No file is needed: the project is a directory that need not exist."""

from __future__ import annotations

import pytest

from tui_app.runtime.permissions.bash.parse import parse_command
from tui_app.runtime.permissions.bash.readonly import classify
from tui_app.runtime.permissions.bash.words import Where

HERE = Where(("/proj",), "/home/u")


def answer(line):
    return classify(parse_command(line), HERE)


@pytest.mark.parametrize("line, dirs", [
    ("ls", ("/proj",)),
    ("npm test; ls", ("/proj",)),
    ("cd src && ls", ("/proj", "/proj/src")),
    ("cd && ls", ("/proj", "/home/u")),
    ("cd /etc; cd ..", ("/proj", "/etc", "/")),
    # moved to a place only known at run time: the rules cannot tell where a later write goes
    ("cd -", None),
    ("cd $X; ls", None),
    ("pushd $X", None),
    ("popd", None),
    ("cd $X; npm test; make", None),  # a later command does not bring the shell back
    ("cd src; cd -", None),
])
def test_where_the_line_may_end_up(line, dirs):
    assert answer(line).dirs == dirs


@pytest.mark.parametrize("line, known", [
    ("ls", [True]),
    ("git status && npm test", [True, False]),
    ("ls; npm test; cat $X", [True, False, False]),
    ("cd - && cat notes", [True, False]),  # reads a file in a directory only known at run time
    ("cd - && ls", [True, False]),
    ("cd - && cat /proj/notes", [True, True]),  # an absolute path is known wherever the shell is
    ("cat notes | wc -l < $X", [False, False]),  # the line's input comes from a file only known at run time
])
def test_which_commands_are_known_read_only(line, known):
    assert answer(line).known == known


@pytest.mark.parametrize("line, hidden", [
    ("ls", []),
    ("echo hi && [[ -v 'a[$(rm x)]' ]]", ["test_command"]),
    ("echo $(( 1 + 1 ))", ["arithmetic_expansion"]),
    ("echo ${x:-y}", ["expansion_with_operator"]),
    ("a['$(touch p)']=1", ["subscript"]),
    ("(( x ))", ["arithmetic_command"]),
    ("for ((i = 0; i < 1; i++)); do ls; done", ["c_style_for_statement"]),
])
def test_syntax_that_may_run_commands_no_simple_command_shows(line, hidden):
    assert answer(line).hidden == hidden


@pytest.mark.parametrize("line, why", [
    ("echo $X", "`$X` is only known at run time"),
    ("~/bin/cat notes", "the program `~/bin/cat` is only known at run time"),
    ("LC_ALL=C", "it only sets variables"),
    ("cd - && ls", "it reads a directory only known at run time (after `cd`)"),
])
def test_why_not_read_only(line, why):
    reading = answer(line)
    assert (reading.read_only, reading.reason) == (False, why)


def test_after_cd_minus_an_absolute_path_is_still_read():
    reading = answer("cd - && cat /etc/hostname")
    assert reading.read_only and [r.paths for r in reading.reads] == [("/etc/hostname",)]
