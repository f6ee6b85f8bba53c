"""`vigil`: the entry point. Parses arguments and hands over to the headless runner or the TUI.

    vigil                      the TUI in the current directory (the bundled demo with no provider)
    vigil --resume ID          the TUI on a recorded session, its conversation shown first
    vigil --demo --output-format text    the demo without the TUI (a plain transcript)
    vigil -p PROMPT            one headless turn; --output-format text|json|stream-json|events
    vigil sessions             list recorded sessions (--tui: browse them, open one read-only)
    vigil replay ID            a recorded session read-only in the TUI, with a timeline; nothing is executed
    vigil replay ID --output-format text|stream-json    print it instead
    vigil acp                  an ACP agent on stdio (for editors: Zed, Toad, agent-shell …)
    vigil new|ls|attach|send|watch|inbox|answer|end|host   sessions in the host, which outlive their windows
    vigil serve [-- ARGS]      Vigil in a browser (textual-serve): 127.0.0.1, an access token in the address
    vigil --input-format stream-json …   the Agent SDKs' `claude`: control protocol on stdin/stdout
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import Any

# nothing heavier before the arguments are parsed: `vigil --version` and a bad flag answer at once
from tui_app.runtime.permissions.modes import PERMISSION_MODES

SUBCOMMANDS = ("sessions", "replay", "artifacts")
#: the host's commands (tui_app/host/cli_commands.py); the names are binding
HOST_COMMANDS = ("new", "ls", "attach", "send", "watch", "inbox", "answer", "end", "host")


class OneLineParser(argparse.ArgumentParser):
    """Bad flags get one line and exit code 2, not a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        say(f"{message} (see vigil --help)")
        raise SystemExit(2)


def say(message: str) -> None:
    """One line on stderr, made inert for the terminal (messages quote paths, settings, logs)."""
    from tui_app.runtime.results.sanitize import neutralize

    sys.stderr.write(f"vigil: {neutralize(message)}\n")


def _tools_list(value: str) -> list[str]:
    # Claude Code accepts both "Read,Grep" and "Read Grep"; parentheses may contain spaces
    out, depth, current = [], 0, ""
    for ch in value:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if ch in ", " and depth == 0:
            if current.strip():
                out.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        out.append(current.strip())
    return out


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} must be at least 1")
    return number


#: the subcommands, which `vigil --help` lists (each has its own --help)
COMMANDS_HELP = """commands:
  vigil sessions [--tui]         the recorded sessions (--tui: browse them, open one read-only)
  vigil replay ID                a recorded session in the TUI, with a timeline; nothing is executed
  vigil artifacts ID             the large outputs a session kept, browsable at any size
  vigil serve [-- ARGS]          Vigil in a browser on 127.0.0.1, an access token in the address
  vigil acp                      Vigil as an ACP agent on stdio, for editors (Zed, Toad …)

A session id may be given as any unique prefix of it."""


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="vigil", description="Supervise an AI coding agent from your terminal.",
                           epilog=COMMANDS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-p", "--print", dest="prompt", metavar="PROMPT",
                        help="run one turn headless and print the result")
    parser.add_argument("--output-format", choices=["text", "json", "stream-json", "events"], default=None,
                        help="headless output (default text); with --demo and no -p: the demo without the TUI")
    parser.add_argument("--permission-mode", choices=list(PERMISSION_MODES))
    parser.add_argument("--allowedTools", "--allowed-tools", dest="allowed_tools", action="append",
                        type=_tools_list, default=[], metavar="RULES", help="rules to allow, e.g. 'Bash(git diff *)'")
    parser.add_argument("--disallowedTools", "--disallowed-tools", dest="disallowed_tools", action="append",
                        type=_tools_list, default=[], metavar="RULES", help="rules to deny")
    parser.add_argument("--provider", choices=["anthropic", "openai", "scripted"])
    parser.add_argument("--model")
    parser.add_argument("--base-url")
    parser.add_argument("--script", metavar="FILE", help="a scripted model (JSON steps)")
    parser.add_argument("--settings", metavar="FILE", help="an extra settings file (highest priority)")
    parser.add_argument("--no-claude-settings", action="store_true", help="ignore ~/.claude and .claude files")
    parser.add_argument("--mcp-config", action="append", default=[], metavar="FILE")
    parser.add_argument("--strict-mcp-config", action="store_true")
    parser.add_argument("--trust-project", action="store_true",
                        help="run the project's own hooks and .mcp.json servers without asking (see README)")
    parser.add_argument("--cwd", default=None, metavar="DIR", help="working directory (default: current)")
    parser.add_argument("--max-turns", type=_positive_int, metavar="N", help="stop after N model steps")
    parser.add_argument("--resume", metavar="ID", help="continue a recorded session")
    parser.add_argument("--agent", default=None, metavar="NAME",
                        help="the agent to supervise: vigil (its own, the default), claude-code (your Claude Code "
                             "CLI), or an ACP agent: a preset on PATH (claude, codex, gemini, opencode, copilot) or "
                             "an entry of the settings' `agents`")
    parser.add_argument("--agent-command", metavar="PATH", help="the external agent's executable (default: on PATH)")
    parser.add_argument("--demo", action="store_true",
                        help="the bundled demo on a fresh sample project (headless with --output-format)")
    parser.add_argument("--host", action="store_true",
                        help="the session runs in the host and outlives this window (ctrl+q detaches)")
    parser.add_argument("--version", action="version", version="vigil 0.1.0")
    from tui_app.headless.sdk_cli import add_sdk_arguments

    add_sdk_arguments(parser)  # what the Agent SDKs pass to `claude`
    return parser


def options_from(args: argparse.Namespace, interactive: bool):
    import os

    from tui_app.assemble import SessionOptions

    return SessionOptions(
        cwd=args.cwd or os.getcwd(), script=args.script, provider=args.provider, model=args.model,
        base_url=args.base_url, permission_mode=args.permission_mode,
        allowed_tools=[r for group in args.allowed_tools for r in group],
        disallowed_tools=[r for group in args.disallowed_tools for r in group],
        settings_file=args.settings, no_claude_settings=args.no_claude_settings, mcp_config=args.mcp_config,
        strict_mcp_config=args.strict_mcp_config, max_turns=args.max_turns, resume=args.resume,
        interactive=interactive, add_dirs=list(getattr(args, "add_dir", None) or []),
        agent=args.agent, agent_command=args.agent_command, trust_project=args.trust_project,
    )


def run_prompt(args: argparse.Namespace) -> int:
    from tui_app.assemble import SetupError, build_session
    from tui_app.headless.runner import run_headless

    try:
        session = build_session(options_from(args, interactive=False))
    except SetupError as exc:
        say(str(exc))
        return 2
    from tui_app.runtime.processes.shutdown import run_main

    return run_main(run_headless(session, args.prompt, args.output_format or "text"))


#: what the headless demo may do without asking, on its throwaway copy of the sample project
DEMO_HEADLESS_ALLOW = ["Bash(python3 -m unittest *)"]


def run_demo_headless(args: argparse.Namespace) -> int:
    """The demo in a plain terminal: a fresh copy of the sample project, a readable transcript."""
    from tui_app.assemble import SetupError, build_session
    from tui_app.demo import DEMO_PROMPT, copy_sample_project
    from tui_app.headless.runner import EXIT_LOG_FAILED
    from tui_app.headless.transcript import print_transcript

    project = copy_sample_project()
    args.cwd = str(project)
    if args.script is None:
        args.provider = "scripted"  # the demo is scripted even when a real provider is configured
    lets_the_demo_act = args.permission_mode is None and not args.allowed_tools
    if lets_the_demo_act:
        args.permission_mode = "acceptEdits"
        args.allowed_tools = [DEMO_HEADLESS_ALLOW]
    try:
        session = build_session(options_from(args, interactive=False))
    except SetupError as exc:
        say(str(exc))
        return 2
    fmt = args.output_format or "text"
    # a machine-readable format keeps stdout to its lines: the words for a person go to stderr
    words = sys.stdout if fmt == "text" else sys.stderr
    print(f"Vigil demo: a scripted model works on a fresh copy of a sample project in {project}", file=words)
    if lets_the_demo_act:
        print("Nobody is asked in a plain terminal, so the demo may edit its copy and run its tests "
              f"(--permission-mode acceptEdits --allowedTools '{DEMO_HEADLESS_ALLOW[0]}'); "
              "pass --permission-mode default to see those calls denied instead.", file=words)
    from tui_app.runtime.processes.shutdown import run_main

    if fmt != "text":
        from tui_app.headless.runner import run_headless

        return run_main(run_headless(session, DEMO_PROMPT, fmt, sys.stdout))

    async def go() -> int:
        print_transcript(session, sys.stdout)
        await session.start()
        try:
            turn = await session.run_turn(DEMO_PROMPT)
        finally:
            await session.close()
        print(f"\n[{turn.reason}] {turn.steps} model steps · session {session.id}")
        if session.log_failure is not None:
            say(f"stopped: the session log could not be written ({session.log_failure})")
            return EXIT_LOG_FAILED
        return 0 if turn.reason == "completed" else 1

    return run_main(go())


DEMO_BANNER = ("This is Vigil's scripted demo: no model is connected, the steps are played from a script, but "
               "every tool call is real and runs on a fresh copy of a sample project ({project}). To connect a "
               "real model, set ANTHROPIC_API_KEY (or OPENAI_API_KEY, with OPENAI_BASE_URL for a local server) "
               "and run vigil again. Keys: y/n in dialogs, Esc interrupts, shift+tab permission mode, "
               "ctrl+p commands, ctrl+q quits.")


def textual_driver_in_charge() -> bool:
    """A Textual driver was chosen for us (textual-serve runs each app with TEXTUAL_DRIVER set to
    its web driver, its stdout a pipe to the server): the TUI, not a plain transcript."""
    import os

    return bool(os.environ.get("TEXTUAL_DRIVER"))


def wants_demo(args: argparse.Namespace) -> bool:
    """The demo when asked for, or when nothing names a model (no script, provider, key or URL)."""
    if args.demo:
        return True
    if args.script or args.resume or args.agent not in (None, "vigil"):
        return False
    if args.provider == "scripted":
        return True
    if args.provider is None and settings_agent(args) not in (None, "vigil"):
        return False  # settings name an external agent to supervise
    from tui_app.providers.select import ProviderSetupError, resolve_config

    try:
        return resolve_config(provider=args.provider, model=args.model, base_url=args.base_url) is None
    except ProviderSetupError:
        return False  # building the session says what is wrong


def settings_agent(args: argparse.Namespace) -> Any:
    """The agent the settings files name (`"agent"`), if any."""
    import os

    from tui_app.config import SettingsError, load_settings

    try:
        loaded = load_settings(cwd=args.cwd or os.getcwd(), settings_file=args.settings,
                               no_claude_settings=args.no_claude_settings)
    except (SettingsError, OSError):
        return None  # building the session says what is wrong
    return loaded.values.get("agent")


def build_tui(args: argparse.Namespace, demo: bool, app_class: Any = None) -> Any:
    """The TUI app on the demo's fresh sample project, on a resumed session (its log shown first),
    or in the cwd; an exit code when the session cannot be built."""
    from tui_app.assemble import SessionBusy, SetupError, build_session
    from tui_app.demo import DEMO_PROMPT, copy_sample_project

    banner = None
    if demo:
        project = copy_sample_project()
        args.cwd = str(project)
        if args.script is None:
            args.provider = "scripted"
        banner = DEMO_BANNER.format(project=project)
    options = options_from(args, interactive=True)
    options.ask_trust = True  # the TUI's dialog answers whether the project's own code may run
    try:
        session = build_session(options)
    except SessionBusy as busy:  # another Vigil writes it: offer to show it read-only instead
        from tui_app.app.replay_app import ReplayApp

        return ReplayApp(in_use=(busy.session_id, busy.pid))
    except SetupError as exc:
        say(str(exc))
        return 2
    from tui_app.app.vigil_app import VigilApp
    from tui_app.runtime.log.eventlog import read_events

    prefill = read_events(session.log_path).events if args.resume and session.log_path else []
    history = [e.prompt for e in prefill if e.type == "TurnStarted"]
    return (app_class or VigilApp)(session, prefill=prefill, history=history, auto_prompt=DEMO_PROMPT if demo else None,
                    banner=banner, tag="demo" if demo else "resumed" if args.resume else "", handle_signals=True)


def run_tui(args: argparse.Namespace, demo: bool) -> int:
    while True:
        app = build_tui(args, demo)
        if isinstance(app, int):
            return app
        try:
            code = app.run()
        finally:
            close = getattr(app, "close_runtime", None)  # a read-only replay has no runtime
            if close is not None:
                close()  # whatever ended the app, no child process outlives it
        agent = getattr(app, "agent_request", None)
        if agent:  # the palette's "Agent: NAME": a new session in the same directory
            args.agent, args.resume, demo = agent, None, False
            continue
        target = getattr(app, "resume_request", None)
        if not target:
            return code or 0
        args.resume, demo = target, False  # /resume: the chosen session opens in a new app


def run_sessions(argv: list[str]) -> int:
    """`vigil sessions`: the recorded sessions, newest first."""
    from tui_app.headless.terminal import json_line
    from tui_app.runtime.log.catalog import list_sessions
    from tui_app.runtime.results.sanitize import neutralize

    parser = OneLineParser(prog="vigil sessions", description="List recorded sessions, newest first.")
    parser.add_argument("--json", action="store_true", help="one JSON object per session")
    parser.add_argument("--tui", action="store_true", help="browse them in the TUI; Enter opens one read-only")
    args = parser.parse_args(argv)
    if args.tui:
        from tui_app.app.replay_app import run_replay_tui

        return run_replay_tui(None)
    sessions = list_sessions()
    if args.json:
        for s in sessions:
            print(json_line({"id": s.id, "started": s.started, "cwd": s.cwd, "provider": s.provider,
                             "model": s.model, "first_prompt": s.first_prompt, "turns": s.turns,
                             "status": s.status}))
        return 0
    if not sessions:
        from tui_app.runtime.log.paths import sessions_dir

        print(f"No recorded sessions in {neutralize(str(sessions_dir()))}")
        return 0
    import time

    rows = [("ID", "STARTED", "TURNS", "STATUS", "MODEL", "CWD", "FIRST PROMPT")]
    for s in sessions:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.started)) if s.started else "?"
        prompt = " ".join(neutralize(s.first_prompt).split())
        rows.append((s.id, started, str(s.turns), neutralize(s.status), neutralize(s.model), neutralize(s.cwd),
                     prompt if len(prompt) <= 60 else prompt[:59] + "…"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1])
    return 0


def run_replay(argv: list[str]) -> int:
    """`vigil replay ID`: a recorded session read-only in the TUI, or printed with --output-format
    (and when the output is not a terminal); nothing is executed."""
    from tui_app.headless.replay import replay

    parser = OneLineParser(prog="vigil replay", description="Show a recorded session without executing anything.")
    parser.add_argument("session_id", metavar="ID")
    parser.add_argument("--output-format", choices=["text", "stream-json"], default=None,
                        help="print it instead of opening the TUI (text when the output is not a terminal)")
    args = parser.parse_args(argv)
    from tui_app.runtime.log.catalog import UnknownSession, resolve_session_id

    try:
        args.session_id = resolve_session_id(args.session_id)  # a unique prefix is enough
    except UnknownSession as exc:
        say(str(exc))
        return 2
    if args.output_format is None and ((sys.stdout.isatty() and sys.stdin.isatty()) or textual_driver_in_charge()):
        from tui_app.app.replay_app import run_replay_tui

        return run_replay_tui(args.session_id)
    return replay(args.session_id, args.output_format or "text")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = dispatch(argv)
        # a reader that left early is found here, not in the interpreter's flush at exit (which
        # would print "Exception ignored … BrokenPipeError" on stderr)
        with contextlib.suppress(ValueError):  # stdout already closed
            sys.stdout.flush()
        return code
    except BrokenPipeError:  # `vigil sessions | head -2`: the reader has what it wanted
        from tui_app.headless.terminal import EXIT_OUTPUT_CLOSED, silence_stdout

        silence_stdout()
        return EXIT_OUTPUT_CLOSED


def dispatch(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "sessions":
        return run_sessions(argv[1:])
    if argv and argv[0] == "replay":
        return run_replay(argv[1:])
    if argv and argv[0] == "acp":
        return run_acp(argv[1:])
    if argv and argv[0] == "serve":
        from tui_app.app.serve import main as serve_main

        return serve_main(argv[1:])
    if argv and argv[0] == "artifacts":
        from tui_app.app.artifacts_command import main as artifacts_main

        return artifacts_main(argv[1:])
    if argv and argv[0] in HOST_COMMANDS:
        from tui_app.host.cli_commands import main as host_main

        return host_main(argv[0], argv[1:])
    if argv and argv[0] in SUBCOMMANDS:
        say(f"`{argv[0]}` is not available yet")
        return 2
    args = build_parser().parse_args(argv)
    if args.input_format == "stream-json":  # an Agent SDK drives Vigil over stdin and stdout
        return run_sdk_command(args)
    if (args.prompt is None and not args.demo and (args.output_format or args.input_format)
            and not sys.stdin.isatty() and not wants_demo(args)):
        args.prompt = sys.stdin.read()  # `… | vigil --output-format json`: the prompt comes on stdin
    if args.prompt is not None:
        if not args.prompt.strip():
            say("the prompt is empty")
            return 2
        with exiting_on_signals():
            return run_prompt(args)
    if args.host and not args.demo:
        from tui_app.host.cli_commands import tui_in_host

        return tui_in_host(args)
    demo = wants_demo(args)
    if demo and (args.output_format is not None or not (sys.stdout.isatty() or textual_driver_in_charge())):
        with exiting_on_signals():
            return run_demo_headless(args)
    return run_tui(args, demo)


def run_acp(argv: list[str]) -> int:
    """`vigil acp`: an ACP agent on stdio; each session opens in the directory the client names,
    with the model and permission flags given here."""
    import dataclasses

    parser = build_parser()
    parser.prog = "vigil acp"
    args = parser.parse_args(argv)
    if wants_demo(args) and not args.demo:
        sys.stderr.write("vigil: no model is configured (set ANTHROPIC_API_KEY, or OPENAI_BASE_URL and --model, "
                         "or pass --script FILE)\n")
        return 2
    if args.demo and args.script is None:
        args.provider = "scripted"
    base = options_from(args, interactive=True)

    def options_for(cwd: str):
        return dataclasses.replace(base, cwd=cwd)

    from tui_app.headless.acp_agent import serve
    from tui_app.runtime.processes.shutdown import run_main

    with exiting_on_signals():
        return run_main(serve(options_for))


def run_sdk_command(args: argparse.Namespace) -> int:
    """Vigil as the Agent SDKs' `claude`: never the TUI, never the demo unless asked for."""
    from tui_app.headless.sdk_cli import run_sdk

    if wants_demo(args) and not args.demo:
        sys.stderr.write("vigil: no model is configured (set ANTHROPIC_API_KEY, or OPENAI_BASE_URL and --model, "
                         "or pass --script FILE)\n")
        return 2
    if args.demo and args.script is None:
        from tui_app.demo import copy_sample_project

        args.cwd, args.provider = str(copy_sample_project()), "scripted"
    with exiting_on_signals():
        return run_sdk(args, options_from(args, interactive=args.permission_prompt_tool == "stdio"))


@contextlib.contextmanager
def exiting_on_signals() -> Iterator[None]:
    """Headless: SIGTERM or SIGHUP end the run the way an exception would, so the interpreter's
    exit handlers still stop every process group a tool started (the default action would skip
    them and leave the children running): the run's own task is cancelled, its `finally` blocks
    close the session, and the process exits 128 + the signal. The previous handlers come back
    afterwards."""
    import asyncio  # the run it guards is an asyncio one: no start-up cost added
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield  # `main` called from a thread (an embedding program): its signals are not ours
        return

    from tui_app.runtime.processes import shutdown

    received: list[int] = []

    def stop(number: int, _frame: object) -> None:
        # bounded: short graces for the children, and a hard deadline should anything hang
        shutdown.begin(report=sys.stderr)
        received.append(number)
        if not shutdown.cancel_main():  # not in the event loop yet (or any more): no session to close
            raise SystemExit(128 + number)

    numbers = (signal.SIGTERM, signal.SIGHUP)
    previous = {number: signal.getsignal(number) for number in numbers}
    for number in numbers:
        signal.signal(number, stop)
    try:
        yield
    except asyncio.CancelledError:
        if received:  # the run we cancelled
            raise SystemExit(128 + received[0]) from None
        raise
    else:
        if received:  # the run ended the orderly way after the signal
            raise SystemExit(128 + received[0])
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        # after a signal the deadline stays armed: the interpreter's own exit (joining threads)
        # is one more place a stuck thread could hold the process

