"""A real host for tests: a private HOME and VIGIL_HOME (short, so the socket fits in sun_path),
the `vigil` CLI run as a subprocess, and a raw socket client to speak the wire by hand."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import DEADLINE_S

ROOT = Path(__file__).resolve().parent.parent


class HostKit:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="vh", dir="/tmp"))
        self.home = self.root / "h"
        self.vigil_home = self.root / "v"
        self.project = self.root / "p"
        for path in (self.home, self.vigil_home, self.project):
            path.mkdir()
        self.env = {
            **os.environ,
            "HOME": str(self.home),
            "VIGIL_HOME": str(self.vigil_home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "PYTHONPATH": str(ROOT),
        }
        self.env.pop("XDG_RUNTIME_DIR", None)
        self.scripts = 0

    @property
    def socket(self) -> Path:
        return self.vigil_home / "host.sock"

    def vigil(
        self, *args: str, check: bool = True, timeout: float = DEADLINE_S, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "tui_app", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.project,
            input=input,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"vigil {' '.join(args)} exited {done.returncode}: {done.stderr}{done.stdout}")
        return done

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "tui_app", *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=self.project,
        )

    def script(self, steps: list[dict[str, Any]]) -> Path:
        self.scripts += 1
        path = self.root / f"script{self.scripts}.json"
        path.write_text(json.dumps({"steps": steps}), encoding="utf-8")
        return path

    def new(self, steps: list[dict[str, Any]], prompt: str = "go", *extra: str) -> str:
        out = self.vigil("new", "--script", str(self.script(steps)), "-p", prompt, *extra).stdout
        return out.split()[-1]

    def ls(self) -> list[dict[str, Any]]:
        return json.loads(self.vigil("ls", "--json").stdout)

    def inbox(self) -> list[dict[str, Any]]:
        return json.loads(self.vigil("inbox", "--json").stdout)

    def row(self, session_id: str) -> dict[str, Any]:
        return next(r for r in self.ls() if r["id"] == session_id)

    def host_pid(self) -> int | None:
        with contextlib.suppress(OSError, ValueError):
            return int((self.vigil_home / "host.lock").read_text().strip())
        return None

    def events(self, session_id: str) -> list[dict[str, Any]]:
        """The session's events as a `watch` prints them (the whole log so far, then until it ends
        or `until` is seen)."""
        from tui_app.runtime.log.eventlog import read_events

        return [
            json.loads(e.model_dump_json())
            for e in read_events(self.vigil_home / "sessions" / session_id / "events.jsonl").events
        ]

    def wait(self, predicate: Any, what: str, timeout: float = DEADLINE_S) -> Any:
        end = time.monotonic() + timeout
        while not (value := predicate()):
            if time.monotonic() > end:
                raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
            time.sleep(0.05)
        return value

    def connect(self) -> RawClient:
        return RawClient(str(self.socket))

    def close(self) -> None:
        pid = self.host_pid()
        if self.socket.exists():
            self.vigil("host", "stop", check=False, timeout=60)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)


class RawClient:
    """The wire spoken by hand: lines out, messages in."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(DEADLINE_S)
        self.sock.connect(path)
        self.file = self.sock.makefile("rwb")
        self.next_id = 0
        #: notifications read while waiting for an answer
        self.seen: list[dict[str, Any]] = []

    def send_line(self, data: bytes) -> None:
        self.file.write(data + b"\n")
        self.file.flush()

    def read(self) -> dict[str, Any] | None:
        line = self.file.readline()
        return json.loads(line) if line else None

    def request(self, method: str, **params: Any) -> dict[str, Any]:
        """The answer to this request (notifications before it are kept in `self.seen`)."""
        self.next_id += 1
        self.send_line(json.dumps({"id": self.next_id, "method": method, "params": params}).encode())
        while True:
            message = self.read()
            assert message is not None, "the host closed the connection"
            if message.get("id") == self.next_id:
                return message
            self.seen.append(message)

    def hello(self) -> dict[str, Any]:
        self.seen = []
        from tui_app.host.wire import WIRE_VERSION

        return self.request("hello", wire_version=WIRE_VERSION, client="test")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()
            self.sock.close()


@pytest.fixture
def host() -> Any:
    kit = HostKit()
    try:
        yield kit
    finally:
        kit.close()


WRITE = {
    "text": "Writing.",
    "tool_calls": [{"id": "w1", "name": "Write", "input": {"file_path": "out.txt", "content": "written\n"}}],
}


def write_steps(name: str = "out.txt", content: str = "written\n", after: str = "Done.") -> list[dict[str, Any]]:
    return [
        {
            "text": "Writing.",
            "tool_calls": [{"id": "w1", "name": "Write", "input": {"file_path": name, "content": content}}],
        },
        {"text": after},
    ]
