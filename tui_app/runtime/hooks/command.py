"""Claude Code-compatible command hooks: the `HookRunner` the pipeline and the turn loop call.

All matching hooks of an event run in parallel (each command once) and their words are combined:
deny > ask > allow; `updatedInput` rewrites apply in configuration order; additional context is
kept in configuration order. Every run is visible: a `HookRun` event when it starts and one when
it ends (exit code, duration, decision — or timeout / could not start), and a `Warning` for each
failure, because a hook that fails decides nothing and the user must know it did not run.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any

from tui_app.runtime.events import HookRun, Warning
from tui_app.runtime.hooks.config import HookConfig, HookHandler
from tui_app.runtime.hooks.output import HookVerdict, interpret
from tui_app.runtime.hooks.process import KILL_GRACE_S, ProcessResult, run_hook_process
from tui_app.runtime.hooks.runner import (
    HookCall,
    PermissionHookAnswer,
    PostToolUseOutcome,
    PreToolUseOutcome,
    PromptOutcome,
    StopOutcome,
)
from tui_app.runtime.hooks.seal import broken

_RANK = {"allow": 0, "ask": 1, "deny": 2}


def compose_inputs(original: dict[str, Any], rewrites: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Each rewrite is a whole new input made from the original; applied in configuration order,
    each contributes what it changed, so two hooks that rewrite different keys both count."""
    if not rewrites:
        return None
    result = dict(original)
    for rewrite in rewrites:
        for key in original.keys() | rewrite.keys():
            if key not in rewrite:
                result.pop(key, None)
            elif key not in original or rewrite[key] != original[key]:
                result[key] = rewrite[key]
    return result


class CommandHooks:
    def __init__(
        self,
        config: HookConfig,
        *,
        project_dir: str,
        cwd: str,
        emit: Callable[[Any], Any],
        aliases_of: Callable[[str], tuple[str, ...]] | None = None,
        kill_grace_s: float = KILL_GRACE_S,
        seals: dict[tuple[str, tuple[str, ...] | None], dict[str, str]] | None = None,
    ) -> None:
        self.config = config
        #: handler key → the scripts its command names, sealed at start (see `seal`)
        self.seals = seals or {}
        self.project_dir = project_dir
        self.cwd = cwd
        self.emit = emit
        self.aliases_of = aliases_of or (lambda _name: ())
        self.kill_grace_s = kill_grace_s
        #: the reasoning effort hooks are told (Claude Code's `effort.level`; its default is medium)
        self.effort = "medium"
        self._background: set[asyncio.Task[Any]] = set()

    # ---- running ------------------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        return {**os.environ, "CLAUDE_PROJECT_DIR": self.project_dir, "VIGIL_PROJECT_DIR": self.project_dir}

    async def _run(self, event: str, payload: dict[str, Any], match: str | None = None,
                   call_id: str | None = None) -> list[HookVerdict]:
        aliases = self.aliases_of(match) if match is not None and event in _TOOL_EVENTS else ()
        handlers = self.config.handlers(event, match, aliases)
        if not handlers:
            return []
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
        return list(await asyncio.gather(*(self._run_one(event, h, data, call_id) for h in handlers)))

    async def _run_one(self, event: str, handler: HookHandler, data: bytes, call_id: str | None) -> HookVerdict:
        self.emit(HookRun(call_id=call_id, event=event, command=handler.label, status="started"))
        changed = broken(self.seals.get(handler.key, {}))
        try:
            result = (ProcessResult("spawn_failed", None, "", "", 0, error=(
                f"{changed} is not the script it was when the session started (changed, replaced or new); "
                "it was not run. Restart Vigil to use the new version")) if changed is not None
                      else await self._execute(event, handler, data))
        except asyncio.CancelledError:
            self.emit(HookRun(call_id=call_id, event=event, command=handler.label, status="cancelled",
                              message="no longer needed (the request was answered, or the turn stopped)"))
            raise
        verdict = interpret(event, handler, result)
        self.emit(HookRun(call_id=call_id, event=event, command=handler.label, status=verdict.status,
                          exit_code=verdict.exit_code, duration_ms=verdict.duration_ms,
                          decision=verdict.decision or ("block" if verdict.block else None),
                          message=verdict.message))
        if verdict.failed:
            self.emit(Warning(call_id=call_id, code=f"hook_{verdict.status}",
                              message=f"{event} hook error: {handler.label}: {verdict.message}",
                              detail={"event": event, "command": handler.label, "exit_code": verdict.exit_code}))
        if verdict.system_message:
            self.emit(Warning(call_id=call_id, code="hook_system_message", message=verdict.system_message,
                              detail={"event": event, "command": handler.label}))
        if verdict.stop_reason:
            self.emit(Warning(call_id=call_id, code="hook_stopped", message=verdict.stop_reason,
                              detail={"event": event, "command": handler.label}))
        return verdict

    async def _execute(self, event: str, handler: HookHandler, data: bytes) -> ProcessResult:
        """One handler's run: a process. (A program driving Vigil may answer some handlers itself,
        as the Agent SDKs do with their callback hooks.)"""
        return await run_hook_process(handler, data, self.cwd, self._env(), self.kill_grace_s)

    def _common(self, session: dict[str, Any], event: str) -> dict[str, Any]:
        """Claude Code's common keys, in its order (`prompt_id` where a prompt is being served)."""
        common = {"session_id": session.get("session_id", ""), "transcript_path": session.get("transcript_path", ""),
                  "cwd": session.get("cwd", "")}
        if session.get("prompt_id"):
            common["prompt_id"] = session["prompt_id"]
        return {**common, "permission_mode": session.get("permission_mode", "default"),
                "effort": {"level": self.effort}, "hook_event_name": event}

    def _tool_payload(self, call: HookCall, event: str, **extra: Any) -> dict[str, Any]:
        session = {"session_id": call.session_id, "transcript_path": call.transcript_path, "cwd": call.cwd,
                   "prompt_id": call.prompt_id, "permission_mode": call.permission_mode}
        return {**self._common(session, event), "tool_name": call.tool_name, "tool_input": call.tool_input,
                "tool_use_id": call.tool_use_id, **extra}

    # ---- the HookRunner protocol -------------------------------------------------------------

    def has_permission_request_hooks(self, tool_name: str) -> bool:
        return bool(self.config.handlers("PermissionRequest", tool_name, self.aliases_of(tool_name)))

    async def pre_tool_use(self, call: HookCall) -> PreToolUseOutcome:
        verdicts = await self._run("PreToolUse", self._tool_payload(call, "PreToolUse"), call.tool_name,
                                   call.tool_use_id)
        outcome = PreToolUseOutcome()
        words = [(v.decision, v.reason) for v in verdicts if v.decision in _RANK]
        if words:
            top = max((w for w, _ in words), key=_RANK.__getitem__)
            outcome.decision = top  # type: ignore[assignment]
            outcome.reason = "; ".join(r for w, r in words if w == top and r)
        outcome.updated_input = compose_inputs(call.tool_input, [v.updated_input for v in verdicts
                                                                 if v.updated_input is not None])
        _fold(outcome, verdicts)
        return outcome

    async def permission_request(self, call: HookCall, suggestions: list[dict[str, Any]]
                                 ) -> PermissionHookAnswer | None:
        payload = self._tool_payload(call, "PermissionRequest", permission_suggestions=suggestions)
        verdicts = await self._run("PermissionRequest", payload, call.tool_name, call.tool_use_id)
        denials = [v for v in verdicts if v.decision == "deny"]
        if denials:
            return PermissionHookAnswer("deny", message="; ".join(v.reason for v in denials if v.reason),
                                        interrupt=any(v.interrupt for v in denials))
        allows = [v for v in verdicts if v.decision == "allow"]
        if not allows:
            return None
        return PermissionHookAnswer(
            "allow", message="; ".join(v.reason for v in allows if v.reason),
            updated_input=compose_inputs(call.tool_input, [v.updated_input for v in allows if v.updated_input]),
            updated_permissions=[u for v in allows for u in v.updated_permissions])

    async def post_tool_use(self, call: HookCall, tool_response: Any, duration_ms: int) -> PostToolUseOutcome:
        payload = self._tool_payload(call, "PostToolUse", tool_response=tool_response, duration_ms=duration_ms)
        return _post(await self._run("PostToolUse", payload, call.tool_name, call.tool_use_id))

    async def post_tool_use_failure(self, call: HookCall, error: str, is_interrupt: bool, duration_ms: int
                                    ) -> PostToolUseOutcome:
        payload = self._tool_payload(call, "PostToolUseFailure", error=error, is_interrupt=is_interrupt,
                                     duration_ms=duration_ms)
        return _post(await self._run("PostToolUseFailure", payload, call.tool_name, call.tool_use_id))

    async def user_prompt_submit(self, session: dict[str, Any], prompt: str) -> PromptOutcome:
        payload = {**self._common(session, "UserPromptSubmit"), "prompt": prompt}
        verdicts = await self._run("UserPromptSubmit", payload)
        blocks = [v.block or v.stop_reason for v in verdicts if v.block or v.stop_reason]
        return PromptOutcome(blocked=bool(blocks), reason="; ".join(b for b in blocks if b),
                             context=[c for v in verdicts for c in v.context])

    async def stop(self, session: dict[str, Any], last_message: str, active: bool) -> StopOutcome:
        payload = {**self._common(session, "Stop"), "stop_hook_active": active,
                   "last_assistant_message": last_message,
                   # Claude Code's keys: running background commands; scheduled prompts (Vigil has none)
                   "background_tasks": list(session.get("background_tasks") or []), "session_crons": []}
        verdicts = await self._run("Stop", payload)
        if any(v.stop_reason for v in verdicts):
            return StopOutcome()  # `continue: false` wins: the agent stops
        blocks = [v.block for v in verdicts if v.block]
        return StopOutcome(continue_with="\n".join(blocks) if blocks else None)  # type: ignore[arg-type]

    async def notification(self, session: dict[str, Any], message: str, title: str, kind: str) -> None:
        """Fired and not waited for: a notification never delays the dialog it announces."""
        payload = {**self._common(session, "Notification"), "message": message, "title": title,
                   "notification_type": kind}
        if not self.config.handlers("Notification", kind):
            return
        task = asyncio.ensure_future(self._run("Notification", payload, kind))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def session_start(self, session: dict[str, Any], source: str) -> list[str]:
        payload = {**self._common(session, "SessionStart"), "source": source}
        return [c for v in await self._run("SessionStart", payload, source) for c in v.context]

    async def session_end(self, session: dict[str, Any], reason: str) -> None:
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        await self._run("SessionEnd", {**self._common(session, "SessionEnd"), "reason": reason}, reason)


_TOOL_EVENTS = frozenset({"PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure"})


def _fold(outcome: PreToolUseOutcome | PostToolUseOutcome, verdicts: list[HookVerdict]) -> None:
    for verdict in verdicts:
        outcome.context.extend(verdict.context)
        if verdict.stop_reason and outcome.stop_reason is None:
            outcome.stop_reason = verdict.stop_reason
        if verdict.system_message:
            outcome.system_messages.append(verdict.system_message)


def _post(verdicts: list[HookVerdict]) -> PostToolUseOutcome:
    outcome = PostToolUseOutcome()
    blocks = [v.block for v in verdicts if v.block]
    if blocks:
        outcome.block_reason = "\n".join(blocks)  # type: ignore[arg-type]
    _fold(outcome, verdicts)
    return outcome
