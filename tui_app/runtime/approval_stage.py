"""Stage 6 of a call, approval (docs/architecture.md §4): only when the permission stage said ask.

The tool's `prepare_approval` adds a preview; the request is registered with the ApprovalBroker
before it is announced (`PermissionRequested`, which carries the sha256 of exactly the input that
will run); then the client's answer and the PermissionRequest hooks race and the first answer
wins. Settling applies "always allow" rules and hook permission updates, emits one
`PermissionResolved` naming who decided, and records the approved hash that `start` checks. A
hook's rewritten input is validated, checked by the tool and put to the rules again.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from typing import Any

from tui_app.runtime.call import CallState, hook_call, ms_since, tool_checks, validated_input
from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.events import PermissionRequested, PermissionResolved, Warning
from tui_app.runtime.hooks.runner import PermissionHookAnswer
from tui_app.runtime.outcome import CallEnded, project_exception
from tui_app.runtime.permissions.broker import ApprovalAnswer, ApprovalBroker, ApprovalRequest, input_sha256
from tui_app.runtime.permissions.decision import PermissionDecision, PermissionQuery, combine_with_hook
from tui_app.runtime.results.sanitize import neutralize_display, reveal_controls


def summary_of(spec: ToolSpec, data: dict[str, Any]) -> str:
    target = spec.target(data)
    return f"{spec.name} {target}".strip()


async def approve(state: CallState, decision: PermissionDecision, with_hooks: bool = True) -> None:
    """Register, announce, race the client's answer against PermissionRequest hooks; settle."""
    spec, env = state.spec, state.env
    assert spec is not None and state.ctx is not None and state.flags is not None
    preview = None
    if spec.prepare_approval is not None:
        try:
            preview = await spec.prepare_approval(state.input, state.ctx)
        except Exception as exc:  # no preview is still an ask, never a silent allow
            env.emit(Warning(turn_id=env.turn_id, call_id=state.call.id, code="preview_failed",
                             message=f"Could not prepare the approval preview: {project_exception(exc)}"))
    broker: ApprovalBroker = env.broker
    digest = input_sha256(state.input)
    shown = copy.deepcopy(state.input)  # what a client holds can never alias what runs
    request = ApprovalRequest(
        request_id=broker.new_request_id(), call_id=state.call.id, tool=spec.name, input=shown,
        input_sha256=digest, summary=preview.summary if preview else summary_of(spec, state.input),
        reason=decision.reason, asked_by=decision.decided_by, preview=preview,
        suggested_rules=decision.suggested_rules,
    )

    def announce() -> None:
        # what the user approves is shown exactly: control characters become visible symbols
        env.emit(PermissionRequested(
            turn_id=env.turn_id, call_id=state.call.id, request_id=request.request_id, tool=spec.name,
            input=copy.deepcopy(shown), input_sha256=digest, summary=reveal_controls(request.summary),
            reason=decision.reason,
            decided_by=decision.decided_by, risk=preview.risk if preview else state.flags.risk,  # type: ignore[union-attr]
            side_effect_scope=state.flags.side_effect_scope,  # type: ignore[union-attr]
            preview_kind=preview.kind if preview else "json",
            preview=reveal_controls(preview.body) if preview else json.dumps(state.input, indent=2, ensure_ascii=False),
            preview_display=neutralize_display(preview.display, reveal=True) if preview else None,
            suggested_rules=list(decision.suggested_rules), interactive=broker.interactive,
            sandboxed=state.sandboxed,
        ))

    hook = None
    if with_hooks and env.hooks.has_permission_request_hooks(spec.name):
        async def hook() -> ApprovalAnswer | None:
            suggestions = [{"type": "addRules", "rules": [rule_object(r) for r in decision.suggested_rules],
                            "behavior": "allow", "destination": "localSettings"}] if decision.suggested_rules else []
            answer = await env.hooks.permission_request(hook_call(state), suggestions)
            if answer is None or (answer.behavior == "allow" and spec.permission.always_ask):
                return None  # an always-ask tool is asked even when a hook allows
            return _hook_answer(answer)

    if broker.interactive:
        await env.hooks.notification(_session_info(state), f"Vigil needs your permission to use {spec.name}",
                                     "Permission needed", "permission_prompt")
    waited = time.perf_counter()
    try:
        answer = await broker.decide(request, announce, hook)
    except asyncio.CancelledError:
        env.emit(PermissionResolved(turn_id=env.turn_id, call_id=state.call.id, request_id=request.request_id,
                                    decision="deny", decided_by="turn", reason="the turn was interrupted",
                                    wait_ms=ms_since(waited)))
        raise
    state.wait_ms += ms_since(waited)
    state.answer = answer
    await settle_answer(state, request, answer)


def _session_info(state: CallState) -> dict[str, Any]:
    env = state.env
    return {"session_id": env.session_id, "transcript_path": env.transcript_path, "cwd": env.cwd,
            "permission_mode": env.policy.mode}


def rule_object(rule: str) -> dict[str, Any]:
    """A rule in the shape of Claude Code's permission suggestions (`toolName`, `ruleContent`)."""
    name, _, rest = rule.partition("(")
    return {"toolName": name, "ruleContent": rest[:-1]} if rest else {"toolName": name}


def _hook_answer(answer: PermissionHookAnswer) -> ApprovalAnswer:
    return ApprovalAnswer(
        decision=answer.behavior, decided_by="hook", reason=answer.message, feedback=None,
        updated_input=answer.updated_input, updated_permissions=tuple(answer.updated_permissions),
        interrupt=answer.interrupt,
    )


async def settle_answer(state: CallState, request: ApprovalRequest, answer: ApprovalAnswer) -> None:
    env, spec = state.env, state.spec
    assert spec is not None
    recheck = None
    if answer.decision == "allow" and answer.updated_input is not None:
        recheck = await _rewrite_approved(state, request, answer)
    saved: list[str] = []
    writes = env.writer()
    if answer.decision == "allow" and answer.always:
        saved = writes.add_rules("allow", list(answer.rules or request.suggested_rules), answer.destination,
                                 client=answer.client)[0]
    for update in answer.updated_permissions:
        saved += writes.apply_update(update)
    env.emit(PermissionResolved(
        turn_id=env.turn_id, call_id=state.call.id, request_id=request.request_id, decision=answer.decision,
        decided_by=answer.decided_by, reason=answer.reason, saved_rules=saved, feedback=answer.feedback,
        wait_ms=state.wait_ms, client=answer.client,
    ))
    if answer.decision == "deny":
        raise denial(spec, answer)
    # what was shown and answered, not what the input is now: if anything changed it meanwhile,
    # `start` refuses to run it
    state.approved_sha256 = input_sha256(state.input) if recheck is not None else request.input_sha256
    if recheck is not None and recheck.behavior == "ask":
        # the hook rewrote the input into something a rule asks about: the user decides that one
        await approve(state, recheck, with_hooks=False)


async def _rewrite_approved(state: CallState, request: ApprovalRequest, answer: ApprovalAnswer
                            ) -> PermissionDecision:
    """A PermissionRequest hook's `updatedInput`: validated, checked by the tool, and put to the
    rules again — a hook's allow never lifts a deny or ask rule on what will really run."""
    env, spec = state.env, state.spec
    assert spec is not None
    try:
        state.input = validated_input(spec, answer.updated_input, "hook")
        await tool_checks(state)
    except CallEnded as ended:
        _resolve_denied(state, request, "hook", f"The hook's rewritten input was rejected: {ended.message}")
        raise
    state.flags = spec.flags_of(state.input)
    decision = env.policy.decide(PermissionQuery(spec, state.input, state.flags, env.cwd))
    state.sandboxed = decision.sandboxed
    state.checked_paths = tuple(getattr(decision, "paths", ()))
    decision = combine_with_hook(decision, "allow", answer.reason, spec)
    if decision.behavior == "deny":
        _resolve_denied(state, request, decision.decided_by, decision.reason, decision.rule)
        raise CallEnded("permission", "permission_denied", decision.reason)
    return decision


def _resolve_denied(state: CallState, request: ApprovalRequest, by: str, reason: str, rule: str | None = None
                    ) -> None:
    env = state.env
    env.emit(PermissionResolved(turn_id=env.turn_id, call_id=state.call.id, request_id=request.request_id,
                                decision="deny", decided_by=by, reason=reason, rule=rule,  # type: ignore[arg-type]
                                wait_ms=state.wait_ms))


def denial(spec: ToolSpec, answer: ApprovalAnswer) -> CallEnded:
    if answer.decided_by == "no_client":
        return CallEnded("permission", "no_permission_client", answer.reason)
    if answer.decided_by == "hook":
        reason = answer.reason or "Denied by PermissionRequest hook"
        return CallEnded("permission", "hook_denied", reason, stop_turn=answer.interrupt)
    if answer.decided_by == "timeout":
        return CallEnded("permission", "permission_denied", answer.reason)
    base = f"The user denied this {spec.name} call; it was not run."
    if answer.feedback:
        return CallEnded("permission", "user_denied", f"{base} The user said: {answer.feedback}",
                         stop_turn=answer.interrupt)
    return CallEnded("permission", "user_denied", f"{base} Wait for the user to say how to proceed.",
                     stop_turn=answer.interrupt)
