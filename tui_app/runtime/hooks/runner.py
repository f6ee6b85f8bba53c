"""Hooks: the interface the pipeline and the turn loop call, and `NoHooks`, the empty default.

The command-hook runner (Claude Code-compatible JSON in/out) implements `HookRunner`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

HookWord = Literal["allow", "ask", "deny"]


@dataclass(frozen=True)
class HookCall:
    """What every tool event's hook input is built from."""

    session_id: str
    cwd: str
    permission_mode: str
    transcript_path: str
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    #: the user prompt this call serves (Claude Code's `prompt_id`): one id per turn
    prompt_id: str = ""


@dataclass
class PreToolUseOutcome:
    decision: HookWord | None = None
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: list[str] = field(default_factory=list)
    #: `continue: false` from a hook: stop the agent after this call
    stop_reason: str | None = None
    system_messages: list[str] = field(default_factory=list)


@dataclass
class PermissionHookAnswer:
    behavior: Literal["allow", "deny"]
    message: str = ""
    updated_input: dict[str, Any] | None = None
    #: `updatedPermissions` entries, each {"type", "rules", "behavior", "destination"}
    updated_permissions: list[dict[str, Any]] = field(default_factory=list)
    interrupt: bool = False


@dataclass
class PostToolUseOutcome:
    block_reason: str | None = None
    context: list[str] = field(default_factory=list)
    stop_reason: str | None = None
    system_messages: list[str] = field(default_factory=list)


@dataclass
class PromptOutcome:
    blocked: bool = False
    reason: str = ""
    context: list[str] = field(default_factory=list)


@dataclass
class StopOutcome:
    #: the agent keeps going with this as its next instruction
    continue_with: str | None = None


class HookRunner(Protocol):
    def has_permission_request_hooks(self, tool_name: str) -> bool: ...

    async def pre_tool_use(self, call: HookCall) -> PreToolUseOutcome: ...

    async def permission_request(
        self, call: HookCall, suggestions: list[dict[str, Any]]
    ) -> PermissionHookAnswer | None: ...

    async def post_tool_use(self, call: HookCall, tool_response: Any, duration_ms: int) -> PostToolUseOutcome: ...

    async def post_tool_use_failure(
        self, call: HookCall, error: str, is_interrupt: bool, duration_ms: int
    ) -> PostToolUseOutcome: ...

    async def user_prompt_submit(self, session: dict[str, Any], prompt: str) -> PromptOutcome: ...

    async def stop(self, session: dict[str, Any], last_message: str, active: bool) -> StopOutcome: ...

    async def notification(self, session: dict[str, Any], message: str, title: str, kind: str) -> None: ...

    async def session_start(self, session: dict[str, Any], source: str) -> list[str]: ...

    async def session_end(self, session: dict[str, Any], reason: str) -> None: ...


class NoHooks:
    """No hooks configured: every event passes untouched."""

    def has_permission_request_hooks(self, tool_name: str) -> bool:
        return False

    async def pre_tool_use(self, call: HookCall) -> PreToolUseOutcome:
        return PreToolUseOutcome()

    async def permission_request(self, call: HookCall, suggestions: list[dict[str, Any]]) -> None:
        return None

    async def post_tool_use(self, call: HookCall, tool_response: Any, duration_ms: int) -> PostToolUseOutcome:
        return PostToolUseOutcome()

    async def post_tool_use_failure(
        self, call: HookCall, error: str, is_interrupt: bool, duration_ms: int
    ) -> PostToolUseOutcome:
        return PostToolUseOutcome()

    async def user_prompt_submit(self, session: dict[str, Any], prompt: str) -> PromptOutcome:
        return PromptOutcome()

    async def stop(self, session: dict[str, Any], last_message: str, active: bool) -> StopOutcome:
        return StopOutcome()

    async def notification(self, session: dict[str, Any], message: str, title: str, kind: str) -> None:
        return None

    async def session_start(self, session: dict[str, Any], source: str) -> list[str]:
        return []

    async def session_end(self, session: dict[str, Any], reason: str) -> None:
        return None
