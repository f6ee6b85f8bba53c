"""Driving the approval stage the way a session does: the real pipeline, the real RulePolicy and
broker, real hook processes, and a client that answers each request when it is announced (on the
runtime's loop, like the TUI's dialog: no thread, no polling)."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakes import Recorder, make_env
from tests.hook_helpers import handler, make_hooks
from tests.perm_specs import BASH
from tui_app.runtime.call import CallEnv
from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.permissions.broker import ApprovalAnswer, ApprovalBroker
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule


def setup(tmp_path: Path, *specs: ToolSpec, interactive: bool = True, rules: dict[str, list[str]] | None = None,
          hooks_config: dict[str, Any] | None = None, timeout_s: float | None = None, mode: str = "default",
          ) -> tuple[CallEnv, Recorder, ApprovalBroker]:
    loaded = [make_rule(t, b, "session") for b, ts in (rules or {}).items() for t in ts]
    policy = RulePolicy(cwd=str(tmp_path), rules=loaded, mode=mode,  # type: ignore[arg-type]
                        destinations={"localSettings": tmp_path / ".vigil" / "settings.local.json"})
    broker = ApprovalBroker(interactive=interactive, timeout_s=timeout_s)
    env, rec = make_env(*(specs or (BASH,)), policy=policy, broker=broker, cwd=str(tmp_path))
    if hooks_config is not None:
        env.hooks, _ = make_hooks(hooks_config, tmp_path, recorder=rec)
    return env, rec, broker


def answering(env: CallEnv, rec: Recorder, broker: ApprovalBroker,
              decide: Callable[[Any], ApprovalAnswer | None], delay: float = 0.0) -> list[bool]:
    """A client: each `PermissionRequested` is answered with `decide(event)` (None: not answered),
    `delay` seconds after it was announced. Returns what `broker.answer` said, in order."""
    results: list[bool] = []

    def emit(event: Any) -> Any:
        event = rec(event)
        if event.type == "PermissionRequested":
            answer = decide(event)
            if answer is not None:
                asyncio.get_running_loop().call_later(
                    delay, lambda: results.append(broker.answer(event.request_id, answer)))
        return event

    env.emit = emit
    return results


def allow(event: Any, **kw: Any) -> ApprovalAnswer:
    return ApprovalAnswer("allow", input_sha256=event.input_sha256, **kw)


def deny(event: Any, **kw: Any) -> ApprovalAnswer:
    return ApprovalAnswer("deny", input_sha256=event.input_sha256, **kw)


def permission_hook(tmp_path: Path, answers: dict[str, dict[str, Any]], log: Path | None = None) -> dict[str, Any]:
    """A PermissionRequest hook (a real process) that answers by the command it is asked about:
    `answers` maps a command to its decision object; other commands get no decision. With `log`,
    it writes each stdin it was given there, one JSON a line."""
    script = tmp_path / "permission_hook.py"
    script.write_text(
        "import json, sys\n"
        "payload = json.loads(sys.stdin.read())\n"
        f"log = {str(log) if log else ''!r}\n"
        "if log:\n"
        "    with open(log, 'a', encoding='utf-8') as f:\n"
        "        f.write(json.dumps(payload) + '\\n')\n"
        f"answers = {json.dumps(answers)!r}\n"
        "decision = json.loads(answers).get(payload['tool_input'].get('command'))\n"
        "if decision is not None:\n"
        "    print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PermissionRequest', 'decision': decision}}))\n",
        encoding="utf-8")
    return {"PermissionRequest": [{"hooks": [handler(f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}")]}]}


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []
