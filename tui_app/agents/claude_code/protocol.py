"""The messages of Claude Code's control protocol that Vigil writes (docs/architecture.md §11).

One JSON object per line. Vigil → Claude Code: control requests (initialize, interrupt,
set_permission_mode), user turns, and answers to Claude Code's own control requests (a hook
callback's hook output, a can_use_tool decision, or an error for anything else).
"""

from __future__ import annotations

from typing import Any

from tui_app.agents.gate import Verdict

#: the id of Vigil's PreToolUse hook callback: one matcher for every tool
PRE_TOOL_USE_CALLBACK = "vigil_pre_tool_use"
#: a hook callback waits on Vigil's own PreToolUse hooks (each has its own timeout); should it
#: still time out, Claude Code is told to block the call rather than run it without Vigil's word
HOOK_TIMEOUT_S = 3600
#: the modes Claude Code can be switched into; bypassPermissions only at launch with
#: --dangerously-skip-permissions, so in Vigil's bypassPermissions Claude Code asks and Vigil's
#: policy answers every question with allow (deny rules and protected paths still count)
AGENT_MODES = ("default", "acceptEdits", "plan", "dontAsk")


def agent_mode(vigil_mode: str) -> str:
    return vigil_mode if vigil_mode in AGENT_MODES else "default"


def control_request(request_id: str, subtype: str, **fields: Any) -> dict[str, Any]:
    return {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **fields}}


def initialize(request_id: str) -> dict[str, Any]:
    hooks = {"PreToolUse": [{"matcher": None, "hookCallbackIds": [PRE_TOOL_USE_CALLBACK],
                             "timeout": HOOK_TIMEOUT_S, "onFailure": "block"}]}
    return control_request(request_id, "initialize", hooks=hooks)


def user_message(prompt: str, context: list[str] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    content: Any = prompt
    if context:
        content = [{"type": "text", "text": text} for text in (prompt, *context)]
    return {"type": "user", "session_id": "", "parent_tool_use_id": None,
            "message": {"role": "user", "content": content}}


def success(request_id: str, response: dict[str, Any]) -> dict[str, Any]:
    return {"type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": response}}


def error(request_id: str, message: str) -> dict[str, Any]:
    return {"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": message}}


def hook_output(verdict: Verdict) -> dict[str, Any]:
    """A PreToolUse hook's JSON output for Vigil's screening of a call."""
    specific: dict[str, Any] = {"hookEventName": "PreToolUse"}
    if verdict.behavior in ("deny", "ask"):
        specific["permissionDecision"] = verdict.behavior
        specific["permissionDecisionReason"] = verdict.reason
    if verdict.updated_input is not None:
        specific["updatedInput"] = verdict.updated_input
    if verdict.context:
        specific["additionalContext"] = "\n".join(verdict.context)
    if len(specific) == 1:
        return {}
    output: dict[str, Any] = {"hookSpecificOutput": specific}
    if verdict.behavior == "deny" and verdict.interrupt:
        output["continue"] = False
        output["stopReason"] = verdict.reason
    return output


def permission_result(verdict: Verdict) -> dict[str, Any]:
    """A can_use_tool answer. An allow always carries `updatedInput` (older releases fail closed
    without it): exactly the input the user approved."""
    if verdict.behavior == "allow":
        return {"behavior": "allow", "updatedInput": verdict.input or {}}
    answer: dict[str, Any] = {"behavior": "deny", "message": verdict.reason or "Denied by Vigil"}
    if verdict.interrupt:
        answer["interrupt"] = True
    return answer
