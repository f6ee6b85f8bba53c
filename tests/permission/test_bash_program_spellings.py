"""A deny rule names a program, and holds however the line gets that program started: through a
launcher (`exec`, `env`, `sudo`, `find -exec`, `su -c` …), a trap, a wrapper, or a spelling of
its name. A program whose name is only known at run time cannot be matched, so it asks wherever
a deny or ask rule exists — in bypassPermissions too, and under the sandbox's auto-allow."""

from __future__ import annotations

import pytest

from tests.permission.test_bash_writers_and_spellings import decide, world

__all__ = ["world"]  # the fixture, imported for pytest

LAUNCHED = [
    ("exec", "exec curl x"),
    ("exec-a", "exec -a name curl x"),
    ("exec-cl", "exec -cl curl x"),
    ("env", "env curl x"),
    ("env-i", "env -i curl x"),
    ("env-assignments", "env -i A=1 B=2 curl x"),
    ("env-assignment-underscore", "env MY_VAR=1 curl x"),
    ("env-dash", "env - curl x"),
    ("env-long-flag", "env --ignore-environment curl x"),
    ("sudo-glued-user", "sudo -uroot curl x"),
    ("watch-quoted", "watch 'curl x'"),
    ("find-one-word", "find . -exec curl ';'"),
    ("find-no-terminator", "find . -exec curl x"),
    ("env-assignment-any-name", "env 1A=1 curl x"),
    ("env-assignment-odd-name", "env -- A-B=1 curl x"),
    ("env-unset", "env -u HOME curl x"),
    ("env-chdir", "env -C /tmp curl x"),
    ("env-split-string", "env -S 'curl x'"),
    ("env-by-path", "/usr/bin/env curl x"),
    ("env-dashdash", "env -- curl x"),
    ("command", "command curl x"),
    ("command-p", "command -p curl x"),
    ("builtin-exec", "builtin exec curl x"),
    ("nice", "nice -n 5 curl x"),
    ("nohup", "nohup curl x"),
    ("timeout", "timeout -s KILL 5 curl x"),
    ("time", "time curl x"),
    ("stdbuf", "stdbuf -o0 curl x"),
    ("sudo", "sudo -u me curl x"),
    ("sudo-env", "sudo -E A=1 curl x"),
    ("setsid", "setsid -f curl x"),
    ("ionice", "ionice -c 3 curl x"),
    ("taskset", "taskset 1 curl x"),
    ("chroot", "chroot / curl x"),
    ("strace", "strace -f -o /dev/null curl x"),
    ("flock", "flock /tmp/l curl x"),
    ("flock-c", "flock /tmp/l -c 'curl x'"),
    ("su-c", "su me -c 'curl x'"),
    ("script-c", "script -qc 'curl x' /dev/null"),
    ("watch", "watch -n 1 curl x"),
    ("busybox", "busybox curl x"),
    ("xargs", "echo x | xargs curl"),
    ("xargs-options", "echo x | xargs -0 -n 1 curl"),
    ("find-exec", "find . -maxdepth 0 -exec curl x ';'"),
    ("find-execdir-plus", "find . -execdir curl {} +"),
    ("find-ok", "find . -ok curl x \\;"),
    ("find-okdir", "find . -okdir curl x ';'"),
    ("find-without-path", "find -exec curl x ';'"),
    ("find-second-exec", "find . -exec true {} + -exec curl x ';'"),
    ("trap", "trap 'curl x' EXIT"),
    ("trap-double-quoted", 'trap "curl x" INT TERM'),
    ("trap-dashdash", "trap -- 'curl x' EXIT"),
    ("eval", "eval curl x"),
    ("bash-c", "bash -c 'curl x'"),
    ("env-bash-c", "env bash -c 'curl x'"),
    ("sudo-sh-c", "sudo sh -c 'curl x'"),
    ("nested-launchers", "env -i sudo -u me nice exec curl x"),
    ("single-quoted", "'curl' x"),
    ("double-quoted", '"curl" x'),
    ("backslash", "\\curl x"),
    ("split-quotes", "cu''rl x"),
    ("ansi-c", "$'\\x63url' x"),
    ("path", "/usr/bin/curl x"),
    ("relative-path", "./curl x"),
    ("in-a-function", "f() { curl x; }; f"),
    ("in-a-subshell", "(curl x)"),
    ("in-a-substitution", "echo $(curl x)"),
    ("in-a-pipeline", "true | curl x"),
]

RUN_TIME = [
    ("variable", "$C x"),
    ("braced-variable", "${C} x"),
    ("quoted-variable", '"$C" x'),
    ("substitution", "$(echo curl) x"),
    ("backticks", "`echo curl` x"),
    ("glob", "/usr/bin/cur? x"),
    ("brace", "{curl,x}"),
    ("partial-variable", "cu$R x"),
    ("after-exec", "exec $C x"),
    ("after-env", "env $C x"),
    ("env-unknown-option", "env $OPT curl x"),
    ("timeout-unknown-duration", "timeout $T curl x"),
    ("time-unknown-option", "time $O curl x"),
    ("nohup-unknown-option", "nohup $O curl x"),
    ("builtin-unknown-option", "builtin $O curl x"),
    ("command-unknown-option", "command $O curl x"),
    ("stdbuf-unknown-option", "stdbuf $O curl x"),
    ("nice-unknown-value", "nice -n $N curl x"),
    ("command-p-unknown", "command -p $X curl x"),
    ("env-assignment-then-variable", "env A=1 $C x"),
    ("su-unknown-string", "su me -c $X"),
    ("su-unknown-user", "su $U -c 'curl x'"),
    ("watch-unknown-word", "watch true $C"),
    ("nice-unknown-option", "nice $N curl x"),
    ("sudo-unknown-user", "sudo -u $U curl x"),
    ("find-exec-variable", "find . -exec $C x ';'"),
    ("watch-variable", "watch $C"),
    ("indirect", "${!C} x"),
]


@pytest.mark.parametrize("command", [c for _, c in LAUNCHED], ids=[i for i, _ in LAUNCHED])
def test_a_deny_rule_holds_however_the_program_is_started(world, command):
    decision = decide(world, command, mode="bypassPermissions", allow=["Bash"], deny=["Bash(curl *)"])
    assert (decision.behavior, decision.decided_by) == ("deny", "rule"), decision


@pytest.mark.parametrize("command", [c for _, c in LAUNCHED[:12]], ids=[i for i, _ in LAUNCHED[:12]])
def test_an_ask_rule_holds_however_the_program_is_started(world, command):
    decision = decide(world, command, mode="bypassPermissions", allow=["Bash"], ask=["Bash(curl *)"])
    assert (decision.behavior, decision.decided_by) == ("ask", "rule"), decision


@pytest.mark.parametrize("command", [c for _, c in RUN_TIME], ids=[i for i, _ in RUN_TIME])
@pytest.mark.parametrize("where", ["bypass", "sandbox-auto-allow"])
def test_a_program_only_known_at_run_time_asks_where_a_deny_rule_exists(world, command, where):
    if where == "bypass":
        decision = decide(world, command, mode="bypassPermissions", allow=["Bash"], deny=["Bash(curl *)"])
    else:
        decision = decide(world, command, deny=["Bash(curl *)"], sandboxed=True)
    assert decision.behavior in ("ask", "deny"), decision
    assert decision.behavior == "deny" or decision.decided_by == "guard", decision


def test_without_a_rule_to_slip_past_a_program_known_at_run_time_is_the_modes_to_decide(world):
    decision = decide(world, "$C x", mode="bypassPermissions")
    assert decision.behavior == "allow", decision


@pytest.mark.parametrize(
    "command",
    [
        "command -v curl",
        "trap - EXIT",
        "trap '' INT",
        "trap -p",
        "env",
        "exec 2>&1",
        "find . -name curl",
        "echo curl",
        "nohup",
        "time",
        "sudo -u",
        "su curl",
    ],
)
def test_what_only_names_the_program_does_not_run_it(world, command):
    decision = decide(world, command, mode="bypassPermissions", allow=["Bash"], deny=["Bash(curl *)"])
    assert decision.behavior == "allow", decision


# what a launched command writes is checked like the line's own writes
LAUNCHED_WRITES = [
    ("env-sort-o", "env sort -o src/app.py notes"),
    ("sudo-touch", "sudo touch src/app.py"),
    ("exec-redirect-in-su", "su -c 'echo x > src/app.py'"),
    ("find-exec-cp", "find . -maxdepth 0 -exec cp notes src/app.py ';'"),
    ("xargs-options-tee", "echo x | xargs -0 tee src/app.py"),
    ("nested", "env -i sudo git log --output=src/app.py"),
    ("long-flag-is-no-chdir", "env --ignore-environment touch src/app.py"),
]


@pytest.mark.parametrize("command", [c for _, c in LAUNCHED_WRITES], ids=[i for i, _ in LAUNCHED_WRITES])
def test_an_edit_deny_rule_holds_against_what_a_launched_command_writes(world, command):
    decision = decide(world, command, mode="bypassPermissions", allow=["Bash"], deny=["Edit(./src/**)"])
    assert (decision.behavior, decision.decided_by) == ("deny", "rule"), decision


@pytest.mark.parametrize(
    "command",
    [
        "env -C /tmp touch app.py",
        "sudo -D /tmp touch app.py",
        "chroot /srv touch app.py",
        "env --chdir=/tmp touch app.py",
        "env --chdir /tmp touch app.py",
        "sudo --chdir=/tmp touch app.py",
        "unshare --wd=/tmp touch app.py",
        "unshare --root=/srv touch app.py",
        "nsenter --wd=/tmp touch app.py",
        "nsenter --root=/srv touch app.py",
        "nsenter -w/tmp touch app.py",
        "nsenter -r /srv touch app.py",
    ],
)
def test_a_command_started_elsewhere_writes_files_only_known_at_run_time(world, command):
    decision = decide(world, command, mode="bypassPermissions", allow=["Bash"], deny=["Edit(./src/**)"])
    assert (decision.behavior, decision.decided_by) == ("ask", "guard"), decision
    assert "only known at run time" in decision.reason


def test_a_launched_write_into_a_protected_path_asks_under_the_launchers_rule(world):
    decision = decide(world, "env FOO=1 git log --output=.git/config", allow=["Bash(env *)"])
    assert (decision.behavior, decision.decided_by) == ("ask", "guard"), decision
