"""What one hook run says, per event: exit codes and JSON output (docs/architecture.md §9.3).

* exit 0: stdout that starts with `{` is JSON output; other stdout is logged (and for
  UserPromptSubmit and SessionStart added to the model's context);
* exit 2: block, with the JSON `reason` if there is one, else stderr — PreToolUse denies the call,
  PostToolUse(Failure) tells the model, Stop makes the agent go on, UserPromptSubmit rejects the
  prompt; PermissionRequest, Notification and the session events ignore it;
* any other code: a non-blocking error (`<event> hook error` with the first stderr line);
* a hook that timed out or could not start decides nothing (fail-open, but always visible).

JSON: `continue: false` (+ `stopReason`), `systemMessage`, `suppressOutput` (accepted), top-level
`decision: block|approve` + `reason`, and `hookSpecificOutput` for the event.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from tui_app.runtime.hooks.config import HookHandler
from tui_app.runtime.hooks.process import ProcessResult

BLOCK_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "UserPromptSubmit"})
CONTEXT_FROM_STDOUT = frozenset({"UserPromptSubmit", "SessionStart"})
Status = Literal["ok", "blocked", "error", "timeout", "spawn_failed"]


@dataclass
class HookVerdict:
    handler: HookHandler
    status: Status
    exit_code: int | None
    duration_ms: int
    #: one line for the event log and the screen
    message: str = ""
    #: PreToolUse: allow / ask / deny; PermissionRequest: allow / deny
    decision: str | None = None
    reason: str = ""
    #: exit 2 or `decision: block` of a PostToolUse, PostToolUseFailure, Stop or UserPromptSubmit hook
    block: str | None = None
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[dict[str, Any]] = field(default_factory=list)
    interrupt: bool = False
    context: list[str] = field(default_factory=list)
    #: `continue: false`
    stop_reason: str | None = None
    system_message: str | None = None

    @property
    def failed(self) -> bool:
        return self.status in ("error", "timeout", "spawn_failed")


def interpret(event: str, handler: HookHandler, result: ProcessResult) -> HookVerdict:
    verdict = HookVerdict(handler, "ok", result.exit_code, result.duration_ms)
    if result.status == "spawn_failed":
        verdict.status, verdict.message = "spawn_failed", f"could not start: {result.error}"
        return verdict
    if result.status == "timeout":
        verdict.status, verdict.message = "timeout", result.error
        return verdict
    code = result.exit_code
    if handler.args is None and code in (126, 127):
        # `bash -c` could not find or execute the command
        verdict.status, verdict.message = "spawn_failed", f"could not start: {_first_line(result.stderr)}"
        return verdict
    if code == 0:
        _success(event, verdict, result.stdout)
    elif code == 2:
        _exit_two(event, verdict, result)
    else:
        verdict.status = "error"
        verdict.message = f"exit {code}: {_first_line(result.stderr) or 'no error output'}"
    return verdict


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def _json(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _exit_two(event: str, verdict: HookVerdict, result: ProcessResult) -> None:
    data = _json(result.stdout) or {}
    reason = data.get("reason") if isinstance(data.get("reason"), str) else None
    message = reason or result.stderr.strip() or f"Blocked by a {event} hook (exit 2)"
    if event not in BLOCK_EVENTS:
        verdict.status, verdict.message = "error", f"exit 2 (ignored for {event}): {_first_line(message)}"
        return
    verdict.status, verdict.message = "blocked", _first_line(message)
    if event == "PreToolUse":
        verdict.decision, verdict.reason = "deny", message
    else:
        verdict.block = message


def _success(event: str, verdict: HookVerdict, stdout: str) -> None:
    data = _json(stdout)
    if data is None:
        if stdout.lstrip().startswith("{"):
            verdict.status, verdict.message = "error", "output starts with `{` but is not a JSON object"
            return
        text = stdout.strip()
        verdict.message = _first_line(text)
        if text and event in CONTEXT_FROM_STDOUT:
            verdict.context.append(text)
        return
    if data.get("continue") is False:
        stop = data.get("stopReason")
        verdict.stop_reason = stop if isinstance(stop, str) and stop else f"Stopped by a {event} hook"
    if isinstance(data.get("systemMessage"), str):
        verdict.system_message = data["systemMessage"]
    reason = data.get("reason") if isinstance(data.get("reason"), str) else ""
    legacy = data.get("decision")
    if event == "PreToolUse" and legacy in ("approve", "block"):
        verdict.decision, verdict.reason = ("allow" if legacy == "approve" else "deny"), reason
    elif event in BLOCK_EVENTS and legacy == "block":
        verdict.block = reason or f"Blocked by a {event} hook"
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, dict):
        named = specific.get("hookEventName")
        if named not in (None, event):
            verdict.message = f"hookSpecificOutput for {named} ignored in a {event} hook"
        else:
            _specific(event, verdict, specific)
    if verdict.decision == "deny" or verdict.block is not None or verdict.stop_reason is not None:
        verdict.status = "blocked"
    if not verdict.message:
        verdict.message = verdict.reason or verdict.block or verdict.stop_reason or ""


def _specific(event: str, verdict: HookVerdict, out: dict[str, Any]) -> None:
    context = out.get("additionalContext")
    if isinstance(context, str) and context.strip():
        verdict.context.append(context)
    if event == "PreToolUse":
        word = out.get("permissionDecision")
        if word in ("allow", "ask", "deny"):
            verdict.decision = word
            reason = out.get("permissionDecisionReason")
            verdict.reason = reason if isinstance(reason, str) else verdict.reason
        if isinstance(out.get("updatedInput"), dict):
            verdict.updated_input = out["updatedInput"]
    elif event == "PermissionRequest":
        decision = out.get("decision")
        if not isinstance(decision, dict) or decision.get("behavior") not in ("allow", "deny"):
            return
        verdict.decision = decision["behavior"]
        message = decision.get("message")
        verdict.reason = message if isinstance(message, str) else ""
        verdict.interrupt = decision.get("interrupt") is True
        if verdict.decision == "allow":
            if isinstance(decision.get("updatedInput"), dict) and decision["updatedInput"]:
                verdict.updated_input = decision["updatedInput"]
            updates = decision.get("updatedPermissions")
            if isinstance(updates, list):
                verdict.updated_permissions = [u for u in updates if isinstance(u, dict)]
