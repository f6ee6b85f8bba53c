"""The sandbox's way out: an HTTP proxy Vigil runs outside the sandbox, one per sandboxed command,
on a Unix socket that only that command's sandbox can see (`socat` inside relays
127.0.0.1:3128 to it).

It understands `CONNECT host:port` (HTTPS, anything tunnelled) and absolute-form requests
(`GET http://host/path`, plain HTTP). For each host: a `WebFetch(domain:…)` deny rule blocks it;
`sandbox.network.allowedDomains`, `WebFetch(domain:…)` allow rules and domains the user allowed
earlier in the session let it through; anything else is asked once (the asker puts the question
to the user; headless, nobody answers and it is blocked). A blocked request gets a 403 whose body
says the sandbox blocked it, so the command's own error names the cause. With
`sandbox.network.httpProxyPort` every request goes to the user's own proxy instead, unchecked.

The destination is fixed when the tunnel opens: later requests on the same connection go to the
same host, whatever their `Host:` header says.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from typing import Any

#: may this command reach host:port? (True: allow)
DomainAsker = Callable[[str, int], Awaitable[bool]]
MAX_HEAD = 64 * 1024
CONNECT_TIMEOUT_S = 30


class NetProxy:
    def __init__(self, policy: Any, path: str, *, command: str = "", ask: DomainAsker | None = None) -> None:
        self.policy = policy
        self.path = path
        self.command = command
        self.ask = ask
        self.blocked: set[str] = set()
        self.allowed: set[str] = set()
        self._pending: dict[str, asyncio.Future[bool]] = {}
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(self._serve, path=self.path)
        os.chmod(self.path, 0o600)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    # ---- one connection -------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:
            pass  # the command ended (or the relay's readiness probe never spoke): the connection goes
        finally:
            if task is not None:
                self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEAD:
            return
        line, _, rest = head.partition(b"\r\n")
        parts = line.decode("latin-1").split()
        if len(parts) != 3:
            await _reply(writer, 400, "Vigil's sandbox proxy did not understand the request.")
            return
        method, target, version = parts
        upstream = self.policy.network().http_proxy_port
        if upstream is not None:
            await self._forward_raw(reader, writer, head, upstream)
            return
        if method.upper() == "CONNECT":
            host, port = _host_port(target, 443)
        elif target.lower().startswith("http://"):
            authority, _, path = target[7:].partition("/")
            host, port = _host_port(authority, 80)
            head = f"{method} /{path} {version}\r\n".encode("latin-1") + _strip_proxy_headers(rest)
        else:
            await _reply(writer, 400, "Vigil's sandbox proxy only forwards CONNECT and http:// requests.")
            return
        if not host:
            await _reply(writer, 400, "Vigil's sandbox proxy got a request without a host.")
            return
        if not await self._may_reach(host, port):
            await _reply(writer, 403, f"Vigil's sandbox blocked the connection to {host}: it is not in "
                                      "sandbox.network.allowedDomains (and was not allowed when asked).")
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            await _reply(writer, 502, f"Vigil's sandbox proxy could not connect to {host}:{port}: {exc}")
            return
        if method.upper() == "CONNECT":
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        else:
            up_writer.write(head)
        await writer.drain()
        await _splice(reader, writer, up_reader, up_writer)

    async def _forward_raw(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes,
                           port: int) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError as exc:
            await _reply(writer, 502, f"Vigil's sandbox could not reach your proxy on port {port}: {exc}")
            return
        up_writer.write(head)
        await _splice(reader, writer, up_reader, up_writer)

    # ---- the decision -----------------------------------------------------------------------------

    async def _may_reach(self, host: str, port: int) -> bool:
        host = host.lower().rstrip(".")
        verdict = self.policy.network().verdict(host)
        if verdict is not None or host in self.allowed or host in self.blocked:
            allowed = verdict == "allow" or (verdict is None and host in self.allowed)
            if not allowed:
                self.blocked.add(host)
            return allowed
        pending = self._pending.get(host)
        if pending is None:
            pending = self._pending[host] = asyncio.get_running_loop().create_future()
            try:
                answer = bool(await self.ask(host, port)) if self.ask is not None else False
            except Exception:
                answer = False
            (self.allowed if answer else self.blocked).add(host)
            pending.set_result(answer)
            self._pending.pop(host, None)
            return answer
        return await asyncio.shield(pending)


def _host_port(authority: str, default: int) -> tuple[str, int]:
    authority = authority.strip()
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port = rest.lstrip(":")
    else:
        host, _, port = authority.rpartition(":") if authority.count(":") == 1 else (authority, "", "")
    try:
        return host, int(port) if port else default
    except ValueError:
        return "", 0


def _strip_proxy_headers(rest: bytes) -> bytes:
    lines = rest.split(b"\r\n")
    kept = [ln for ln in lines if not ln.lower().startswith((b"proxy-connection:", b"proxy-authorization:"))]
    return b"\r\n".join(kept)


async def _reply(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}.get(status, "Error")
    body = (text + "\n").encode("utf-8")
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                 f"X-Vigil-Sandbox: blocked\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                 + body)
    with contextlib.suppress(OSError):
        await writer.drain()


async def _splice(a_reader: asyncio.StreamReader, a_writer: asyncio.StreamWriter,
                  b_reader: asyncio.StreamReader, b_writer: asyncio.StreamWriter) -> None:
    async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while True:
                data = await src.read(65536)
                if not data:
                    break
                dst.write(data)
                await dst.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            with contextlib.suppress(Exception):
                if dst.can_write_eof():
                    dst.write_eof()

    try:
        await asyncio.gather(pump(a_reader, b_writer), pump(b_reader, a_writer))
    finally:
        with contextlib.suppress(Exception):
            b_writer.close()
