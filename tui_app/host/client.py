"""The client side of the host: connect (starting the host on demand, detached, as tmux starts
its server), say hello, call methods, hear notifications."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tui_app.host import paths
from tui_app.host.wire import MAX_LINE, WIRE_VERSION, EventHandler, NotifyHandler, Peer, WireError

#: how long a client waits for a host it started to listen
START_TIMEOUT_S = 20.0


class HostUnavailable(Exception):
    """No host could be reached (or started): the message says why."""


def spawn_host() -> subprocess.Popen[bytes]:
    """`python -m tui_app host --serve`, in a session of its own, outliving this process."""
    log = paths.log_path()
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "tui_app", "host", "--serve"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
            cwd="/",
            env=host_env(),
        )


def host_env() -> dict[str, str]:
    """The environment the host runs with: this one, with the package importable from anywhere."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def log_tail(limit: int = 600) -> str:
    try:
        data = paths.log_path().read_bytes()[-limit:]
    except OSError:
        return ""
    return data.decode("utf-8", "replace").strip()


class HostClient:
    def __init__(self, peer: Peer, reader_task: asyncio.Task[None], hello: dict[str, Any]) -> None:
        self.peer = peer
        self._task = reader_task
        self.hello = hello

    @property
    def label(self) -> str:
        return str(self.hello.get("client", ""))

    @classmethod
    async def connect(
        cls,
        *,
        client: str = "cli",
        start: bool = True,
        socket_path: str | Path | None = None,
        on_notify: NotifyHandler | None = None,
        on_event: EventHandler | None = None,
    ) -> HostClient:
        try:
            path = paths.checked(Path(socket_path) if socket_path else paths.socket_path())
        except paths.SocketPathTooLong as exc:
            raise HostUnavailable(str(exc)) from None
        try:
            streams = await asyncio.open_unix_connection(path, limit=MAX_LINE)
        except (FileNotFoundError, ConnectionRefusedError):
            if not start:
                raise HostUnavailable(f"no host is running (socket {path})") from None
            streams = await cls._start(path)
        reader, writer = streams
        peer = Peer(reader, writer, on_notify=on_notify, on_event=on_event)
        task = asyncio.ensure_future(peer.run())
        try:
            hello = await peer.request("hello", {"wire_version": WIRE_VERSION, "client": client}, timeout=30)
        except WireError as exc:
            task.cancel()
            peer.close()
            raise HostUnavailable(exc.message) from None
        return cls(peer, task, hello)

    @staticmethod
    async def _start(path: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        process = spawn_host()
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            with contextlib.suppress(FileNotFoundError, ConnectionRefusedError):
                return await asyncio.open_unix_connection(path, limit=MAX_LINE)
            code = process.poll()
            if (code is not None and code != 1) or time.monotonic() > deadline:
                # 1: another host took the lock first; keep trying to reach that one until the deadline
                tail = log_tail()
                raise HostUnavailable(f"the host did not start (socket {path})" + (f": {tail}" if tail else ""))
            await asyncio.sleep(0.02)

    async def call(self, method: str, timeout: float | None = None, **params: Any) -> Any:
        return await self.peer.request(method, params, timeout=timeout)

    async def close(self) -> None:
        self.peer.close()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task
