"""ToolSpecs with the names, kinds, rule keys and flags of the real tools (which are built in other
branches), for permission, hook and approval tests. Their handlers do trivial real work: they
record that they ran, so a test can prove what ran and what did not."""

from __future__ import annotations

from typing import Any

from tui_app.runtime.contract import (
    ApprovalPreview,
    PermissionSpec,
    RawResult,
    StrictInput,
    ToolContext,
    ToolFlags,
    ToolSpec,
)
from tui_app.runtime.permissions.bash_readonly import BASH_FLAGS, bash_flags

READ_FLAGS = ToolFlags(read_only=True, concurrency_safe=True, side_effect_scope="none", needs_approval=False,
                       risk="low")
EDIT_FLAGS = ToolFlags(read_only=False, concurrency_safe=False, side_effect_scope="workspace", needs_approval=True)
WEB_FLAGS = ToolFlags(read_only=True, concurrency_safe=True, side_effect_scope="network", needs_approval=True)
MCP_READ_FLAGS = ToolFlags(read_only=True, concurrency_safe=True, side_effect_scope="network", needs_approval=True)
MCP_WRITE_FLAGS = ToolFlags(read_only=False, side_effect_scope="network", needs_approval=True)
ASK_USER_FLAGS = ToolFlags(read_only=True, side_effect_scope="user_interaction", needs_approval=False,
                           requires_user_interaction=True)

#: every call that reached a handler: (tool, input)
RAN: list[tuple[str, dict[str, Any]]] = []


class ReadInput(StrictInput):
    file_path: str
    offset: int | None = None
    limit: int | None = None


class PathInput(StrictInput):
    pattern: str
    path: str | None = None


class EditInput(StrictInput):
    file_path: str
    old_string: str = ""
    new_string: str = ""


class WriteInput(StrictInput):
    file_path: str
    content: str


class BashInput(StrictInput):
    command: str
    timeout: int | None = None
    description: str | None = None


class WebInput(StrictInput):
    url: str
    prompt: str = ""


async def record(args: Any, ctx: ToolContext) -> RawResult:
    data = args.model_dump(exclude_none=True) if hasattr(args, "model_dump") else dict(args)
    RAN.append((ctx.tool_name, data))
    return RawResult(output={"ran": ctx.tool_name, "input": data}, text=f"{ctx.tool_name} ran")


async def command_preview(data: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
    return ApprovalPreview(summary=f"Run {data['command']}", kind="command", body=data["command"],
                           risk=bash_flags(data["command"]).risk)


def spec(name: str, kind: str, rule_key: str | None, flags: ToolFlags, model: type | None, **extra: Any) -> ToolSpec:
    return ToolSpec(name=name, description=f"{name} (test)", handler=record, input_model=model,
                    flags=flags, permission=PermissionSpec(kind=kind, rule_key=rule_key), **extra)  # type: ignore[arg-type]


READ = spec("Read", "read", "file_path", READ_FLAGS, ReadInput)
GLOB = spec("Glob", "read", "path", READ_FLAGS, PathInput)
GREP = spec("Grep", "read", "path", READ_FLAGS, PathInput)
EDIT = spec("Edit", "edit", "file_path", EDIT_FLAGS, EditInput, aliases=("MultiEdit",))
WRITE = spec("Write", "edit", "file_path", EDIT_FLAGS, WriteInput)
BASH = spec("Bash", "bash", "command", BASH_FLAGS, BashInput,
            flags_for=lambda data: bash_flags(data["command"]), prepare_approval=command_preview)
WEBFETCH = spec("WebFetch", "web", "url", WEB_FLAGS, WebInput)
MCP_READ = ToolSpec(name="mcp__files__read_file", description="mcp read", handler=record, source="mcp",
                    input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
                    flags=MCP_READ_FLAGS, permission=PermissionSpec(kind="mcp"))
MCP_WRITE = ToolSpec(name="mcp__files__write_file", description="mcp write", handler=record, source="mcp",
                     input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
                     flags=MCP_WRITE_FLAGS, permission=PermissionSpec(kind="mcp"))
ASK_USER = spec("AskUserQuestion", "interaction", None, ASK_USER_FLAGS, None)
DEPLOY = ToolSpec(name="Deploy", description="always asks", handler=record, flags=EDIT_FLAGS,
                  input_schema={"type": "object", "properties": {"target": {"type": "string"}}},
                  permission=PermissionSpec(kind="other", rule_key="target", always_ask=True))

ALL = (READ, GLOB, GREP, EDIT, WRITE, BASH, WEBFETCH, MCP_READ, MCP_WRITE, ASK_USER, DEPLOY)
BY_NAME = {s.name: s for s in ALL}
