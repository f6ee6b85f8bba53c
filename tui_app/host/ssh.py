"""The host on another machine, through OpenSSH: its Unix socket forwarded to a local one
(`ssh -N -L LOCAL:REMOTE`), and the client connects to that. SSH is the engine: nothing new
listens on a network.

`VIGIL_SSH` is the ssh command (default `ssh`; e.g. `ssh -p 2222 -i ~/.ssh/box`), and
`VIGIL_REMOTE_COMMAND` the vigil to run on the other machine (default `vigil`), which is asked
for its host's socket path (`vigil host path`, which starts the host there if none runs).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

#: how long the forward may take to come up
FORWARD_TIMEOUT_S = 30.0


class SshFailed(Exception):
    """ssh could not reach the other machine, or its vigil: the message says how."""


def ssh_command() -> list[str]:
    return shlex.split(os.environ.get("VIGIL_SSH") or "ssh")


def remote_vigil() -> list[str]:
    return shlex.split(os.environ.get("VIGIL_REMOTE_COMMAND") or "vigil")


def remote_socket(target: str) -> str:
    """The socket path of the host on `target` (started there if none runs)."""
    command = [
        *ssh_command(),
        "-o",
        "BatchMode=yes",
        target,
        "--",
        *map(shlex.quote, [*remote_vigil(), "host", "path"]),
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=FORWARD_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SshFailed(f"ssh {target} failed: {exc}") from None
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines or not lines[-1].startswith("/"):
        raise SshFailed(
            f"could not ask {target} for its Vigil host (exit {done.returncode}): "
            f"{(done.stderr or done.stdout).strip()[-400:]}"
        )
    return lines[-1].strip()


def _accepting(path: Path) -> bool:
    if not path.exists():
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


@contextlib.contextmanager
def forwarded(target: str) -> Iterator[Path]:
    """A local socket that reaches the host on `target` for as long as the block runs."""
    remote = remote_socket(target)
    folder = Path(tempfile.mkdtemp(prefix="vigil-ssh-"))
    os.chmod(folder, 0o700)
    local = folder / "host.sock"
    command = [
        *ssh_command(),
        "-N",
        "-o",
        "BatchMode=yes",
        "-o",
        "ExitOnForwardFailure=yes",
        "-o",
        "StreamLocalBindUnlink=yes",
        "-o",
        "StreamLocalBindMask=0177",
        "-L",
        f"{local}:{remote}",
        target,
    ]
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + FORWARD_TIMEOUT_S
        while not _accepting(local):
            if process.poll() is not None:
                raise SshFailed(f"ssh could not forward {target}:{remote}: {(process.stderr.read() or '').strip()}")
            if time.monotonic() > deadline:
                raise SshFailed(f"ssh did not forward {target}:{remote} within {FORWARD_TIMEOUT_S:g} s")
            time.sleep(0.05)
        yield local
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)
