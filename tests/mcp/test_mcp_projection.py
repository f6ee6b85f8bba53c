"""MCP tools and results projected into the runtime's terms (SDK types, no server needed)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
    ToolAnnotations,
)

from tests.fakes import make_env
from tui_app.mcp.config import ServerConfig
from tui_app.mcp.connection import McpConnection
from tui_app.mcp.projection import (
    InvalidToolSchema,
    flags_from,
    make_tool_spec,
    project_result,
    tool_name,
    tool_timeout_ms,
)
from tui_app.runtime.messages import ImageBlock, TextBlock
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.runtime.pipeline import ToolCall, run_call

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 1992).decode()


def never_connected(tmp_path: Path) -> McpConnection:
    config = ServerConfig(name="srv", transport="stdio", source="test", command="unused")
    return McpConnection(config, tmp_path / "srv.log", startup_timeout_s=1)


def spec_for(tool: Tool, tmp_path: Path, timeout_ms: int = 30_000):
    return make_tool_spec("srv", tool, never_connected(tmp_path), timeout_ms=timeout_ms, supports_images=lambda: False)


def test_names_keep_only_letters_digits_underscore_and_dash():
    assert tool_name("my.server", "get data/v2") == "mcp__my_server__get_data_v2"
    assert tool_name("fs", "read_text_file") == "mcp__fs__read_text_file"
    assert tool_name("everything", "get-sum") == "mcp__everything__get-sum"


def test_a_name_over_64_characters_is_cut_and_told_apart_by_a_hash():
    server = "company-internal-knowledge-base"
    first, second = tool_name(server, "search_documents_by_semantic_similarity"), tool_name(
        server, "search_documents_by_semantic_similarity_v2")
    assert len(first) == len(second) == 64 and first != second
    assert first.startswith(f"mcp__{server}__search_documents_")  # `mcp__<server>` rules still match
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", first)
    assert tool_name(server, "search_documents_by_semantic_similarity") == first  # the same every run
    assert tool_name("s", "x" * 55) == "mcp__s__" + "x" * 55  # 63 characters: kept whole


@pytest.mark.parametrize(("hints", "expected"), [
    (None, dict(read_only=False, destructive=True, concurrency_safe=False, risk="high")),
    (dict(read_only_hint=True), dict(read_only=True, destructive=False, concurrency_safe=True, risk="low")),
    (dict(read_only_hint=False, destructive_hint=False), dict(read_only=False, destructive=False,
                                                              concurrency_safe=False, risk="medium")),
    (dict(destructive_hint=True, idempotent_hint=True), dict(read_only=False, destructive=True,
                                                             concurrency_safe=True, risk="high")),
    (dict(destructive_hint=False, idempotent_hint=True), dict(read_only=False, destructive=False,
                                                              concurrency_safe=True, risk="medium")),
])
def test_flags_come_from_annotations_and_missing_hints_read_as_unsafe(hints, expected):
    flags = flags_from(ToolAnnotations(**hints) if hints is not None else None)
    assert flags.model_dump(include=set(expected)) == expected
    # whatever the server says, the call needs approval and reaches outside the workspace
    assert (flags.needs_approval, flags.side_effect_scope, flags.effectively_read_only) == (True, "network", False)


def test_tool_timeout_is_the_servers_then_the_environments_then_30_seconds():
    assert tool_timeout_ms(None, {}) == 30_000
    assert tool_timeout_ms(None, {"MCP_TOOL_TIMEOUT": "4500"}) == 4500
    assert tool_timeout_ms(None, {"MCP_TOOL_TIMEOUT": "soon"}) == 30_000
    assert tool_timeout_ms(1200, {"MCP_TOOL_TIMEOUT": "4500"}) == 1200


def test_the_model_sees_a_plain_schema_and_calls_are_checked_against_the_servers(tmp_path):
    tool = Tool(name="lookup", description="Looks things up", input_schema={
        "$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "properties": {"where": {"$ref": "#/definitions/place"}, "limit": {"type": "integer"}},
        "required": ["where"], "additionalProperties": False,
        "definitions": {"place": {"type": "string", "enum": ["here", "there"]}}})
    spec = spec_for(tool, tmp_path)
    env, _ = make_env(spec)
    [menu] = env.registry.model_tools()
    assert menu.name == "mcp__srv__lookup"
    assert menu.input_schema == {"type": "object", "additionalProperties": False, "required": ["where"],
                                 "properties": {"where": {"type": "string", "enum": ["here", "there"]},
                                                "limit": {"type": "integer"}}}
    assert (spec.budget.max_model_bytes, spec.budget.over_budget) == (50_000, "truncate")
    assert (spec.timeout.default_ms, spec.permission.kind) == (30_000, "mcp")


async def test_bad_input_never_reaches_the_server(tmp_path):
    tool = Tool(name="lookup", input_schema={"type": "object", "properties": {"limit": {"type": "integer"}},
                                             "required": ["limit"]})
    env, rec = make_env(spec_for(tool, tmp_path), policy=ModePolicy(mode="bypassPermissions"))
    out = await run_call(ToolCall("c1", "mcp__srv__lookup", {"limit": "ten"}), env)
    assert (out.phase, out.code) == ("validate", "schema_invalid")
    assert out.model_content == (
        "<tool_use_error>InputValidationError: mcp__srv__lookup failed due to the following issue:\n"
        "The parameter `limit` type is expected as `integer` but provided as `string`</tool_use_error>")
    assert rec.of("ToolCallStarted") == []


def test_a_tool_with_a_broken_schema_is_refused_at_registration(tmp_path):
    with pytest.raises(InvalidToolSchema, match="invalid input schema"):
        spec_for(Tool(name="bad", input_schema={"type": "object", "properties": {"x": {"type": 12}}}), tmp_path)
    with pytest.raises(InvalidToolSchema, match="tools take an object"):
        spec_for(Tool(name="bad", input_schema={"type": "array"}), tmp_path)


async def test_annotations_never_allow_a_call(tmp_path):
    """A server that calls its tool read-only and idempotent still gets asked about, in every mode
    but bypassPermissions; plan mode refuses it (its effects are outside Vigil's view)."""
    tool = Tool(name="peek", input_schema={"type": "object"},
                annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, destructive_hint=False))
    spec = spec_for(tool, tmp_path)
    for mode, phase_code in [("default", ("permission", "no_permission_client")),
                             ("acceptEdits", ("permission", "no_permission_client")),
                             ("plan", ("permission", "permission_denied")),
                             ("dontAsk", ("permission", "permission_denied"))]:
        env, rec = make_env(spec, policy=ModePolicy(mode=mode))
        out = await run_call(ToolCall("c1", spec.name, {}), env)
        assert (out.phase, out.code) == phase_code, mode
        assert rec.of("ToolCallStarted") == []
    # a rule allows it: it runs, and a server that never connected fails cleanly
    env, _ = make_env(spec, policy=ModePolicy(allow={"mcp__srv__peek"}))
    out = await run_call(ToolCall("c1", spec.name, {}), env)
    assert (out.phase, out.code, out.side_effects) == ("execute", "execution_failed", "none")
    assert 'MCP server "srv" is not connected (disconnected) (MCPError -32000)' in out.model_content


def test_images_reach_the_model_only_when_it_takes_them():
    result = CallToolResult(content=[TextContent(type="text", text="Here:"),
                                     ImageContent(type="image", data=PNG, mime_type="image/png")])
    without = project_result("srv", "img", result, supports_images=False)
    assert without.text == "Here:\n[image: image/png, 2.0KB — not shown: the model cannot take it]"
    assert without.parts == []
    assert without.display.blocks[1] == {"type": "image", "mime_type": "image/png", "bytes": 2000}

    with_images = project_result("srv", "img", result, supports_images=True)
    assert with_images.text == "Here:\n[image: image/png, 2.0KB]"
    assert with_images.parts == [{"type": "image", "media_type": "image/png", "data": PNG}]


async def test_an_image_result_goes_to_the_model_as_an_image_block(tmp_path):
    """Through the pipeline's serialisation: text first, then the image, under the MCP budget."""
    from tui_app.runtime.contract import RawResult, ToolSpec
    from tui_app.runtime.results.serialize import serialize_result

    raw: RawResult = project_result("srv", "img", CallToolResult(content=[
        ImageContent(type="image", data=PNG, mime_type="image/png")]), supports_images=True)
    spec: ToolSpec = spec_for(Tool(name="img", input_schema={"type": "object"}), tmp_path)
    out = serialize_result(spec, raw, "c1")
    assert out.content == [TextBlock(text="[image: image/png, 2.0KB]"), ImageBlock(media_type="image/png", data=PNG)]


def test_links_resources_audio_and_structured_content():
    result = CallToolResult(content=[
        ResourceLink(type="resource_link", name="Report", uri="demo://r/1", mime_type="text/plain",
                     description="the daily report"),
        EmbeddedResource(type="resource", resource=TextResourceContents(uri="demo://r/2", mime_type="text/plain",
                                                                        text="line one")),
        EmbeddedResource(type="resource", resource=BlobResourceContents(uri="demo://r/3", mime_type="application/gzip",
                                                                        blob=base64.b64encode(b"x" * 300).decode())),
        AudioContent(type="audio", data=base64.b64encode(b"a" * 100).decode(), mime_type="audio/wav"),
    ], structured_content={"rows": 3})
    raw = project_result("srv", "mixed", result, supports_images=True)
    assert raw.text.splitlines() == [
        "[resource link] Report: demo://r/1 (text/plain) — the daily report",
        "[resource demo://r/2 (text/plain)]",
        "line one",
        "[resource demo://r/3: application/gzip, 300 bytes of binary data, not shown]",
        "[audio: audio/wav, 100 bytes — not shown: the model cannot take it]",
    ]
    assert raw.display.structured_content == {"rows": 3}
    assert raw.output["structuredContent"] == {"rows": 3}
    assert [b["type"] for b in raw.display.blocks] == ["resource_link", "resource", "resource", "audio"]


def test_structured_content_alone_is_sent_as_json_and_errors_carry_the_servers_words():
    only = project_result("srv", "t", CallToolResult(content=[], structured_content={"ok": True, "n": 2}), False)
    assert only.text == '{"ok": true, "n": 2}'
    failed = project_result("srv", "t", CallToolResult(content=[TextContent(type="text", text="no such table")],
                                                       is_error=True), False)
    assert (failed.is_error, failed.text, failed.display.is_error) == (True, "no such table", True)
    silent = project_result("srv", "t", CallToolResult(content=[], is_error=True), False)
    assert silent.text == "MCP tool t on server srv reported an error without a message"


def test_control_sequences_are_neutralised_for_the_screen_not_for_the_model():
    text = "ok \x1b]0;pwned\x07done \x1b[2J"
    raw = project_result("srv", "t", CallToolResult(content=[TextContent(type="text", text=text)]), False)
    assert raw.text == text
    assert raw.display.blocks == [{"type": "text", "text": "ok done "}]
