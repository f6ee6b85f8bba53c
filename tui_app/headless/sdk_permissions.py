"""Asks put to the Agent SDK's `can_use_tool` callback (`--permission-prompt-tool stdio`).

The SDK is one more client of the session: when a call needs asking, the broker registers the
request and announces it (`PermissionRequested`); this bridge sends `can_use_tool` for it, and the
SDK's answer goes back through the session's port (AnswerApproval) with the hash of exactly the
input the SDK was shown, racing any PermissionRequest hook — the first answer wins. When a hook (or
an interrupt) settles the request first, the SDK's pending request is withdrawn with
`control_cancel_request`.

The answer in the SDK's words:
    {"behavior": "allow", "updatedInput": {…}, "updatedPermissions": [...]}  — an edited input is
        validated and put to the rules again before it runs (a rule's deny still wins)
    {"behavior": "deny", "message": "…", "interrupt": true}  — the message reaches the model;
        with `interrupt` the turn ends without another model call
"""

from __future__ import annotations

from typing import Any

from tui_app.headless.control_protocol import ControlChannel, ControlError
from tui_app.headless.request_forwarder import RequestForwarder
from tui_app.runtime.approval_stage import rule_object as _rule_obj
from tui_app.runtime.commands import AnswerApproval
from tui_app.runtime.events import PermissionRequested, Warning


def permission_suggestions(event: PermissionRequested) -> list[dict[str, Any]]:
    if not event.suggested_rules:
        return []
    return [{"type": "addRules", "rules": [_rule_obj(r) for r in event.suggested_rules], "behavior": "allow",
             "destination": "localSettings"}]


def can_use_tool_request(event: PermissionRequested) -> dict[str, Any]:
    request: dict[str, Any] = {
        "subtype": "can_use_tool", "tool_name": event.tool, "display_name": event.tool, "input": event.input,
        "description": event.summary, "permission_suggestions": permission_suggestions(event),
        "tool_use_id": event.call_id,
    }
    if event.reason:
        request["decision_reason"] = event.reason
    return request


def answer_from(response: dict[str, Any], event: PermissionRequested) -> AnswerApproval:
    """The SDK's answer as a command of the port; anything but a well-formed allow is a deny."""
    base = {"request_id": event.request_id, "input_sha256": event.input_sha256}
    if response.get("behavior") == "allow":
        edited = response.get("updatedInput")
        updates = response.get("updatedPermissions")
        return AnswerApproval(
            decision="allow", **base,
            # the SDK echoes the input it was shown: only a different one is an edit
            updated_input=edited if isinstance(edited, dict) and edited != event.input else None,
            updated_permissions=[u for u in updates if isinstance(u, dict)] if isinstance(updates, list) else [])
    message = response.get("message")
    feedback = message.strip() if isinstance(message, str) and message.strip() else None
    if response.get("behavior") != "deny":
        feedback = f"The permission prompt gave an answer Vigil cannot read: {response!r:.200}"
    return AnswerApproval(decision="deny", **base, feedback=feedback, interrupt=response.get("interrupt") is True)


def sdk_permissions(session: Any, channel: ControlChannel) -> RequestForwarder:
    """Forwards each ask to the SDK (`can_use_tool`) and its answer to the session."""

    async def ask(event: PermissionRequested) -> AnswerApproval:
        try:
            return answer_from(await channel.request(can_use_tool_request(event)), event)
        except ControlError as exc:
            session.emit(Warning(call_id=event.call_id, code="permission_prompt_failed",
                                 message=f"The SDK's permission prompt failed: {exc}"))
            return AnswerApproval(request_id=event.request_id, decision="deny", input_sha256=event.input_sha256,
                                  feedback=f"The permission prompt failed ({exc}), so the call was not run.")

    return RequestForwarder(session.controller, ask, client="sdk")
