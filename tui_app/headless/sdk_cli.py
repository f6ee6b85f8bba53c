"""The command-line flags the Claude Agent SDKs pass to `claude`, so that `vigil` can be their
`cli_path`: what Vigil does with each, and the run they start (`--input-format stream-json`).

Flags Vigil has no feature for are accepted, so an SDK's command line never fails, and named on
stderr once ("… is not supported; ignored"), so nobody believes they took effect.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from typing import Any

#: accepted and ignored, with a note on stderr: Vigil has nothing they could switch
UNSUPPORTED = ("--fallback-model", "--betas", "--max-budget-usd", "--json-schema", "--plugin-dir",
               "--resume-session-at", "--resume-drops-turn", "--task-budget", "--thinking-display")
UNSUPPORTED_SWITCHES = ("--session-mirror",)


def add_sdk_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Agent SDK compatibility (vigil as the `claude` the SDKs run)")
    group.add_argument("--input-format", choices=["text", "stream-json"], default=None,
                       help="stream-json: prompts and control requests on stdin (the Agent SDKs' protocol)")
    group.add_argument("--verbose", action="store_true", help="accepted (stream-json is always complete)")
    group.add_argument("--system-prompt", default=None, metavar="TEXT", help="replace the system prompt")
    group.add_argument("--system-prompt-file", default=None, metavar="FILE")
    group.add_argument("--append-system-prompt", default=None, metavar="TEXT")
    group.add_argument("--permission-prompt-tool", default=None, metavar="NAME",
                       help="stdio: ask the driving SDK (can_use_tool) when a call needs approval")
    group.add_argument("--include-partial-messages", action="store_true", help="stream_event lines")
    group.add_argument("--include-hook-events", action="store_true", help="hook_started / hook_response lines")
    group.add_argument("-c", "--continue", dest="continue_session", action="store_true",
                       help="continue the most recent session in this directory")
    group.add_argument("--session-id", default=None, metavar="ID", help="the id of a new session")
    group.add_argument("--fork-session", action="store_true", help="with --resume/--continue: a new session")
    group.add_argument("--add-dir", dest="add_dir", action="append", default=[], metavar="DIR",
                       help="another working directory (repeatable)")
    group.add_argument("--tools", default=None, metavar="NAMES", help="the tools the model is shown ('' none)")
    group.add_argument("--setting-sources", default=None, metavar="SOURCES")
    group.add_argument("--effort", default=None, metavar="LEVEL")
    group.add_argument("--max-thinking-tokens", type=int, default=None, metavar="N")
    group.add_argument("--thinking", choices=["adaptive", "enabled", "disabled"], default=None)
    for flag in UNSUPPORTED:
        group.add_argument(flag, dest="unsupported_" + flag[2:].replace("-", "_"), default=None,
                           help=argparse.SUPPRESS)
    for flag in UNSUPPORTED_SWITCHES:
        group.add_argument(flag, dest="unsupported_" + flag[2:].replace("-", "_"), action="store_const",
                           const="on", default=None, help=argparse.SUPPRESS)


def note_unsupported(args: argparse.Namespace) -> None:
    for flag in (*UNSUPPORTED, *UNSUPPORTED_SWITCHES):
        if getattr(args, "unsupported_" + flag[2:].replace("-", "_"), None) is not None:
            sys.stderr.write(f"vigil: {flag} is not supported; ignored\n")
    if args.permission_prompt_tool not in (None, "stdio"):
        sys.stderr.write(f"vigil: --permission-prompt-tool {args.permission_prompt_tool!r} is not supported "
                         "(only stdio); calls that need approval are denied\n")


class SdkSetupError(Exception):
    pass


def _continue_target(cwd: str) -> str | None:
    from tui_app.runtime.log.catalog import list_sessions

    here = os.path.realpath(cwd)
    for summary in list_sessions():
        if summary.cwd and os.path.realpath(summary.cwd) == here:
            return summary.id
    return None


def _fork(session_id: str) -> str:
    """A copy of a recorded session under a new id, so resuming it leaves the original as it was."""
    from tui_app.runtime.log.catalog import valid_session_id
    from tui_app.runtime.log.paths import events_path
    from tui_app.runtime.session import new_session_id

    source = events_path(session_id)
    if not valid_session_id(session_id) or not source.is_file():
        raise SdkSetupError(f"no recorded session {session_id!r} to fork")
    forked = new_session_id()
    target = events_path(forked)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return forked


def without_sdk_servers(mcp_config: list[str]) -> tuple[list[str], list[str]]:
    """The SDKs pass their in-process MCP servers (`"type": "sdk"`, answered over the control
    protocol's `mcp_message`) in `--mcp-config`; Vigil does not host those: they are left out (and
    named) so the other servers still start."""
    kept, dropped = [], []
    for value in mcp_config:
        if not value.lstrip().startswith("{"):
            kept.append(value)
            continue
        try:
            data = json.loads(value)
            servers = data["mcpServers"]
        except (ValueError, KeyError, TypeError):
            kept.append(value)  # the MCP loader says what is wrong with it
            continue
        if not isinstance(servers, dict):
            kept.append(value)
            continue
        sdk = [name for name, entry in servers.items() if isinstance(entry, dict) and entry.get("type") == "sdk"]
        dropped += sdk
        rest = {name: entry for name, entry in servers.items() if name not in sdk}
        if rest or not sdk:
            kept.append(json.dumps({**data, "mcpServers": rest}))
    return kept, dropped


def prepare_options(args: argparse.Namespace, options: Any) -> Any:
    """Fold the SDK's session flags into the options: which session, which settings files, and
    the environment the provider reads (thinking)."""
    options.mcp_config, dropped = without_sdk_servers(list(options.mcp_config))
    for name in dropped:
        sys.stderr.write(f"vigil: the SDK's in-process MCP server {name!r} is not supported; left out\n")
    if args.continue_session and not options.resume:
        options.resume = _continue_target(options.cwd)
    if args.fork_session and options.resume:
        options.resume = _fork(options.resume)
    if args.session_id:
        from tui_app.runtime.log.catalog import valid_session_id
        from tui_app.runtime.log.paths import events_path

        if options.resume:
            raise SdkSetupError("--session-id names a new session; it cannot be combined with --resume")
        if not valid_session_id(args.session_id):
            raise SdkSetupError(f"--session-id {args.session_id!r} is not a valid session id")
        if events_path(args.session_id).exists():
            raise SdkSetupError(f"session {args.session_id} already exists (use --resume to continue it)")
        options.session_id = args.session_id
    if args.setting_sources is not None:
        sources = {s.strip() for s in args.setting_sources.split(",") if s.strip()}
        if not {"user", "project", "local"} <= sources:
            # Vigil reads Claude Code's settings files all or none; fewer sources means none of them
            options.no_claude_settings = True
    if args.thinking == "disabled":
        os.environ["MAX_THINKING_TOKENS"] = "0"
    elif args.max_thinking_tokens is not None:
        os.environ["MAX_THINKING_TOKENS"] = str(args.max_thinking_tokens)
    return options


def apply_to_options(args: argparse.Namespace, options: Any) -> Any:
    """What the flags change in the session to build: the system prompt, the tools shown, the effort."""
    from dataclasses import replace

    system_prompt = args.system_prompt
    if args.system_prompt_file is not None:
        try:
            with open(args.system_prompt_file, encoding="utf-8") as handle:
                system_prompt = handle.read()
        except OSError as exc:
            raise SdkSetupError(f"cannot read --system-prompt-file: {exc}") from None
    tools = None
    if args.tools is not None and args.tools.strip() != "default":
        tools = [t.strip() for t in args.tools.replace(" ", ",").split(",") if t.strip()]
    return replace(options, system_prompt=system_prompt, append_system_prompt=args.append_system_prompt or "",
                   tools=tools, effort=args.effort or None)


def run_sdk(args: argparse.Namespace, options: Any) -> int:
    """`--input-format stream-json`: serve the Agent SDK's protocol on stdin and stdout."""
    from tui_app.assemble import SetupError, build_session
    from tui_app.headless.sdk_mode import run_sdk_mode
    from tui_app.runtime.processes.shutdown import run_main

    note_unsupported(args)
    try:
        session = build_session(apply_to_options(args, prepare_options(args, options)))
    except (SetupError, SdkSetupError) as exc:
        sys.stderr.write(f"vigil: {exc}\n")
        return 2
    return run_main(run_sdk_mode(session, prompt_tool=args.permission_prompt_tool,
                                 partial=args.include_partial_messages, hook_events=args.include_hook_events))
