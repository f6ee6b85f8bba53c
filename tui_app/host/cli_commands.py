"""The host's CLI (binding names): `vigil new`, `ls`, `attach`, `send`, `watch`, `inbox`,
`answer`, `end`, `host [status|stop]`. Each is a client of the host (started on demand, except by
`host status` and `host stop`); `--json` shapes are stable and documented in the README.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tui_app.host.client import HostClient, HostUnavailable
from tui_app.host.wire import WireError

COMMANDS = ("new", "ls", "attach", "send", "watch", "inbox", "answer", "end", "host")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        say(f"{message} (see {self.prog} --help)")
        raise SystemExit(2)


def say(message: str) -> None:
    from tui_app.runtime.results.sanitize import neutralize

    sys.stderr.write(f"vigil: {neutralize(message)}\n")


def safe(text: Any) -> str:
    from tui_app.runtime.results.sanitize import neutralize

    return neutralize(str(text))


def json_out(obj: Any) -> str:
    from tui_app.headless.terminal import json_line

    return json_line(obj)


def run_client(
    work: Callable[[HostClient], Awaitable[int]], *, start: bool = True, client: str = "cli", socket_path: Any = None
) -> int:
    async def go() -> int:
        try:
            host = await HostClient.connect(client=client, start=start, socket_path=socket_path)
        except HostUnavailable as exc:
            say(str(exc))
            return 1
        try:
            return await work(host)
        except WireError as exc:
            say(exc.message)
            return 1
        finally:
            await host.close()

    try:
        return asyncio.run(go())
    except KeyboardInterrupt:
        return 130


def reply_code(reply: dict[str, Any]) -> int:
    if reply.get("ok", True):
        if reply.get("message"):
            print(safe(reply["message"]))
        return 0
    say(str(reply.get("message") or reply.get("code")))
    return 1


def _tools_list(value: str) -> list[str]:
    """Rules as the CLI takes them ("Read,Grep" or "Read Grep"; parentheses may hold spaces)."""
    out, depth, current = [], 0, ""
    for ch in value:
        depth = depth + 1 if ch == "(" else max(0, depth - 1) if ch == ")" else depth
        if ch in ", " and depth == 0:
            out.append(current)
            current = ""
        else:
            current += ch
    return [rule.strip() for rule in [*out, current] if rule.strip()]


# ---- new ------------------------------------------------------------------------------------------


def cmd_new(argv: list[str]) -> int:
    from tui_app.runtime.permissions.modes import PERMISSION_MODES

    parser = _Parser(prog="vigil new", description="Start a session in the host, detached; print its id.")
    parser.add_argument("--agent", metavar="NAME")
    parser.add_argument("--agent-command", metavar="PATH")
    parser.add_argument("-p", "--prompt", metavar="PROMPT", help="its first prompt")
    parser.add_argument("--script", metavar="FILE", help="a scripted model (JSON steps)")
    parser.add_argument("--permission-mode", choices=list(PERMISSION_MODES))
    parser.add_argument("--cwd", metavar="DIR")
    parser.add_argument("--provider", choices=["anthropic", "openai", "scripted"])
    parser.add_argument("--model")
    parser.add_argument("--settings", metavar="FILE")
    parser.add_argument("--no-claude-settings", action="store_true")
    parser.add_argument(
        "--allowedTools", "--allowed-tools", dest="allowed", action="append", type=_tools_list, default=[]
    )
    parser.add_argument(
        "--disallowedTools", "--disallowed-tools", dest="disallowed", action="append", type=_tools_list, default=[]
    )
    parser.add_argument("--attach", action="store_true", help="then open the TUI on it")
    args = parser.parse_args(argv)
    options = new_options(
        args, [r for group in args.allowed for r in group], [r for group in args.disallowed for r in group]
    )
    started: list[str] = []

    async def work(host: HostClient) -> int:
        result = await host.call("new", options=options, prompt=args.prompt)
        reply = result.get("reply")
        if reply and not reply.get("ok", True):
            say(f"the first prompt was refused: {reply.get('message')}")
        print(f"Started session {result['session']}")
        started.append(result["session"])
        return 0

    code = run_client(work)
    return attach_tui(started[0]) if code == 0 and args.attach else code


def new_options(args: argparse.Namespace, allowed: list[str], disallowed: list[str]) -> dict[str, Any]:
    """A new session's options from the CLI's flags; paths made absolute (the host runs in /)."""

    def absolute(path: str | None) -> str | None:
        return os.path.abspath(os.path.expanduser(path)) if path else None

    settings = args.settings
    options = {
        "cwd": absolute(args.cwd) or os.getcwd(),
        "agent": args.agent,
        "agent_command": args.agent_command,
        "script": absolute(args.script),
        "permission_mode": args.permission_mode,
        "provider": args.provider,
        "model": args.model,
        "settings_file": absolute(settings) if settings and not settings.lstrip().startswith("{") else settings,
        "no_claude_settings": args.no_claude_settings or None,
        "allowed_tools": allowed or None,
        "disallowed_tools": disallowed or None,
        "mcp_config": [absolute(p) for p in getattr(args, "mcp_config", None) or []] or None,
        "strict_mcp_config": getattr(args, "strict_mcp_config", None) or None,
        "max_turns": getattr(args, "max_turns", None),
    }
    return {k: v for k, v in options.items() if v is not None}


def tui_in_host(args: argparse.Namespace) -> int:
    """`vigil --host`: the TUI on a new session of the host in the cwd (with `--resume ID`: on that
    session of the host, resumed when it was interrupted)."""
    if args.resume:
        return attach_tui(args.resume)
    options = new_options(
        args, [r for group in args.allowed_tools for r in group], [r for group in args.disallowed_tools for r in group]
    )
    started: list[str] = []

    async def work(host: HostClient) -> int:
        started.append((await host.call("new", options=options))["session"])
        return 0

    code = run_client(work, client="tui")
    return attach_tui(started[0]) if code == 0 else code


# ---- ls / inbox -------------------------------------------------------------------------------------


def _when(ts: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if isinstance(ts, int | float) and ts else "?"


def _table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1])


def cmd_ls(argv: list[str]) -> int:
    parser = _Parser(prog="vigil ls", description="The host's sessions.")
    parser.add_argument("--json", action="store_true")
    add_ssh(parser)
    args = parser.parse_args(argv)

    async def work(host: HostClient) -> int:
        rows = await host.call("list")
        if args.json:
            print(json_out(rows))
            return 0
        if not rows:
            print("The host holds no sessions: `vigil new` starts one.")
            return 0
        table = [("ID", "AGENT", "STATE", "PENDING", "STARTED", "LAST ACTIVITY", "CWD")]
        for r in rows:
            table.append(
                (
                    safe(r["id"]),
                    safe(r["agent"]),
                    safe(r["state"]),
                    str(r["pending"]),
                    _when(r["started"]),
                    _when(r["last_activity"]),
                    safe(r["cwd"]),
                )
            )
        _table(table)
        return 0

    return with_ssh(args, work)


def cmd_inbox(argv: list[str]) -> int:
    parser = _Parser(prog="vigil inbox", description="Every request that waits for a person, oldest first.")
    parser.add_argument("--json", action="store_true")
    add_ssh(parser)
    args = parser.parse_args(argv)

    async def work(host: HostClient) -> int:
        entries = await host.call("inbox")
        if args.json:
            print(json_out(entries))
            return 0
        if not entries:
            print("Nothing waits for you.")
            return 0
        for e in entries:
            print(f"{safe(e['id'])}  {safe(e['kind'])}  {safe(e['tool'])}: {safe(e['summary'])}")
            if e.get("reason"):
                print(f"    why: {safe(e['reason'])}")
            for line in str(e.get("preview") or "").splitlines()[:12]:
                print(f"    {safe(line)}")
        print("Answer with `vigil answer ID allow|always|deny [--feedback TEXT]`.")
        return 0

    return with_ssh(args, work)


def cmd_answer(argv: list[str]) -> int:
    parser = _Parser(prog="vigil answer", description="Answer a request of the inbox.")
    parser.add_argument("request", metavar="REQ")
    parser.add_argument("decision", choices=["allow", "always", "deny"])
    parser.add_argument("--feedback", metavar="TEXT", help="with deny: what the agent is told")
    add_ssh(parser)
    args = parser.parse_args(argv)

    async def work(host: HostClient) -> int:
        reply = await host.call("answer", request=args.request, decision=args.decision, feedback=args.feedback)
        if reply.get("ok"):
            print(f"{safe(args.request)}: {args.decision}")
            return 0
        return reply_code(reply)

    return with_ssh(args, work)


# ---- send / end / watch ------------------------------------------------------------------------------


def cmd_send(argv: list[str]) -> int:
    parser = _Parser(prog="vigil send", description="Send a prompt to a session of the host.")
    parser.add_argument("session", metavar="ID")
    parser.add_argument("prompt", metavar="PROMPT")
    args = parser.parse_args(argv)

    async def work(host: HostClient) -> int:
        command = {"type": "SubmitPrompt", "text": args.prompt}
        return reply_code(await host.call("command", session=args.session, command=command))

    return run_client(work)


def cmd_end(argv: list[str]) -> int:
    parser = _Parser(prog="vigil end", description="End a session of the host (its agent and processes stop).")
    parser.add_argument("session", metavar="ID")
    args = parser.parse_args(argv)

    async def work(host: HostClient) -> int:
        return reply_code(await host.call("end", session=args.session, reason="ended by `vigil end`"))

    return run_client(work)


def cmd_watch(argv: list[str]) -> int:
    parser = _Parser(prog="vigil watch", description="Follow a session as lines, until it ends.")
    parser.add_argument("session", metavar="ID")
    parser.add_argument(
        "--from",
        dest="after",
        type=int,
        default=0,
        metavar="SEQ",
        help="only events after this seq (the last one you saw)",
    )
    parser.add_argument("--output-format", choices=["events", "stream-json"], default="events")
    args = parser.parse_args(argv)
    return run_client(lambda host: watch(host, args.session, args.after, args.output_format), client="watch")


async def watch(host: HostClient, session_id: str, after: int, fmt: str) -> int:
    from tui_app.headless.terminal import terminal_safe_json
    from tui_app.runtime.events import parse_event

    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    out = sys.stdout
    transcript: Any = None

    def on_event(session: str, data: bytes) -> None:
        if session != session_id or done.done():
            return
        try:
            if transcript is None:
                out.write(terminal_safe_json(data.decode("utf-8", "replace")) + "\n")
            else:
                transcript.on_event(parse_event(data))
            out.flush()
        except BrokenPipeError:
            done.set_result(0)

    def on_notify(method: str, params: dict[str, Any]) -> None:
        if params.get("session") != session_id or done.done():
            return
        try:
            if method == "behind":
                say(f"this watch fell behind; catching up from seq {params.get('from_seq')}")
            elif method == "ended":
                done.set_result(0)
        except BrokenPipeError:
            done.set_result(0)

    if fmt == "stream-json":  # before the replay starts: its first events come with the answer
        rows = [r for r in await host.call("list") if r.get("id") == session_id]
        transcript = stream_transcript(session_id, rows[0] if rows else {}, out)
    host.peer.on_notify = on_notify
    host.peer.on_event = on_event
    await host.call("attach", session=session_id, after_seq=after)
    closed = asyncio.ensure_future(host.peer.closed.wait())
    await asyncio.wait({done, closed}, return_when=asyncio.FIRST_COMPLETED)
    if done.done():
        return done.result()
    say("the host went away")
    return 1


def stream_transcript(session_id: str, row: dict[str, Any], out: Any) -> Any:
    """Claude Code's stream-json lines from the host's events (no live Session here)."""
    from types import SimpleNamespace

    from tui_app.headless.stream_json import Transcript

    stub = SimpleNamespace(
        id=session_id,
        cwd=row.get("cwd", ""),
        provider_name=row.get("agent", ""),
        base_url=None,
        model_name="",
        permission_mode="default",
        tool_menu=[],
    )
    return Transcript(stub, "stream-json", out)


# ---- host ---------------------------------------------------------------------------------------------


def cmd_host(argv: list[str]) -> int:
    parser = _Parser(prog="vigil host", description="The host that keeps sessions when their windows close.")
    parser.add_argument(
        "action",
        nargs="?",
        choices=["status", "stop", "path"],
        default="status",
        help="path: the socket's path, once a host listens on it (started if none runs)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        from tui_app.host.server import main as serve

        return serve()

    async def status(host: HostClient) -> int:
        info = await host.call("status")
        states = ", ".join(f"{n} {state}" for state, n in sorted(info["sessions"].items())) or "no sessions"
        print(f"host pid {info['pid']} socket {safe(info['socket'])} ({states}; {info['clients'] - 1} other clients)")
        return 0

    async def stop(host: HostClient) -> int:
        info = await host.call("stop")
        print(f"host pid {info['pid']} stopped; it ended {info['ended']} session{'s' if info['ended'] != 1 else ''}")
        return 0

    async def path(host: HostClient) -> int:
        print(host.hello.get("socket", ""))
        return 0

    if args.action == "path":
        return run_client(path)
    return run_client(status if args.action == "status" else stop, start=False)


# ---- attach (the TUI over the socket) and --ssh ------------------------------------------------------


def add_ssh(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ssh", metavar="[USER@]HOST", help="the host on another machine, through OpenSSH")


def with_ssh(args: argparse.Namespace, work: Callable[[HostClient], Awaitable[int]] | None) -> int:
    """`work` against the local host, or (`--ssh`) the host of another machine through OpenSSH;
    no `work`: the TUI attached to `args.session` there."""
    if not getattr(args, "ssh", None):
        return run_client(work) if work is not None else attach_tui(args.session)
    from tui_app.host.ssh import SshFailed, forwarded

    try:
        with forwarded(args.ssh) as local:
            if work is None:
                return attach_tui(args.session, socket_path=str(local))
            return run_client(work, start=False, socket_path=str(local))
    except SshFailed as exc:
        say(str(exc))
        return 1


def cmd_attach(argv: list[str]) -> int:
    parser = _Parser(prog="vigil attach", description="The TUI on a session of the host; quitting detaches.")
    parser.add_argument("session", metavar="ID")
    add_ssh(parser)
    args = parser.parse_args(argv)
    return with_ssh(args, None)


def attach_tui(session_id: str, socket_path: str | None = None) -> int:
    from tui_app.host.client import HostUnavailable
    from tui_app.host.remote import RemoteRunner

    runner = RemoteRunner(session_id, socket_path=socket_path)
    try:
        runner.connect()
    except (HostUnavailable, WireError) as exc:
        say(str(exc))
        return 1
    from tui_app.app.vigil_app import VigilApp

    tag = "resumed" if runner.attached.get("resumed") else "host"
    app = VigilApp(runner=runner, tag=tag, handle_signals=True)
    try:
        app.run()
    finally:
        app.close_runtime()
    if runner.ended is not None:
        print(f"session {session_id} has {safe(runner.ended.get('state', 'ended'))}")
    else:
        print(f"detached; `vigil attach {session_id}` to return")
    return 0


def main(name: str, argv: list[str]) -> int:
    handlers = {
        "new": cmd_new,
        "ls": cmd_ls,
        "attach": cmd_attach,
        "send": cmd_send,
        "watch": cmd_watch,
        "inbox": cmd_inbox,
        "answer": cmd_answer,
        "end": cmd_end,
        "host": cmd_host,
    }
    return handlers[name](argv)
