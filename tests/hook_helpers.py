"""Helpers for hook tests: real scripts under tests/hooks, real processes, /proc checks."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from tests.fakes import Recorder
from tui_app.runtime.hooks.command import CommandHooks
from tui_app.runtime.hooks.config import HookConfig, parse_hooks
from tui_app.runtime.hooks.runner import HookCall

HOOKS = Path(__file__).parent / "hooks"
PY = shlex.quote(sys.executable)


def script(name: str, *args: Any) -> str:
    """A command line for a hook script (python scripts run with this interpreter)."""
    path = HOOKS / name
    head = f"{PY} {shlex.quote(str(path))}" if name.endswith(".py") else shlex.quote(str(path))
    return " ".join([head, *(shlex.quote(str(a)) for a in args)])


def handler(command: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": command, **extra}


def make_hooks(config: dict[str, Any], project: Path, recorder: Recorder | None = None,
               aliases: dict[str, tuple[str, ...]] | None = None, kill_grace_s: float = 0.5
               ) -> tuple[CommandHooks, Recorder]:
    groups, issues = parse_hooks(config, "test-settings.json")
    assert [i for i in issues if not i.warning_only] == [], issues
    hook_config = HookConfig()
    hook_config.extend(groups)
    recorder = recorder or Recorder()
    hooks = CommandHooks(hook_config, project_dir=str(project), cwd=str(project), emit=recorder,
                         aliases_of=lambda name: (aliases or {}).get(name, ()), kill_grace_s=kill_grace_s)
    return hooks, recorder


def one(event: str, *handlers: dict[str, Any], matcher: str | None = None) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": list(handlers)}
    if matcher is not None:
        group["matcher"] = matcher
    return {event: [group]}


def call(tool: str = "Bash", tool_input: dict[str, Any] | None = None, cwd: str = "/tmp") -> HookCall:
    return HookCall(session_id="sess-1", cwd=cwd, permission_mode="default", transcript_path="/tmp/events.jsonl",
                    tool_name=tool, tool_input=tool_input if tool_input is not None else {"command": "npm test"},
                    tool_use_id="toolu_01")


SESSION = {"session_id": "sess-1", "transcript_path": "/tmp/events.jsonl", "cwd": "/tmp",
           "permission_mode": "default"}


def live_members(pgid: int) -> list[int]:
    """Processes of a process group that still run (zombies waiting for a reaper are gone)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        state, group = fields[0], int(fields[2])
        if group == pgid and state not in ("Z", "X"):
            members.append(int(entry))
    return members


def says(output: dict[str, Any]) -> dict[str, Any]:
    """A hook that prints `output` and exits 0 (no interpreter to start: fast)."""
    return {"type": "command", "command": f"printf '%s' {shlex.quote(json.dumps(output))}"}


def pre(**specific: Any) -> dict[str, Any]:
    """A PreToolUse hook answering with these hookSpecificOutput fields."""
    return says({"hookSpecificOutput": {"hookEventName": "PreToolUse", **specific}})
