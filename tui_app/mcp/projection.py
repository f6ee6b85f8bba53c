"""MCP tools as ToolSpecs, MCP results as RawResults.

A tool from a server goes through the same pipeline as a built-in: its input schema is what the
model is shown and what the call is validated against (jsonschema), its annotations become flags,
and it always needs approval unless a rule allows it. Annotations are hints from a server we do
not control: they shape scheduling and what the dialog says, never the permission decision.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tui_app.runtime.contract import (
    ApprovalPreview,
    PermissionSpec,
    RawResult,
    ResultBudget,
    TimeoutPolicy,
    ToolContext,
    ToolFailure,
    ToolFlags,
    ToolSpec,
    ToolTimedOut,
)
from tui_app.runtime.display import McpDisplay
from tui_app.runtime.results.sanitize import neutralize
from tui_app.runtime.results.serialize import format_bytes, utf8_len

if TYPE_CHECKING:
    from tui_app.mcp.connection import McpConnection

DEFAULT_TOOL_TIMEOUT_MS = 30_000
TIMEOUT_GRACE_MS = 2_000
MCP_BUDGET = ResultBudget(max_model_bytes=50_000, max_inline_bytes=50_000, over_budget="truncate",
                          preview_end="head")
MAX_DESCRIPTION_CHARS = 2048
#: the longest tool name the Anthropic and OpenAI APIs accept (`^[a-zA-Z0-9_-]{1,64}$`)
MAX_TOOL_NAME_CHARS = 64
#: what one text block of the screen's detail pane keeps (the model's copy has its own budget)
MAX_DISPLAY_TEXT_BYTES = 50_000
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_TARGET_KEYS = ("path", "file_path", "filePath", "uri", "url", "source", "destination", "query", "command", "name")


def name_segment(text: str) -> str:
    return _UNSAFE.sub("_", text) or "_"


def full_tool_name(server: str, tool: str) -> str:
    return f"mcp__{name_segment(server)}__{name_segment(tool)}"


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`; a name longer than the providers accept (64 characters) keeps its
    start and ends in a short hash of the whole name, so it stays unique and the same every run."""
    name = full_tool_name(server, tool)
    if len(name) <= MAX_TOOL_NAME_CHARS:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:MAX_TOOL_NAME_CHARS - len(digest) - 1]}_{digest}"


def tool_timeout_ms(server_timeout_ms: int | None, env: dict[str, str] | None = None) -> int:
    """Per-server `timeout`, else `MCP_TOOL_TIMEOUT`, else 30000 ms."""
    if server_timeout_ms:
        return server_timeout_ms
    value = (env if env is not None else os.environ).get("MCP_TOOL_TIMEOUT", "")
    try:
        parsed = int(value)
    except ValueError:
        return DEFAULT_TOOL_TIMEOUT_MS
    return parsed if parsed > 0 else DEFAULT_TOOL_TIMEOUT_MS


# ---- the tool ------------------------------------------------------------------------------------

def flags_from(annotations: Any) -> ToolFlags:
    """Missing hints mean the unsafe reading (MCP's defaults): not read-only, destructive."""
    read_only = getattr(annotations, "read_only_hint", None) is True
    destructive_hint = getattr(annotations, "destructive_hint", None)
    destructive = (destructive_hint is not False) and not read_only
    idempotent = getattr(annotations, "idempotent_hint", None) is True
    return ToolFlags(
        read_only=read_only, destructive=destructive, concurrency_safe=read_only or idempotent,
        side_effect_scope="network", needs_approval=True,
        risk="high" if destructive else ("low" if read_only else "medium"),
    )


def hints_text(annotations: Any) -> str:
    words = []
    if getattr(annotations, "read_only_hint", None) is True:
        words.append("read-only")
    elif getattr(annotations, "destructive_hint", None) is False:
        words.append("not destructive")
    else:
        words.append("may be destructive")
    if getattr(annotations, "idempotent_hint", None) is True:
        words.append("idempotent")
    if getattr(annotations, "open_world_hint", None) is not False:
        words.append("may reach outside systems")
    return ", ".join(words)


class InvalidToolSchema(ValueError):
    pass


def input_schema_of(tool: Any) -> dict[str, Any]:
    """The server's schema as sent (the registry inlines refs and drops `$schema` for the model);
    checked here so a broken schema fails the tool's registration, never a call."""
    import jsonschema

    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    schema = json.loads(json.dumps(schema))  # a private, plain copy
    if schema.get("type") is None:
        schema["type"] = "object"
    if schema.get("type") != "object":
        raise InvalidToolSchema(f"input schema of type {schema.get('type')!r}; tools take an object")
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise InvalidToolSchema(f"invalid input schema: {exc.message}") from None
    return schema


def describe(tool: Any) -> str:
    text = (tool.description or getattr(tool, "title", None) or "").strip()
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[: MAX_DESCRIPTION_CHARS - 1] + "…"
    return text


def fingerprint(tool: Any) -> str:
    """What makes a projected tool different: re-registering an unchanged tool would only churn."""
    return json.dumps(tool.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=True)


def make_tool_spec(server: str, tool: Any, connection: McpConnection, *, timeout_ms: int,
                   supports_images: Callable[[], bool],
                   revive: Callable[[], Awaitable[bool]] | None = None) -> ToolSpec:
    """Raises InvalidToolSchema for a tool that cannot be offered to a model. `revive` starts
    the server again when it went away since it was last used."""
    schema = input_schema_of(tool)
    flags = flags_from(tool.annotations)
    name = tool_name(server, tool.name)
    hints = hints_text(tool.annotations)

    async def handler(arguments: dict[str, Any], ctx: ToolContext) -> RawResult:
        if connection.status != "connected" and revive is not None:
            ctx.progress.message(f'MCP server "{server}" had stopped: starting it again')
            await revive()
        result = await call_tool(connection, tool.name, arguments, ctx)
        return project_result(server, tool.name, result, supports_images())

    async def preview(arguments: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(
            summary=f'Call {tool.name} on MCP server "{server}" (the server says: {hints})',
            kind="json", body=json.dumps(arguments, indent=2, ensure_ascii=False), risk=flags.risk)

    def target(arguments: dict[str, Any]) -> str:
        for key in _TARGET_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and value:
                return value
        return ""

    return ToolSpec(
        name=name, description=describe(tool), handler=handler, input_schema=schema, source="mcp",
        flags=flags, permission=PermissionSpec(kind="mcp", reason=f"MCP tool of server {server}"),
        budget=MCP_BUDGET,
        timeout=TimeoutPolicy(kind="timed", default_ms=timeout_ms, cleanup_grace_ms=TIMEOUT_GRACE_MS),
        cancellation_message=f"The user interrupted this call to MCP server {server}; "
                             "the server was asked to cancel it.",
        prepare_approval=preview, target_of=target,
        tool_response=lambda _input, raw: raw.output,
    )


async def call_tool(connection: McpConnection, tool: str, arguments: dict[str, Any], ctx: ToolContext) -> Any:
    from tui_app.mcp.connection import CallRejected, CallTimedOut, ServerUnavailable

    timeout_s = ctx.timeout_ms / 1000 if ctx.timeout_ms else None
    try:
        return await connection.call(tool, arguments, timeout_s, ctx.progress.progress)
    except CallTimedOut:
        # the SDK has already sent the server its cancellation
        raise ToolTimedOut(ctx.timeout_ms or 0) from None
    except ServerUnavailable as exc:
        raise ToolFailure(str(exc), side_effects="unknown" if exc.during_call else "none",
                          retryable=not exc.during_call) from None
    except CallRejected as exc:
        raise ToolFailure(f'MCP server "{connection.name}" rejected the call to {tool}: {exc}',
                          side_effects="none", retryable=True) from None


# ---- the result ----------------------------------------------------------------------------------

def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def _display_text(text: str) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": neutralize(text)}
    if utf8_len(text) > MAX_DISPLAY_TEXT_BYTES:
        kept = text.encode("utf-8")[:MAX_DISPLAY_TEXT_BYTES].decode("utf-8", errors="ignore")
        block.update(text=neutralize(kept), truncated=True, bytes=utf8_len(text))
    return block


def _block(block: Any, supports_images: bool, parts: list[dict[str, Any]]) -> tuple[str | None, dict[str, Any]]:
    """One content block → (the model's text for it, the screen's block)."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return block.text, _display_text(block.text)
    if kind in ("image", "audio"):
        size = _decoded_size(block.data)
        label = f"[{kind}: {block.mime_type}, {format_bytes(size)}]"
        if kind == "image" and supports_images:
            parts.append({"type": "image", "media_type": block.mime_type, "data": block.data})
        else:
            label = label[:-1] + " — not shown: the model cannot take it]"
        return label, {"type": kind, "mime_type": block.mime_type, "bytes": size}
    if kind == "resource_link":
        extra = f" ({block.mime_type})" if block.mime_type else ""
        about = f" — {block.description}" if block.description else ""
        return (f"[resource link] {block.name}: {block.uri}{extra}{about}",
                {"type": "resource_link", "uri": str(block.uri), "name": neutralize(block.name),
                 "mime_type": block.mime_type, "description": neutralize(block.description or "")})
    if kind == "resource":
        resource = block.resource
        uri, mime = str(resource.uri), resource.mime_type or "unknown type"
        text = getattr(resource, "text", None)
        if text is not None:
            shown = _display_text(text)
            return f"[resource {uri} ({mime})]\n{text}", {**shown, "type": "resource", "uri": uri, "mime_type": mime}
        size = _decoded_size(getattr(resource, "blob", "") or "")
        return (f"[resource {uri}: {mime}, {format_bytes(size)} of binary data, not shown]",
                {"type": "resource", "uri": uri, "mime_type": mime, "bytes": size})
    return f"[unsupported content: {kind or type(block).__name__}]", {"type": "unsupported", "kind": str(kind)}


def project_result(server: str, tool: str, result: Any, supports_images: bool) -> RawResult:
    parts: list[dict[str, Any]] = []
    texts: list[str] = []
    blocks: list[dict[str, Any]] = []
    for block in result.content or []:
        text, shown = _block(block, supports_images, parts)
        if text is not None:
            texts.append(text)
        blocks.append(shown)
    structured = result.structured_content
    text = "\n".join(texts)
    if not text and structured is not None:
        # servers should repeat structured content as text; when one does not, the model still sees it
        text = json.dumps(structured, ensure_ascii=False)
    if result.is_error and not text:
        text = f"MCP tool {tool} on server {server} reported an error without a message"
    output: dict[str, Any] = {"content": [b.model_dump(mode="json", by_alias=True, exclude_none=True)
                                          for b in result.content or []]}
    if structured is not None:
        output["structuredContent"] = structured
    display = McpDisplay(server=server, tool=tool, blocks=blocks, structured_content=structured,
                         is_error=bool(result.is_error))
    return RawResult(output=output, text=text, display=display, is_error=bool(result.is_error),
                     parts=[] if result.is_error else parts)
