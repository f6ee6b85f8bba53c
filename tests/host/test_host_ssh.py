"""`--ssh`: the host of another machine through OpenSSH's Unix-socket forwarding, against a real
sshd on loopback (a config, host key and user key of the test's own; key auth only)."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.host.test_host_cli import waiting
from tests.host_kit import ROOT, HostKit, write_steps
from tests.needs import need_program
from tests.waiting import DEADLINE_S

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def sshd(host: HostKit) -> Iterator[dict[str, str]]:
    """sshd on 127.0.0.1; its sessions see the host's VIGIL_HOME. Returns the client's env."""
    need_program("sshd")
    if not os.path.isdir("/run/sshd"):
        if os.getuid() != 0:
            pytest.skip("sshd needs its privilege separation directory /run/sshd")
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    folder = host.root / "ssh"
    folder.mkdir()
    for name in ("hostkey", "userkey"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)], check=True)
    (folder / "authorized_keys").write_text((folder / "userkey.pub").read_text())
    os.chmod(folder / "authorized_keys", 0o600)
    port = free_port()
    env_line = " ".join(f"{k}={host.env[k]}" for k in ("VIGIL_HOME", "HOME", "XDG_CONFIG_HOME", "PYTHONPATH"))
    (folder / "sshd_config").write_text(f"""
Port {port}
ListenAddress 127.0.0.1
HostKey {folder / "hostkey"}
AuthorizedKeysFile {folder / "authorized_keys"}
PidFile {folder / "sshd.pid"}
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
AllowStreamLocalForwarding yes
AllowTcpForwarding yes
DisableForwarding no
SetEnv {env_line}
""")
    daemon = subprocess.Popen([SSHD, "-D", "-e", "-f", str(folder / "sshd_config")], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + DEADLINE_S
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        if daemon.poll() is not None:
            pytest.fail(f"sshd did not start: {daemon.stderr.read()}")
        assert time.monotonic() < deadline, "sshd did not listen"
        time.sleep(0.05)
    elsewhere = host.root / "elsewhere"  # the client's own VIGIL_HOME: it has no host of its own
    elsewhere.mkdir()
    client = {
        **host.env,
        "VIGIL_HOME": str(elsewhere),
        "VIGIL_SSH": f"ssh -p {port} -i {folder / 'userkey'} -o StrictHostKeyChecking=no "
        "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
        "VIGIL_REMOTE_COMMAND": f"{sys.executable} -m tui_app",
    }
    try:
        yield client
    finally:
        daemon.terminate()
        daemon.wait(10)


def remote(host: HostKit, env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "tui_app", *args], env=env, capture_output=True, text=True, timeout=DEADLINE_S, cwd=ROOT
    )
    if check and done.returncode != 0:
        raise AssertionError(f"vigil {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done


def test_inbox_answer_and_ls_over_ssh(host: HostKit, sshd: dict[str, str]) -> None:
    target = f"{getpass.getuser()}@127.0.0.1"
    session = host.new(write_steps())
    waiting(host, 1)
    assert remote(host, sshd, "ls", "--json", check=False).stdout.strip() in ("", "[]")  # not its own host
    inbox = json.loads(remote(host, sshd, "inbox", "--json", "--ssh", target).stdout)
    assert [(e["session"], e["tool"]) for e in inbox] == [(session, "Write")]
    remote(host, sshd, "answer", inbox[0]["id"], "allow", "--ssh", target)
    host.wait(lambda: (host.project / "out.txt").exists(), "the file written after the answer over ssh")
    rows = json.loads(remote(host, sshd, "ls", "--json", "--ssh", target).stdout)
    assert [r["id"] for r in rows] == [session]
    resolved = [e for e in host.events(session) if e["type"] == "PermissionResolved"]
    assert resolved[0]["client"].startswith("cli:")


def test_a_client_attaches_through_the_forwarded_socket(
    host: HostKit, sshd: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui_app.host.remote import RemoteRunner
    from tui_app.host.ssh import forwarded

    session = host.new(write_steps())
    waiting(host, 1)
    for key in ("VIGIL_SSH", "VIGIL_REMOTE_COMMAND", "VIGIL_HOME"):
        monkeypatch.setenv(key, sshd[key])
    with forwarded(f"{getpass.getuser()}@127.0.0.1") as local:
        assert Path(local).exists() and oct(os.stat(local).st_mode & 0o777) == "0o600"
        runner = RemoteRunner(session, socket_path=local, start_host=False)
        runner.connect()
        try:
            assert [p["tool"] for p in runner.attached["pending"]] == ["Write"]
            host.wait(lambda: any(e.type == "PermissionRequested" for e in runner.drain()), "the replayed request")
            facts = runner.facts().result(DEADLINE_S)
            assert facts.session_id == session
        finally:
            runner.close()
    assert not Path(local).exists()
