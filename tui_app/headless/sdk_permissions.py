"""Asks put to the Agent SDK's `can_use_tool` callback (`--permission-prompt-tool stdio`).

The SDK is one more client of the ApprovalBroker: when a call needs asking, the broker registers
the request and announces it (`PermissionRequested`); this bridge sends `can_use_tool` for it, and
the SDK's answer goes back through `broker.answer` with the hash of exactly the input the SDK was
shown, racing any PermissionRequest hook — the first answer wins. When a hook (or an interrupt)
settles the request first, the SDK's pending request is withdrawn with `control_cancel_request`.

The answer in the SDK's words:
    {"behavior": "allow", "updatedInput": {…}, "updatedPermissions": [...]}  — an edited input is
        validated and put to the rules again before it runs (a rule's deny still wins)
    {"behavior": "deny", "message": "…", "interrupt": true}  — the message reaches the model;
        with `interrupt` the turn ends without another model call
"""

from __future__ import annotations

import asyncio
from typing import Any

from tui_app.headless.control_protocol import ControlChannel, ControlError
from tui_app.runtime.events import PermissionRequested, PermissionResolved, Warning
from tui_app.runtime.permissions.broker import ApprovalAnswer


def _rule_obj(rule: str) -> dict[str, str]:
    name, _, rest = rule.partition("(")
    return {"toolName": name, "ruleContent": rest[:-1]} if rest else {"toolName": name}


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


def answer_from(response: dict[str, Any], event: PermissionRequested) -> ApprovalAnswer:
    """The SDK's answer as the broker's; anything but a well-formed allow is a deny."""
    if response.get("behavior") == "allow":
        edited = response.get("updatedInput")
        updates = response.get("updatedPermissions")
        return ApprovalAnswer(
            "allow", input_sha256=event.input_sha256,
            # the SDK echoes the input it was shown: only a different one is an edit
            updated_input=edited if isinstance(edited, dict) and edited != event.input else None,
            updated_permissions=tuple(u for u in updates if isinstance(u, dict)) if isinstance(updates, list) else ())
    message = response.get("message")
    feedback = message.strip() if isinstance(message, str) and message.strip() else None
    if response.get("behavior") != "deny":
        feedback = f"The permission prompt gave an answer Vigil cannot read: {response!r:.200}"
    return ApprovalAnswer("deny", input_sha256=event.input_sha256, feedback=feedback,
                          interrupt=response.get("interrupt") is True)


class SdkPermissions:
    """Subscribed to the session: forwards each ask to the SDK and its answer to the broker."""

    def __init__(self, session: Any, channel: ControlChannel) -> None:
        self.session = session
        self.channel = channel
        self._asking: dict[str, asyncio.Task[None]] = {}

    def on_event(self, event: Any) -> None:
        if isinstance(event, PermissionRequested) and event.interactive:
            self._asking[event.request_id] = asyncio.ensure_future(self._ask(event))
        elif isinstance(event, PermissionResolved) and event.request_id in self._asking:
            task = self._asking.pop(event.request_id)
            if not task.done():
                task.cancel()  # settled without the SDK: its request is withdrawn

    async def _ask(self, event: PermissionRequested) -> None:
        try:
            response = await self.channel.request(can_use_tool_request(event))
            answer = answer_from(response, event)
        except ControlError as exc:
            self.session.emit(Warning(call_id=event.call_id, code="permission_prompt_failed",
                                      message=f"The SDK's permission prompt failed: {exc}"))
            answer = ApprovalAnswer("deny", input_sha256=event.input_sha256,
                                    feedback=f"The permission prompt failed ({exc}), so the call was not run.")
        self._asking.pop(event.request_id, None)
        self.session.broker.answer(event.request_id, answer)

    async def close(self) -> None:
        tasks = list(self._asking.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
