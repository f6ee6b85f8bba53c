"""The flags of one Bash call: read-only lines run unasked and side by side; what destroys what
cannot be got back (a recursive or forced `rm`, `git reset --hard`, a forced push, `dd` …) is shown
as high risk in the approval and never runs beside another call; everything else is the usual
medium-risk command. One row per spelling a user (or an agent) writes."""

from __future__ import annotations

import pytest

from tui_app.runtime.permissions.bash.readonly import (
    BASH_FLAGS,
    DESTRUCTIVE_BASH_FLAGS,
    READ_ONLY_BASH_FLAGS,
    bash_flags,
)


@pytest.mark.parametrize("line", [
    # rm: recursive or forced, short, clustered, long or abbreviated, anywhere among the operands
    "rm -r build", "rm -R build", "rm -fv x", "rm -vr build", "rm --recursive build", "rm --force x",
    "rm --recur build", "rm build -rf", "rm -i -f x",
    "dd if=/dev/zero of=disk.img", "mkfs /dev/sdb1", "mkfs.ext4 /dev/sdb1", "shred -u notes", "wipefs -a /dev/sdb",
    # git: the work tree thrown away
    "git reset --hard", "git reset --hard HEAD~3", "git -C repo reset --hard",
    "git clean -f", "git clean -xdf", "git clean -d --force", "git --no-pager clean -fd",
    # git: a remote branch overwritten, deleted or mirrored
    "git push -f", "git push -uf origin main", "git push --force-with-lease", "git push --force-if-includes",
    "git push origin +main", "git push origin :old-branch", "git push --delete origin old", "git push -d origin old",
    "git push --mirror backup", "git push --forc", "git -c push.default=current push --force",
    # git's own options before the subcommand, with their values
    "git --git-dir .git push -f", "git --work-tree . reset --hard", "git --namespace ci push --force",
    "git --config-env core.sshCommand=GIT_SSH push -f", "git --super-prefix sub/ clean -fd",
    "git --exec-path=/usr/lib/git-core push -f",
    # one such command in a line is enough
    "make && rm -rf build", "git status; git push --force", "make; dd if=/dev/zero of=disk.img",
])
def test_commands_that_destroy_are_high_risk(line):
    assert bash_flags(line) == DESTRUCTIVE_BASH_FLAGS


@pytest.mark.parametrize("line", [
    "npm test", "make", "rm notes", "rm report.txt", "rm -v notes", "rm -i notes", "rm -d empty-dir",
    "rm -- -rf",  # a file named `-rf`
    "git reset --soft HEAD~1", "git reset HEAD notes", "git clean -n", "git clean --dry-run",
    "git push", "git push origin main", "git push -u origin feature", "git push --follow-tags",
    "git commit -m --hard",  # `--hard` is the message, not git reset's option
    "git", "git -C repo", "make clean -f build.mk", "npm push --force",
    # assignments alone
    "LC_ALL=C", "FOO=1",
])
def test_other_commands_are_the_usual_risk(line):
    assert bash_flags(line) == BASH_FLAGS


@pytest.mark.parametrize("line", [
    "git status", "ls -la", "LANG=C ls", "TZ=UTC date", "LC_ALL=C sort notes", "cat notes | wc -l",
    "wc -l < notes", "cd src && ls",
])
def test_read_only_lines_run_unasked_and_side_by_side(line):
    flags = bash_flags(line)
    assert flags == READ_ONLY_BASH_FLAGS
    assert flags.runs_in_parallel and not flags.needs_approval
