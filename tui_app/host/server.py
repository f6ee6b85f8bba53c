"""The host process: owns sessions, serves clients on a Unix socket only its user can open.

One host per `VIGIL_HOME` (an flock on `host.lock`; a socket left by a dead host is replaced).
The socket is created 0600 and every peer's uid is checked with SO_PEERCRED. Each connection says
`hello` first; then it may start sessions, list them, attach (replay after a seq, then live),
send commands (its answers are recorded under its client id), read the inbox, end sessions, and
stop the host. A session ends only when asked or when the host stops; a client that goes away
detaches. A session found with no record of its end (the host was killed) is `interrupted` and
attaching to it resumes it, its open requests expired and its open calls closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

from tui_app.host import paths
from tui_app.host.hosted import HostedSession, Subscription
from tui_app.host.wire import MAX_LINE, WIRE_VERSION, Peer, WireError, dumps, version_mismatch

#: what `vigil new` may set (the SessionOptions fields a client names)
OPTION_KEYS = (
    "cwd",
    "script",
    "agent",
    "agent_command",
    "provider",
    "model",
    "base_url",
    "permission_mode",
    "allowed_tools",
    "disallowed_tools",
    "settings_file",
    "no_claude_settings",
    "mcp_config",
    "strict_mcp_config",
    "max_turns",
    "add_dirs",
)


class HostBusy(Exception):
    """Another host holds the lock of this VIGIL_HOME."""


def take_lock() -> Any:
    path = paths.lock_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")  # noqa: SIM115 - held for the host's life
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip()
        handle.close()
        raise HostBusy(f"a host already runs for {path.parent} (pid {holder or '?'})") from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def peer_uid(writer: asyncio.StreamWriter) -> int:
    """The uid of the process at the other end of a Unix socket (pid, uid, gid from SO_PEERCRED)."""
    creds = writer.get_extra_info("socket").getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def peer_allowed(uid: int | None) -> bool:
    """Only the host's own user may talk to it (root included only when the host is root's)."""
    return uid == os.getuid()


def write_hosted(hosted: HostedSession, **extra: Any) -> None:
    path = paths.hosted_path(hosted.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"id": hosted.id, "options": hosted.options, "started": hosted.started, "host_pid": os.getpid(), **extra}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


class Host:
    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path
        self.sessions: dict[str, HostedSession] = {}
        self.stopping = asyncio.Event()
        self.connections = 0
        self.clients: set[Connection] = set()
        self.started = time.time()

    # ---- sessions --------------------------------------------------------------------------------

    def load_known(self) -> None:
        """The sessions earlier hosts held: ended, or interrupted (no record of their end)."""
        from tui_app.runtime.log.paths import sessions_dir

        root = sessions_dir()
        if not root.is_dir():
            return
        for path in sorted(root.glob("*/hosted.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(data, dict) or data.get("id") != path.parent.name:
                continue
            ended = bool(data.get("ended"))
            reason = (
                data.get("reason", "")
                if ended
                else (
                    f"the host (pid {data.get('host_pid', '?')}) stopped without ending it: `vigil attach "
                    f"{data['id']}` resumes it"
                )
            )
            hosted = HostedSession(
                data["id"],
                dict(data.get("options") or {}),
                started=data.get("started"),
                state="ended" if ended else "interrupted",
                reason=reason,
            )
            with contextlib.suppress(OSError):
                hosted.last_activity = (path.parent / "events.jsonl").stat().st_mtime
            self.sessions[hosted.id] = hosted

    def find(self, session_id: Any) -> HostedSession:
        hosted = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if hosted is None:
            raise WireError("not_found", f"the host holds no session {session_id!r} (see `vigil ls`)")
        return hosted

    def _options(self, params: dict[str, Any]) -> dict[str, Any]:
        unknown = set(params) - set(OPTION_KEYS)
        if unknown:
            raise WireError("invalid", f"unknown session options: {', '.join(sorted(unknown))}")
        options = {k: v for k, v in params.items() if v is not None}
        options.setdefault("cwd", os.getcwd())
        return options

    def _build(self, options: dict[str, Any], resume: str | None = None) -> Any:
        from tui_app.assemble import SessionOptions, SetupError, build_session

        try:
            return build_session(SessionOptions(**options, resume=resume, interactive=True))
        except SetupError as exc:
            raise WireError("setup_failed", str(exc)) from None
        except TypeError as exc:
            raise WireError("invalid", f"bad session options: {exc}") from None

    async def new_session(self, params: dict[str, Any]) -> HostedSession:
        options = self._options(dict(params))
        session = self._build(options)
        hosted = HostedSession(session.id, options)
        hosted.loaded = True
        try:
            write_hosted(hosted)
        except OSError as exc:
            raise WireError(
                "failed",
                f"the session could not be recorded under {paths.hosted_path(hosted.id).parent}: {exc.strerror or exc}",
            ) from None
        hosted.attach_session(session)
        self.sessions[hosted.id] = hosted
        try:
            await session.start()
        except Exception as exc:  # its agent did not start: the session ends, and says why
            with contextlib.suppress(Exception):
                await session.close("start failed")
            hosted.session, hosted.rest_state, hosted.reason = None, "ended", f"it could not start: {exc}"
            with contextlib.suppress(OSError):
                write_hosted(hosted, ended=True, reason=hosted.reason)
            raise WireError("start_failed", f"the session could not start: {exc}") from None
        return hosted

    async def resume(self, hosted: HostedSession) -> None:
        """An interrupted session goes on: its log's open requests expire, open calls close."""
        from tui_app.runtime.log.eventlog import read_events
        from tui_app.runtime.log.lost_calls import closing_events

        session = self._build(dict(hosted.options), resume=hosted.id)
        recorded = read_events(session.log_path).events if session.log_path else []
        hosted.lines.clear()
        hosted.load(recorded)
        hosted.attach_session(session)
        write_hosted(hosted)
        session.startup_events[:0] = closing_events(recorded)
        await session.start(resumed=True)

    def ensure_loaded(self, hosted: HostedSession) -> None:
        if hosted.loaded:
            return
        from tui_app.runtime.log.eventlog import read_events
        from tui_app.runtime.log.paths import events_path

        path = events_path(hosted.id)
        hosted.load(read_events(path).events if path.is_file() else [])

    async def end(self, hosted: HostedSession, reason: str, client: str) -> Any:
        from tui_app.runtime.commands import EndSession

        session = hosted.session
        if session is None:
            return {"ok": True, "message": f"The session was {hosted.state} already."}
        reply = await session.controller.handle(EndSession(reason=reason, client=client))
        hosted.rest_state = "ended"
        for sub in tuple(hosted.subscriptions):
            sub.poke()
        hosted.reason = reason
        hosted.session = None
        write_hosted(hosted, ended=True, reason=reason)
        return reply.model_dump(mode="json")

    async def stop(self) -> int:
        live = [h for h in self.sessions.values() if h.session is not None]
        for hosted in live:
            with contextlib.suppress(Exception):
                await self.end(hosted, "host stopped", "host")
        return len(live)

    # ---- serving ---------------------------------------------------------------------------------

    async def serve(self) -> None:
        path = paths.checked(self.socket_path)
        self.socket_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # we hold the lock: whatever socket is there belongs to a dead host
        self.load_known()
        old = os.umask(0o177)
        try:
            server = await asyncio.start_unix_server(self._connection, path=path, limit=MAX_LINE)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        try:
            await self.stopping.wait()
        finally:
            server.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            ended = await self.stop()
            # what the clients were sent (the sessions' last events, "ended") reaches them first
            await asyncio.gather(*(c.peer.aclose() for c in tuple(self.clients)), return_exceptions=True)
            if ended:
                sys.stderr.write(f"vigil host: ended {ended} sessions\n")

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        uid = peer_uid(writer)
        if not peer_allowed(uid):
            writer.write(
                (
                    dumps(
                        {
                            "id": None,
                            "error": {
                                "code": "forbidden",
                                "message": (f"this host belongs to uid {os.getuid()}; uid {uid} may not use it"),
                            },
                        }
                    )
                    + "\n"
                ).encode()
            )
            with contextlib.suppress(Exception):
                await writer.drain()
                writer.close()
            return
        self.connections += 1
        connection = Connection(self, reader, writer, self.connections)
        self.clients.add(connection)
        try:
            await connection.peer.run()
        except asyncio.CancelledError:
            pass  # the host is stopping: the connection ends with it
        finally:
            self.clients.discard(connection)
            connection.detach_all()


class Connection:
    """One client: its hello, its id in the log, its subscriptions."""

    def __init__(self, host: Host, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> None:
        self.host = host
        self.number = number
        self.label = f"client:{number}"
        self.greeted = False
        self.subscriptions: dict[str, Subscription] = {}
        methods = {
            "hello": self.hello,
            "new": self.new,
            "list": self.list,
            "attach": self.attach,
            "detach": self.detach,
            "command": self.command,
            "facts": self.facts,
            "inbox": self.inbox,
            "answer": self.answer,
            "end": self.end,
            "status": self.status,
            "stop": self.stop,
        }
        self.peer = Peer(reader, writer, handlers={name: self._guard(name, fn) for name, fn in methods.items()})

    def _guard(self, name: str, fn: Any) -> Any:
        async def run(params: dict[str, Any]) -> Any:
            if not self.greeted and name != "hello":
                raise WireError(
                    "hello_first",
                    f'say hello first: {{"method": "hello", "params": {{"wire_version": {WIRE_VERSION}}}}}',
                )
            # a client that gives up or goes away mid-request (a session half started, half ended)
            # leaves nothing half done: the work finishes; only its answer is not sent
            return await asyncio.shield(fn(params))

        return run

    def detach_all(self) -> None:
        for sub in self.subscriptions.values():
            sub.stop()
        self.subscriptions.clear()

    # ---- methods ---------------------------------------------------------------------------------

    async def hello(self, params: dict[str, Any]) -> Any:
        version = params.get("wire_version")
        if version != WIRE_VERSION:
            asyncio.get_running_loop().call_later(0.2, self.peer.close)
            raise version_mismatch(version)
        name = params.get("client")
        if isinstance(name, str) and name.strip() and name.isprintable() and len(name) <= 40:
            self.label = f"{name.strip()}:{self.number}"
        self.greeted = True
        return {
            "wire_version": WIRE_VERSION,
            "host_pid": os.getpid(),
            "client": self.label,
            "socket": str(self.host.socket_path),
        }

    async def new(self, params: dict[str, Any]) -> Any:
        from tui_app.runtime.commands import SubmitPrompt

        options = params.get("options", {})
        if not isinstance(options, dict):
            raise WireError("invalid", "options is an object")
        hosted = await self.host.new_session(options)
        reply = None
        prompt = params.get("prompt")
        if isinstance(prompt, str) and prompt.strip():
            reply = (await hosted.session.controller.handle(SubmitPrompt(text=prompt, client=self.label))).model_dump(
                mode="json"
            )
        return {"session": hosted.id, "reply": reply}

    async def list(self, params: dict[str, Any]) -> Any:
        return [hosted.row() for hosted in sorted(self.host.sessions.values(), key=lambda h: h.started)]

    async def attach(self, params: dict[str, Any]) -> Any:
        hosted = self.host.find(params.get("session"))
        after = params.get("after_seq", 0)
        if not isinstance(after, int) or after < 0:
            raise WireError("invalid", "after_seq is a whole number (0: from the start)")
        resumed = False
        if hosted.state == "interrupted" and params.get("resume", True):
            await self.host.resume(hosted)
            resumed = True
        self.host.ensure_loaded(hosted)
        old = self.subscriptions.pop(hosted.id, None)
        if old is not None:
            old.stop()
        sub = Subscription(hosted, self.peer, after, partial=bool(params.get("partial")))
        self.subscriptions[hosted.id] = sub
        answer = {
            "session": hosted.id,
            "state": hosted.state,
            "head": hosted.head,
            "resumed": resumed,
            "pending": list(hosted.pending.values()),
            "row": hosted.row(),
        }
        # the answer first, then the replay (queued behind it on the same stream)
        asyncio.get_running_loop().call_soon(sub.start)
        return answer

    async def detach(self, params: dict[str, Any]) -> Any:
        sub = self.subscriptions.pop(params.get("session"), None)
        if sub is not None:
            sub.stop()
        return {"detached": sub is not None}

    def _live(self, session_id: Any) -> Any:
        hosted = self.host.find(session_id)
        if hosted.session is None:
            raise WireError(
                "ended",
                f"the session {hosted.id} is {hosted.state}"
                + (f": `vigil attach {hosted.id}` resumes it" if hosted.state == "interrupted" else ""),
            )
        return hosted

    async def command(self, params: dict[str, Any]) -> Any:
        from pydantic import ValidationError

        from tui_app.runtime.commands import parse_command

        hosted = self._live(params.get("session"))
        try:
            command = parse_command(params.get("command"))
        except (ValidationError, ValueError) as exc:
            raise WireError("invalid", f"not a session command: {exc}") from None
        if command.type == "EndSession":
            return await self.host.end(hosted, command.reason, self.label)
        # the client is the connection's, whatever the command says: the log names who did it
        reply = await hosted.session.controller.handle(command.model_copy(update={"client": self.label}))
        return reply.model_dump(mode="json")

    async def facts(self, params: dict[str, Any]) -> Any:
        hosted = self._live(params.get("session"))
        return hosted.session.controller.facts().model_dump(mode="json")

    async def inbox(self, params: dict[str, Any]) -> Any:
        entries = [entry for hosted in self.host.sessions.values() for entry in hosted.pending.values()]
        return sorted(entries, key=lambda e: e["asked_at"])

    async def answer(self, params: dict[str, Any]) -> Any:
        from tui_app.runtime.commands import AnswerApproval, AnswerPlan, AnswerQuestion

        request = params.get("request")
        if not isinstance(request, str) or ":" not in request:
            raise WireError("invalid", "a request id looks like SESSION:perm-1 (see `vigil inbox`)")
        session_id, request_id = request.rsplit(":", 1)
        hosted = self._live(session_id)
        decision = params.get("decision")
        if decision not in ("allow", "always", "deny"):
            raise WireError("invalid", "answer allow, always or deny")
        feedback = params.get("feedback")
        entry = hosted.pending.get(request_id)
        if entry is None:
            who = hosted.settled.get(request_id)
            return {
                "ok": False,
                "code": "not_found",
                "message": (f"{request} no longer waits" + (f": it was settled by {who}" if who else "") + "."),
            }
        if entry["kind"] == "permission":
            command: Any = AnswerApproval(
                request_id=request_id,
                decision="deny" if decision == "deny" else "allow",
                input_sha256=entry["input_sha256"],
                always=decision == "always",
                feedback=feedback or None,
                client=self.label,
            )
        elif entry["kind"] == "plan":
            command = AnswerPlan(
                request_id=request_id,
                decision="keep" if decision == "deny" else "default",
                feedback=feedback or "",
                client=self.label,
            )
        elif decision == "deny":
            command = AnswerQuestion(request_id=request_id, answers=None, client=self.label)
        else:
            raise WireError("invalid", "a question is answered with words: attach to the session to answer it")
        reply = await hosted.session.controller.handle(command)
        result = reply.model_dump(mode="json")
        if not reply.ok:
            who = await hosted.settler(request_id)
            if who:
                result["message"] = f"{request} no longer waits: it was settled by {who}."
        return result

    async def end(self, params: dict[str, Any]) -> Any:
        hosted = self.host.find(params.get("session"))
        return await self.host.end(hosted, str(params.get("reason") or "ended by a client"), self.label)

    async def status(self, params: dict[str, Any]) -> Any:
        states: dict[str, int] = {}
        for hosted in self.host.sessions.values():
            states[hosted.state] = states.get(hosted.state, 0) + 1
        return {
            "pid": os.getpid(),
            "socket": str(self.host.socket_path),
            "wire_version": WIRE_VERSION,
            "started": self.host.started,
            "sessions": states,
            "clients": len(self.host.clients),
        }

    async def stop(self, params: dict[str, Any]) -> Any:
        ended = await self.host.stop()
        asyncio.get_running_loop().call_later(0.05, self.host.stopping.set)
        return {"ended": ended, "pid": os.getpid()}


def main() -> int:
    """`vigil host --serve`: run the host in this process until stopped."""
    try:
        lock = take_lock()
    except HostBusy as exc:
        sys.stderr.write(f"vigil host: {exc}\n")
        return 1
    try:
        path = paths.socket_path()
        paths.checked(path)
    except paths.SocketPathTooLong as exc:
        sys.stderr.write(f"vigil host: {exc}\n")
        return 2

    async def run() -> None:
        host = Host(path)
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(number, host.stopping.set)
        await host.serve()

    try:
        asyncio.run(run())
    finally:
        lock.close()
    return 0
