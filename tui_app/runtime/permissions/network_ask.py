"""Asking the user whether a sandboxed command may reach a new host.

The question goes through the same ApprovalBroker and dialog as any permission request, tied to
the running call: a `PermissionRequested` (tool Bash, input `{"command", "network_host"}`), then a
`PermissionResolved` naming who decided. "Always" saves `WebFetch(domain:HOST)` as an allow rule
(the sandbox's proxy honours those), shown before saving like every rule. Headless, nobody can
answer: the host stays blocked.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

from tui_app.runtime.events import PermissionRequested, PermissionResolved
from tui_app.runtime.permissions.broker import ApprovalBroker, ApprovalRequest, input_sha256


def network_asker(broker: ApprovalBroker | None, emit: Callable[[Any], Any] | None, *, call_id: str, tool: str,
                  command: str, remember: Callable[[str, list[str], str], None] | None = None
                  ) -> Callable[[str, int], Awaitable[bool]]:
    """An asker for one call: `await ask(host, port)` → may the command connect?"""

    async def ask(host: str, port: int) -> bool:
        if broker is None or emit is None:
            return False
        data = {"command": command, "network_host": host}
        digest = input_sha256(data)
        rule = f"WebFetch(domain:{host})"
        reason = f"the sandboxed command wants to connect to {host}:{port}, which no setting allows"
        request = ApprovalRequest(
            request_id=broker.new_request_id(), call_id=call_id, tool=tool, input=copy.deepcopy(data),
            input_sha256=digest, summary=f"Let `{_short(command)}` connect to {host}:{port}?", reason=reason,
            asked_by="tool", suggested_rules=(rule,),
        )

        def announce() -> None:
            emit(PermissionRequested(
                call_id=call_id, request_id=request.request_id, tool=tool, input=copy.deepcopy(data),
                input_sha256=digest, summary=request.summary, reason=reason, decided_by="tool", risk="medium",
                side_effect_scope="network", preview_kind="text",
                preview=f"Network access to {host} (port {port}) from the sandbox, for:\n\n{command}",
                suggested_rules=[rule], interactive=broker.interactive, sandboxed=True,
            ))

        answer = await broker.decide(request, announce)
        saved: list[str] = []
        if answer.decision == "allow" and answer.always and remember is not None:
            rules = list(answer.rules or (rule,))
            remember(host, rules, answer.destination)
            saved = rules
        emit(PermissionResolved(call_id=call_id, request_id=request.request_id, decision=answer.decision,
                                decided_by=answer.decided_by, reason=answer.reason or reason, saved_rules=saved,
                                feedback=answer.feedback))
        return answer.decision == "allow"

    return ask


def _short(command: str, limit: int = 60) -> str:
    line = command.strip().splitlines()[0] if command.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
