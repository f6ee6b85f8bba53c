"""Shell splitting (tree-sitter-bash) and the read-only classifier the Bash tool's flags come from."""

from __future__ import annotations

import pytest

from tui_app.runtime.permissions.bash.parse import parse_command
from tui_app.runtime.permissions.bash.readonly import (
    BASH_FLAGS,
    DESTRUCTIVE_BASH_FLAGS,
    READ_ONLY_BASH_FLAGS,
    bash_flags,
    classify,
)
from tui_app.runtime.permissions.bash.words import Where
from tui_app.runtime.scheduler import plan_groups


@pytest.mark.parametrize("line, parts", [
    ("git status && npm test", ["git status", "npm test"]),
    ("a; b\nc || d | e |& f & g", ["a", "b", "c", "d", "e", "f", "g"]),
    ("echo $(rm -rf /) `ls`", ["echo $(rm -rf /) `ls`", "rm -rf /", "ls"]),
    ("(cd x && make) > log", ["cd x", "make"]),
    ("if true; then rm x; fi", ["true", "rm x"]),
    ("for f in *; do gzip $f; done", ["gzip $f"]),
    ("f() { rm x; }; f", ["rm x", "f"]),
    ("x=$(curl y)", ["x=$(curl y)", "curl y"]),
    ("PATH=/tmp/evil; ls", ["PATH=/tmp/evil", "ls"]),
    ("export PATH=/x && unset HOME", ["export PATH=/x", "unset HOME"]),
    ("timeout -s KILL 10 nice -n 5 npm test", ["npm test"]),
    ("FOO=1 make", ["FOO=1 make"]),
    ("bash -c 'ls; curl x'", ["bash -c 'ls; curl x'", "ls", "curl x"]),
    ("sh -ec \"rm -rf build\"", ["sh -ec \"rm -rf build\"", "rm -rf build"]),
    ("eval 'curl x'", ["eval 'curl x'", "curl x"]),
    ("cat <<EOF > f\n$(rm x)\nEOF", ["cat", "rm x"]),
    ("find . -print0 | xargs rm", ["find . -print0", "rm"]),
    ("echo   a    b", ["echo a b"]),
    ("command -v git", ["command -v git"]),
])
def test_commands_are_split_where_a_shell_would_run_them(line, parts):
    parsed = parse_command(line)
    assert parsed.ok, parsed.error
    assert [c.full_text for c in parsed.commands] == parts


def test_redirect_targets_and_descriptor_copies():
    parsed = parse_command("make > out.log 2>&1; echo x >> ~/.zshrc hi; cat < in.txt; ls 2>/dev/null")
    writes = [(r.op, r.target.value) for r in parsed.redirects if r.writes]
    assert writes == [(">", "out.log"), (">>", "~/.zshrc")]
    assert [r.target.value for r in parsed.redirects if r.reads] == ["in.txt"]
    assert [c.full_text for c in parsed.commands][1] == "echo x hi"  # words after the target are arguments


def test_quotes_and_escapes_become_literal_values():
    cmd = parse_command("rm \"a b\" 'c'd e\\ f $HOME").commands[0]
    assert [w.value for w in cmd.words] == ["rm", "a b", "cd", "e f", None]


@pytest.mark.parametrize("line, why", [
    ("echo 'unterminated", "not valid shell"),
    ("ls (", "not valid shell"),
    ("x" * 10_001, "longer than 10000"),
    ("bash -c \"$SCRIPT\"", "run time"),
    ("eval $CMD", "run time"),
])
def test_lines_that_cannot_be_read_say_why(line, why):
    parsed = parse_command(line)
    assert not parsed.ok and why in (parsed.error or "")
    assert parsed.commands == ()


@pytest.mark.parametrize("line", [
    "git status", "git --no-pager log --oneline -5", "git diff HEAD~1", "git show HEAD:README.md", "git branch",
    "git branch --list 'feat*'", "ls -la | wc -l", "cat a b | grep -n x | head -3", "grep -rn foo src 2>/dev/null",
    "rg -n TODO", "find . -name '*.py' -type f", "echo $PWD", "du -sh . && df -h", "LC_ALL=C sort notes",
    "diff a b", "stat a", "which python", "head -c 100 f", "tail -n 20 log", "cd src && ls", "date +%s",
    "hostname -f",
])
def test_read_only_commands_get_read_only_flags(line):
    assert bash_flags(line) == READ_ONLY_BASH_FLAGS


@pytest.mark.parametrize("line", [
    "npm test", "echo x > f", "ls > listing", "git commit -m x", "git branch new-feature", "git branch -d old",
    "git diff --output=patch", "git log --ext-diff", "find . -delete", "find . -exec cat {} +", "sort -o s a",
    "sort -no s a", "rg --pre=zcat x", "FOO=1 ls",
    "PATH=/tmp/evil; ls", "export PATH=/x; git status", "date -s 2020-01-01", "hostname evil",
    "echo $(touch x)", "ls; make", "ls (", "tee out",
    # a substitution is never read-only, even one whose command is (it is a command run for a word)
    "echo $(pwd)",
])
def test_anything_that_may_write_or_run_is_not_read_only(line):
    flags = bash_flags(line)
    assert not flags.read_only and flags.needs_approval and not flags.concurrency_safe


@pytest.mark.parametrize("line", ["rm -rf build", "rm -f x", "git reset --hard", "git push --force", "git clean -fd",
                                  "dd if=/dev/zero of=x"])
def test_destructive_commands_are_high_risk(line):
    assert bash_flags(line) == DESTRUCTIVE_BASH_FLAGS


def test_rm_without_force_is_the_usual_bash_risk():
    assert bash_flags("rm notes") == BASH_FLAGS


def test_git_status_groups_with_reads_and_rm_does_not():
    flags = [bash_flags(c) for c in ("git status", "ls", "rm -rf build", "git diff")]
    assert plan_groups([f.runs_in_parallel for f in flags], 10) == [[0, 1], [2], [3]]


# ---- the classifier cannot be talked into running things (issue 14) --------------------------------

@pytest.mark.parametrize("line, why", [
    # bash evaluates an array subscript — and a $( ) in it, even single-quoted — in these
    ("test -v x", "subscript"), ("[ -v x ]", "subscript"), ("test -R x", "subscript"),
    ("test -n 'a[$(touch p)]'", "subscript"), ("[ 'a[`touch p`]' = x ]", "subscript"),
    ("printf -v x y", "printf -v"), ("printf -vx y", "printf -v"), ("printf '%s' 'a[$(touch p)]'", "subscript"),
    ("[[ -f x ]]", "test_command"), ("[[ -v 'a[$(touch p)]' ]]", "test_command"),
    ("echo $(( 1 + 1 ))", "arithmetic_expansion"), ("(( x ))", "arithmetic_command"),
    ("echo ${x:-y}", "expansion_with_operator"), ("echo \"${x:'a[$(touch p)]'}\"", "not valid shell"),
    ("echo ${!x}", "expansion_with_operator"), ("echo $_", "special_variable_name"),
    ("cat <<EOF\nx\nEOF", "heredoc"), ("echo x | xargs cat", "xargs"), ("nohup cat x", "nohup"),
    ("GIT_PAGER=x git log", "sets GIT_PAGER"), ("PAGER=x git log", "sets PAGER"), ("LANG=$X ls", "sets LANG"),
    # options: an allow-list per program, abbreviations and glued values included
    ("sort --out=x a", "--out"), ("sort --compress-program=sh a", "--compress-program"), ("sort -T . a", "-T"),
    ("sort --files0-from=- ", "--files0-from"), ("uniq a b", "at most 1"), ("date -f x", "-f"),
    ("date --se=2001-01-01", "--se"), ("date 0101", "operand"), ("hostname x", "at most 0"),
    ("hostname -F f", "-F"), ("grep -R x .", "-R"), ("grep -d recurse x .", "-d"), ("rg -L x", "-L"),
    ("rg -z x", "-z"), ("rg --pre=cat x", "--pre"), ("wc --files0-from=- ", "--files0-from"),
    ("du -X f .", "-X"), ("find . -L", "-L"), ("find . -execdir ls ;", "-execdir"), ("find . -fls x", "-fls"),
    ("git -c core.pager=x log", "git -c"), ("git -C .. status", "git -C"), ("git diff --no-index a b", "no-index"),
    ("git log --outp=x", "--outp"), ("git diff -Ox", "-Ox"), ("git branch new", "creates a branch"),
    ("diff -r a b", "-r"), ("ls --hyperlin", "--hyperlin"), ("cat --show-al x", "--show-al"),
    # words only known at run time
    ("cat $X", "run time"), ("cat ~user/x", "run time"), ("cat se{cret,x}/key", "run time"),
    ("cd $X && ls", "run time"), ("cd - && cat x", "run time"), ("$X x", "run time"),
    ("cat $'\\cA'", "run time"), ("cat \"$*\"", "special_variable_name"),
])
def test_what_is_never_read_only_and_why(line, why):
    reading = classify(parse_command(line))
    assert not reading.read_only
    assert why in reading.reason, reading.reason
    assert bash_flags(line) != READ_ONLY_BASH_FLAGS


@pytest.mark.parametrize("line", [
    "echo $HOME", "cat \"$PWD\"/notes", "cat ~/notes", "cat $'notes'", "git branch --list 'feat*'",
    "grep -rn -e foo -- src", "grep foo -r src", "sort -k2 -t, -rn notes", "ls -la --color=never",
    "head -5 notes", "tail -n +2 notes", "date -u +%F", "printf '%s\\n' a b", "test -f notes && cat notes",
    "[ -d src ] || ls", "find . -name '*.py' -type f -print", "git log --oneline -5 -- src", "cd src; ls -R",
    "diff -u a b", "wc -l < notes", "echo '$(not run)'",
])
def test_plain_reads_stay_read_only(line):
    reading = classify(parse_command(line))
    assert reading.read_only, reading.reason


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key").write_text("k")
    (tmp_path / "src").mkdir()
    (tmp_path / "-opwned").write_text("")
    return tmp_path


@pytest.mark.parametrize("line", [
    "cat se*/key", "cat secre?/key", "cat */key", "cat s[e]cret/key", "cat [^x]ecret/key", "cat [!x]ecret/key",
    "cat secret/*", "cd secret && cat key", "cd se* && cat key", "cat $PWD/secret/key", "cat ~+/secret/key",
    "cat $'\\x73ecret/key'", "cat $'\\163ecret/key'", "cat s\\ecret/key", "cat \"secret\"/'key'",
    "cat src/../secret/key", "cat < secret/key", "pushd secret && cat key", "git show HEAD:secret/key",
    "cat secret//key",
])
def test_reads_are_resolved_to_the_file_bash_would_open(tree, line):
    reading = classify(parse_command(line), Where((str(tree),), "/home/nobody"))
    opened = {p for r in reading.reads for p in r.paths or ()}
    assert str(tree / "secret" / "key") in opened, (reading.reason, reading.reads)


def test_a_glob_that_matches_a_file_named_like_an_option_is_not_read_only(tree):
    reading = classify(parse_command("sort *"), Where((str(tree),), "/home/nobody"))
    assert not reading.read_only and "starts with `-`" in reading.reason


def test_searches_read_recursively_and_what_they_read_without_a_path(tree):
    here = Where((str(tree),), "/home/nobody")
    for line in ("grep -r x", "rg x", "grep -r x .", "find . -name k"):
        reads = classify(parse_command(line), here).reads
        assert [(r.paths, r.recursive) for r in reads] == [((str(tree),), True)], line
    assert classify(parse_command("grep x"), here).reads == []  # stdin
