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
    ["command -v curl", "trap - EXIT", "trap '' INT", "trap -p", "env", "exec 2>&1", "find . -name curl", "echo curl"],
)
def test_what_only_names_the_program_does_not_run_it(world, command):
    decision = decide(world, command, mode="bypassPermissions", allow=["Bash"], deny=["Bash(curl *)"])
    assert decision.behavior == "allow", decision
