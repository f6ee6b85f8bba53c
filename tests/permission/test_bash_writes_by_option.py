"""Files a command writes by option or operand are written files, whatever rule allowed the
command: `Bash(git log *)` does not let `git log --output=~/.bashrc` write a shell rc file.

Each row: a command, the allow rule the user gave, and the decision. A protected path always asks
(`guard`); a file outside the working directories asks; a file inside runs under the rule; a file
only known at run time asks. Placeholders: {o} a directory outside the project."""

from __future__ import annotations

import pytest

from tests.permission.test_bash_writers_and_spellings import OUT, RUN_TIME, check, decide, world

__all__ = ["world"]  # the fixture, imported for pytest

PROTECTED = "protected path"
ALLOWED = ("allow", "rule")

ROWS = [
    # git: --output and every abbreviation git accepts, = or the next word
    ("git-log-output-rc", "git log --output=~/.bashrc", "Bash(git log *)", ("ask", "guard", PROTECTED)),
    ("git-log-output-git-config", "git log --output=.git/config", "Bash(git log *)", ("ask", "guard", PROTECTED)),
    ("git-log-output-abbrev", "git log --outp=.git/config", "Bash(git log *)", ("ask", "guard", PROTECTED)),
    ("git-log-output-next-word", "git log --output .git/config", "Bash(git log *)", ("ask", "guard", PROTECTED)),
    ("git-log-output-quoted", "git log '--output=.git/config'", "Bash(git log *)", ("ask", "guard", PROTECTED)),
    ("git-diff-output-outside", "git diff --output={o}/x.patch", "Bash(git diff *)", ("ask", "guard", OUT)),
    ("git-show-output-inside", "git show --output=show.txt", "Bash(git show *)", ALLOWED),
    ("git-format-patch-dir", "git format-patch -o {o} HEAD~1", "Bash(git format-patch *)", ("ask", "guard", OUT)),
    ("git-output-variable", "git log --output=$F", "Bash(git log *)", ("ask", "guard", RUN_TIME)),
    ("git-option-variable", "git log $OPT", "Bash(git log *)", ("ask", "guard", RUN_TIME)),
    # sort: -o F, -oF, --output, abbreviations
    ("sort-o", "sort -o ~/.bashrc notes", "Bash(sort *)", ("ask", "guard", PROTECTED)),
    ("sort-o-glued", "sort -o~/.bashrc notes", "Bash(sort *)", ("ask", "guard", PROTECTED)),
    ("sort-o-in-cluster", "sort -ruo.git/config notes", "Bash(sort *)", ("ask", "guard", PROTECTED)),
    ("sort-out-abbrev", "sort --out={o}/sorted notes", "Bash(sort *)", ("ask", "guard", OUT)),
    ("sort-o-inside", "sort -o sorted.txt notes", "Bash(sort *)", ALLOWED),
    ("sort-temp-dir-outside", "sort -T {o} notes", "Bash(sort *)", ("ask", "guard", OUT)),
    # by position
    ("uniq-second-operand", "uniq notes ~/.bashrc", "Bash(uniq *)", ("ask", "guard", PROTECTED)),
    ("uniq-one-operand", "uniq notes", "Bash(uniq *)", ALLOWED),
    ("dd-of", "dd if=notes of=~/.bashrc", "Bash(dd *)", ("ask", "guard", PROTECTED)),
    ("rsync-destination", "rsync -a src/ {o}/copy", "Bash(rsync *)", ("ask", "guard", OUT)),
    ("sed-in-place", "sed -i s/a/b/ .git/config", "Bash(sed *)", ("ask", "guard", PROTECTED)),
    ("sed-in-place-long", "sed --in-place=.bak s/a/b/ {o}/notes.txt", "Bash(sed *)", ("ask", "guard", OUT)),
    ("sed-prints", "sed -n 1p notes", "Bash(sed *)", ALLOWED),
    ("gzip-replaces", "gzip ~/.bashrc", "Bash(gzip *)", ("ask", "guard", PROTECTED)),
    ("gzip-to-stdout", "gzip -c notes", "Bash(gzip *)", ALLOWED),
    # archives and patches name their own files
    ("tar-extract", "tar xf a.tar", "Bash(tar *)", ("ask", "guard", RUN_TIME)),
    ("tar-create-file", "tar -cf .git/x.tar src", "Bash(tar *)", ("ask", "guard", PROTECTED)),
    ("tar-create-old-style", "tar cf {o}/x.tar src", "Bash(tar *)", ("ask", "guard", OUT)),
    ("unzip", "unzip a.zip", "Bash(unzip *)", ("ask", "guard", RUN_TIME)),
    ("unzip-list", "unzip -l a.zip", "Bash(unzip *)", ALLOWED),
    ("patch", "patch -p1 < fix.diff", "Bash(patch *)", ("ask", "guard", RUN_TIME)),
    # the network's writers
    ("curl-o", "curl -o ~/.bashrc http://example.com/x", "Bash(curl *)", ("ask", "guard", PROTECTED)),
    ("curl-o-cluster", "curl -sSo.git/config http://example.com/x", "Bash(curl *)", ("ask", "guard", PROTECTED)),
    ("curl-output-long", "curl --output {o}/x http://example.com/x", "Bash(curl *)", ("ask", "guard", OUT)),
    ("curl-remote-name", "curl -O http://example.com/.mcp.json", "Bash(curl *)", ("ask", "guard", PROTECTED)),
    ("curl-header-name", "curl -OJ http://example.com/x", "Bash(curl *)", ("ask", "guard", RUN_TIME)),
    ("curl-dump-header", "curl -D ~/.bashrc http://example.com/", "Bash(curl *)", ("ask", "guard", PROTECTED)),
    ("curl-stdout", "curl -s http://example.com/x", "Bash(curl *)", ALLOWED),
    ("wget-O", "wget -O ~/.bashrc http://example.com/x", "Bash(wget *)", ("ask", "guard", PROTECTED)),
    ("wget-names-file", "wget http://example.com/.mcp.json", "Bash(wget *)", ("ask", "guard", PROTECTED)),
    ("wget-recursive", "wget -r -nH http://example.com/", "Bash(wget *)", ("ask", "guard", RUN_TIME)),
    # any program: --output, --log-file, -o, -out
    ("any-output", "mytool --output=~/.bashrc", "Bash(mytool *)", ("ask", "guard", PROTECTED)),
    ("any-log-file", "mytool --log-file {o}/log", "Bash(mytool *)", ("ask", "guard", OUT)),
    ("any-log-file-abbrev", "mytool --log-f={o}/log", "Bash(mytool *)", ("ask", "guard", OUT)),
    ("any-o", "gcc -o ~/.bashrc x.c", "Bash(gcc *)", ("ask", "guard", PROTECTED)),
    ("any-o-glued", "mytool -o{o}/x", "Bash(mytool *)", ("ask", "guard", OUT)),
    ("openssl-out", "openssl rand -out .git/config 8", "Bash(openssl *)", ("ask", "guard", PROTECTED)),
    ("find-fprint", "find . -fprint ~/.bashrc", "Bash(find *)", ("ask", "guard", PROTECTED)),
    ("find-delete", "find . -name x -delete", "Bash(find *)", ("ask", "guard", RUN_TIME)),
    ("pytest-junit", "pytest --junitxml={o}/r.xml", "Bash(pytest *)", ("ask", "guard", OUT)),
    # ... but a program whose words are only printed writes nothing, and a plain flag `-o` is no file
    ("echo-prints-output-option", "echo --output=~/.bashrc", "Bash(echo *)", ALLOWED),
    ("grep-o-is-a-flag", "grep -o x {o}/notes.txt", "Bash(grep *)", ALLOWED),
    ("ls-o-is-a-flag", "ls -o {o}", "Bash(ls *)", ALLOWED),
    ("output-to-dev-null", "git log --output=/dev/null", "Bash(git log *)", ALLOWED),
]


@pytest.mark.parametrize("command, rule, expect", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_a_file_written_by_option_is_a_written_file(world, command, rule, expect):
    check(decide(world, command, allow=[rule]), expect)


@pytest.mark.parametrize(
    "command", ["git log --output=src/app.py", "sort -o src/app.py notes", "curl -o src/app.py http://example.com/"]
)
def test_an_edit_deny_rule_holds_against_an_output_option(world, command):
    """Even in bypassPermissions, where writes run unasked."""
    decision = decide(world, command, mode="bypassPermissions", allow=["Bash"], deny=["Edit(./src/**)"])
    check(decision, ("deny", "rule"))


def test_an_output_option_in_acceptEdits_inside_the_project_runs_by_its_rule(world):
    check(decide(world, "git log --output=log.txt", mode="acceptEdits", allow=["Bash(git log *)"]), ALLOWED)
    check(
        decide(world, "git log --output=.git/config", mode="acceptEdits", allow=["Bash(git log *)"]),
        ("ask", "guard", PROTECTED),
    )
