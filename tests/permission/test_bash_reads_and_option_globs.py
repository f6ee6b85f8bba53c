"""What the read-only classifier says of a line: what it reads (so that deny rules and the
working-directory check see it), why a line is not read-only, and globs that would hand a program
an option.

A file named like an option (`-opwned`, planted by whoever could write in the project) turns
`sort *` into `sort -opwned …`, which writes the file `pwned`: a word that starts with a wildcard
and may match such a name is never read-only. A word that starts with a quoted character can only
match names that start with that character, so it stays read-only."""

from __future__ import annotations

import pytest

from tui_app.runtime.permissions.bash.parse import parse_command
from tui_app.runtime.permissions.bash.readonly import READ_ONLY_BASH_FLAGS, bash_flags, classify
from tui_app.runtime.permissions.bash.words import Where


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("planted")
    (tmp_path / "notes.txt").write_text("n")
    (tmp_path / "-opwned").write_text("")
    (tmp_path / "src").mkdir()
    return Where((str(tmp_path),), "/home/nobody")


@pytest.mark.parametrize("line", [
    "sort *", "sort *.txt", "sort [!.]*", "sort ?*", "sort ??*", "wc -l [-_]*",
])
def test_a_glob_that_may_expand_into_an_option_is_not_read_only(planted, line):
    reading = classify(parse_command(line), planted)
    assert not reading.read_only
    assert "matches a file whose name starts with `-`" in reading.reason


@pytest.mark.parametrize("line", [
    "ls '[wip]'*", "ls '*'*", "ls \"?\"*", "ls notes*", "ls src/*", "ls ./*",
])
def test_a_glob_that_cannot_start_with_a_dash_stays_read_only(planted, line):
    reading = classify(parse_command(line), planted)
    assert reading.read_only, reading.reason


@pytest.mark.parametrize("line, reads", [
    # (what is read, is everything below it read, which command reads it: -1 a redirection of the line)
    ("cat notes.txt", [("notes.txt", False, 0)]),
    ("cat -", [(None, False, 0)]),  # the input, no file
    ("wc -l < notes.txt", [("notes.txt", False, -1)]),
    ("ls src; cat notes.txt", [("src", False, 0), ("notes.txt", False, 1)]),
    ("grep -r x src", [("src", True, 0)]),
    ("rg x", [(".", True, 0)]),
    ("cat notes.txt | grep x < src/in", [("notes.txt", False, 0), ("src/in", False, -1)]),
])
def test_what_a_line_reads(planted, line, reads):
    reading = classify(parse_command(line), planted)
    assert reading.read_only, reading.reason
    root = planted.dirs[0]
    expected = [(((f"{root}/{path}".rstrip("/.") if path != "." else root),) if path else (), recursive, index)
                for path, recursive, index in reads]
    assert [(r.paths, r.recursive, r.command) for r in reading.reads] == expected


def test_a_bare_cd_goes_home_and_what_follows_is_read_there_too(planted):
    reading = classify(parse_command("cd && cat .bashrc"), planted)
    assert reading.read_only
    assert [r.paths for r in reading.reads] == [(f"{planted.dirs[0]}/.bashrc", "/home/nobody/.bashrc")]
    assert reading.dirs == (planted.dirs[0], "/home/nobody")


@pytest.mark.parametrize("line, why", [
    ("LC_ALL=C", "it only sets variables"),
    ("TERM=dumb", "it only sets variables"),
    ("~/bin/cat notes", "the program `~/bin/cat` is only known at run time"),
    ('"$PWD"/cat notes', "the program `\"$PWD\"/cat` is only known at run time"),
    ("cd - && ls", "it reads a directory only known at run time (after `cd`)"),
    ("cd - && wc -l < notes", "it reads `notes`, a path only known at run time"),
    ("wc -l < $X", "it reads `$X`, a path only known at run time"),
    ("echo $X", "`$X` is only known at run time"),
    ("PAGER=less git log", "it sets PAGER"),
])
def test_why_a_line_is_not_read_only(planted, line, why):
    reading = classify(parse_command(line), planted)
    assert (reading.read_only, reading.reason) == (False, why)
    assert bash_flags(line) != READ_ONLY_BASH_FLAGS


@pytest.mark.parametrize("line", ["LANG=C sort notes.txt", "TZ=UTC date", "LC_ALL=C ls", "COLUMNS=80 ls"])
def test_locale_and_display_settings_keep_a_line_read_only(planted, line):
    assert classify(parse_command(line), planted).read_only
    assert bash_flags(line) == READ_ONLY_BASH_FLAGS
