"""The real tool specs, for permission, hook and approval tests: `builtin_tools()` as the session
registers them, and MCP tools projected by the real `make_tool_spec`. One thing is changed: the
handler records that it ran instead of doing the work, so a test can prove what ran and what did
not. Everything the permission stage reads — the name, aliases, kind, rule key, flags,
`flags_for`, the input model, the tool's own checks and its approval preview — is the real tool's.

Only `DEPLOY` is made up: no built-in tool is `always_ask` (an extension's tool may be).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import mcp.types as mcp_types

from tui_app.mcp.projection import make_tool_spec
from tui_app.runtime.contract import PermissionSpec, RawResult, ToolContext, ToolFlags, ToolSpec
from tui_app.tools import builtin_tools
from tui_app.tools.bash.tool import BashInput

#: every call that reached a handler: (tool, input)
RAN: list[tuple[str, dict[str, Any]]] = []


async def record(args: Any, ctx: ToolContext) -> RawResult:
    data = args.model_dump(exclude_defaults=True) if hasattr(args, "model_dump") else dict(args)
    RAN.append((ctx.tool_name, data))
    return RawResult(output={"ran": ctx.tool_name, "input": data}, text=f"{ctx.tool_name} ran")


def recording(spec: ToolSpec) -> ToolSpec:
    """The real spec, but running it only records the call."""
    return replace(spec, handler=record)


REAL = {spec.name: spec for spec in builtin_tools()}
READ, GLOB, GREP = recording(REAL["Read"]), recording(REAL["Glob"]), recording(REAL["Grep"])
EDIT, WRITE, MULTI_EDIT = recording(REAL["Edit"]), recording(REAL["Write"]), recording(REAL["MultiEdit"])
BASH, WEBFETCH = recording(REAL["Bash"]), recording(REAL["WebFetch"])
ASK_USER = recording(REAL["AskUserQuestion"])


def mcp_tool(server: str, name: str, **hints: Any) -> ToolSpec:
    """An MCP server's tool as Vigil projects it (`hints`: the tool's annotations)."""
    tool = mcp_types.Tool(name=name, input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
                          annotations=mcp_types.ToolAnnotations(**hints) if hints else None)
    spec = make_tool_spec(server, tool, connection=None, timeout_ms=30_000,  # type: ignore[arg-type]
                          supports_images=lambda: False)
    return recording(spec)


MCP_READ = mcp_tool("files", "read_file", read_only_hint=True)
MCP_WRITE = mcp_tool("files", "write_file")
DEPLOY = ToolSpec(name="Deploy", description="always asks", handler=record,
                  flags=ToolFlags(read_only=False, side_effect_scope="workspace", needs_approval=True),
                  input_schema={"type": "object", "properties": {"target": {"type": "string"}}},
                  permission=PermissionSpec(kind="other", rule_key="target", always_ask=True))

ALL = (READ, GLOB, GREP, EDIT, WRITE, MULTI_EDIT, BASH, WEBFETCH, MCP_READ, MCP_WRITE, ASK_USER, DEPLOY)
BY_NAME = {s.name: s for s in ALL}
__all__ = ["ALL", "BY_NAME", "RAN", "BashInput", "record"]
