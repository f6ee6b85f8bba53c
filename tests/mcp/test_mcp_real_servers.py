"""Against the official third-party servers from npm (pinned in tests/mcp_servers), through the whole
pipeline: `vigil -p` with a scripted model, stdio, streamable HTTP and legacy SSE."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.mcp.helpers import (
    EVERYTHING_JS,
    call,
    everything,
    filesystem,
    need_node_servers,
    of,
    outcome,
    run_vigil,
    text_of,
)
from tests.waiting import DEADLINE_S

pytestmark = pytest.mark.usefixtures("node_servers")

EVERYTHING_TOOLS = ["echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
                    "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
                    "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
                    "simulate-research-query"]


@pytest.fixture
def node_servers() -> None:
    need_node_servers()


def allow(*names: str) -> tuple[str, str]:
    return ("--allowedTools", ",".join(names))


def test_init_lists_the_server_and_its_tools(vigil_env):
    code, lines = run_vigil(vigil_env, [{"text": "hi"}], {"everything": everything()}, fmt="stream-json")
    assert code == 0
    init = lines[0]
    assert init["mcp_servers"] == [{"name": "everything", "status": "connected"}]
    assert init["tools"] == [f"mcp__everything__{name}" for name in EVERYTHING_TOOLS]


def test_everything_server_tools_run_through_the_pipeline(vigil_env):
    steps = [{"tool_calls": [
        call("echo", "mcp__everything__echo", {"message": "hello from vigil"}),
        call("sum", "mcp__everything__get-sum", {"a": 2, "b": 40}),
        call("image", "mcp__everything__get-tiny-image", {}),
        call("weather", "mcp__everything__get-structured-content", {"location": "Chicago"}),
        call("links", "mcp__everything__get-resource-links", {"count": 2}),
        call("resource", "mcp__everything__get-resource-reference", {"resourceType": "Text", "resourceId": 2}),
        call("bad-type", "mcp__everything__get-sum", {"a": "two", "b": 3}),
        call("bad-city", "mcp__everything__get-structured-content", {"location": "Paris"}),
        call("toggle", "mcp__everything__toggle-subscriber-updates", {}),
    ]}, {"text": "done"}]
    names = [f"mcp__everything__{n}" for n in ("echo", "get-sum", "get-tiny-image", "get-structured-content",
                                               "get-resource-links", "get-resource-reference",
                                               "toggle-subscriber-updates")]
    code, events = run_vigil(vigil_env, steps, {"everything": everything()}, *allow(*names))
    assert code == 0

    # one menu, even though the server announces a tool-list change right after connecting
    [menu] = of(events, "ToolMenu")
    schemas = {t["name"]: t["input_schema"] for t in menu["tools"]}
    assert schemas["mcp__everything__get-sum"] == {
        "type": "object", "required": ["a", "b"],
        "properties": {"a": {"type": "number", "description": "First number"},
                       "b": {"type": "number", "description": "Second number"}}}
    assert not [name for name, schema in schemas.items() if "$schema" in json.dumps(schema)]

    # annotations → flags (readOnlyHint + idempotentHint here; toggle says neither)
    started = {e["call_id"]: e for e in of(events, "ToolCallStarted")}
    assert started["echo"]["flags"] == {"read_only": True, "destructive": False, "concurrency_safe": True,
                                        "side_effect_scope": "network", "needs_approval": True,
                                        "requires_user_interaction": False, "risk": "low"}
    assert (started["toggle"]["flags"]["read_only"], started["toggle"]["flags"]["destructive"],
            started["toggle"]["flags"]["concurrency_safe"]) == (False, False, False)
    assert started["echo"]["timeout_ms"] == 30000
    # read-only calls ran as one concurrent group; the toggle (not concurrency-safe) on its own
    groups = of(events, "ToolCallScheduled")[0]["groups"]
    assert groups == [["echo", "sum", "image", "weather", "links", "resource", "bad-type", "bad-city"], ["toggle"]]

    assert text_of(outcome(events, "echo")) == "Echo: hello from vigil"
    assert text_of(outcome(events, "sum")) == "The sum of 2 and 40 is 42."

    image = outcome(events, "image")
    assert image["type"] == "ToolCallResult"
    [placeholder] = [line for line in text_of(image).splitlines() if line.startswith("[image")]
    assert placeholder.startswith("[image: image/png, ")
    assert placeholder.endswith("not shown: the model cannot take it]")
    [shown] = [b for b in image["display"]["blocks"] if b["type"] == "image"]
    assert shown["mime_type"] == "image/png" and shown["bytes"] > 1000 and "data" not in shown

    weather = outcome(events, "weather")
    structured = weather["display"]["structured_content"]
    assert set(structured) == {"temperature", "conditions", "humidity"}
    assert json.loads(text_of(weather)) == structured

    links = text_of(outcome(events, "links")).splitlines()
    assert [line.split(":")[0] for line in links[1:]] == [
        "[resource link] Blob Resource 1", "[resource link] Text Resource 2"]
    assert links[1].endswith("demo://resource/dynamic/blob/1 (text/plain) — Resource 1: plaintext resource")
    resource = text_of(outcome(events, "resource")).splitlines()
    assert resource[1] == "[resource demo://resource/dynamic/text/2 (text/plain)]"
    assert resource[2].startswith("Resource 2: This is a plaintext resource")

    bad_type = outcome(events, "bad-type")
    assert (bad_type["phase"], bad_type["code"]) == ("validate", "schema_invalid")
    assert "The parameter `a` type is expected as `number` but provided as `string`" in bad_type["model_content"]
    bad_city = outcome(events, "bad-city")
    assert (bad_city["phase"], bad_city["code"]) == ("validate", "schema_invalid")
    assert "'Paris' is not one of ['New York', 'Chicago', 'Los Angeles']" in bad_city["model_content"]
    assert of(events, "ToolCallStarted", "bad-type") == [] and of(events, "ToolCallStarted", "bad-city") == []


def test_the_image_goes_to_a_model_that_takes_images(vigil_env, monkeypatch):
    from tui_app.providers.scripted import ScriptedModel

    monkeypatch.setattr(ScriptedModel, "supports_images", True)
    steps = [{"tool_calls": [call("image", "mcp__everything__get-tiny-image", {})]}, {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, {"everything": everything()}, *allow("mcp__everything__get-tiny-image"))
    assert code == 0
    content = outcome(events, "image")["model_content"]
    assert [part["type"] for part in content] == ["text", "image"]
    assert content[1]["media_type"] == "image/png"
    assert base64.b64decode(content[1]["data"]).startswith(b"\x89PNG")


def test_long_running_operation_reports_its_exact_progress(vigil_env):
    steps = [{"tool_calls": [call("long", "mcp__everything__trigger-long-running-operation",
                                  {"duration": 0.8, "steps": 4})]}, {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, {"everything": everything()},
                             *allow("mcp__everything__trigger-long-running-operation"))
    assert code == 0
    progress = [(p["kind"], p["progress"], p["total"]) for p in of(events, "ToolCallProgress", "long")]
    assert progress == [("progress", 1.0, 4.0), ("progress", 2.0, 4.0), ("progress", 3.0, 4.0), ("progress", 4.0, 4.0)]
    assert text_of(outcome(events, "long")) == "Long running operation completed. Duration: 0.8 seconds, Steps: 4."


def test_a_server_timeout_cancels_the_call_and_its_late_progress_is_ignored(vigil_env):
    steps = [{"tool_calls": [call("long", "mcp__everything__trigger-long-running-operation",
                                  {"duration": 2, "steps": 10})]},
             {"delay_ms": 600, "tool_calls": [call("echo", "mcp__everything__echo", {"message": "next"})]},
             {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, {"everything": everything(timeout=500)},
                             *allow("mcp__everything__trigger-long-running-operation", "mcp__everything__echo"))
    assert code == 0
    long = outcome(events, "long")
    assert (long["phase"], long["code"], long["model_content"]) == (
        "timeout", "timeout", "Tool execution timed out after 500ms")
    progress = of(events, "ToolCallProgress", "long")
    assert 1 <= len(progress) <= 3  # one every 200 ms until the timeout; the server went on after it
    assert all(p["seq"] < long["seq"] for p in progress)
    assert text_of(outcome(events, "echo")) == "Echo: next"


def test_filesystem_server_reads_asks_before_writing_and_refuses_outside_its_root(vigil_env, tmp_path):
    notes = vigil_env / "notes.txt"
    notes.write_text("first line\nsecond line\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    steps = [{"tool_calls": [
        call("read", "mcp__fs__read_text_file", {"path": str(notes)}),
        call("write", "mcp__fs__write_file", {"path": str(vigil_env / "new.txt"), "content": "x"}),
        call("dry", "mcp__fs__edit_file", {"path": str(notes), "dryRun": True,
                                           "edits": [{"oldText": "second line", "newText": "2nd line"}]}),
        call("escape", "mcp__fs__read_text_file", {"path": str(outside)}),
    ]}, {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, {"fs": filesystem(vigil_env)},
                             *allow("mcp__fs__read_text_file", "mcp__fs__edit_file"))
    assert code == 0
    assert text_of(outcome(events, "read")) == "first line\nsecond line\n"

    write = outcome(events, "write")
    assert (write["phase"], write["code"]) == ("permission", "no_permission_client")
    [asked] = of(events, "PermissionRequested", "write")
    assert (asked["risk"], asked["side_effect_scope"], asked["preview_kind"]) == ("high", "network", "json")
    assert asked["summary"] == 'Call write_file on MCP server "fs" (the server says: may be destructive, idempotent)'
    assert asked["suggested_rules"] == ["mcp__fs__write_file"]
    assert not (vigil_env / "new.txt").exists()

    dry = text_of(outcome(events, "dry"))
    assert "-second line" in dry and "+2nd line" in dry
    assert notes.read_text() == "first line\nsecond line\n"
    assert of(events, "ToolCallStarted", "dry")[0]["flags"]["destructive"] is True

    escape = outcome(events, "escape")
    assert (escape["type"], escape["phase"]) == ("ToolCallError", "execute")
    assert escape["model_content"].startswith("Access denied - path outside allowed directories")


def test_filesystem_write_runs_when_a_rule_allows_it(vigil_env):
    steps = [{"tool_calls": [call("write", "mcp__fs__write_file",
                                  {"path": str(vigil_env / "new.txt"), "content": "written by the server"})]},
             {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, {"fs": filesystem(vigil_env)}, *allow("mcp__fs__write_file"))
    assert code == 0
    [resolved] = of(events, "PermissionResolved", "write")
    assert (resolved["decision"], resolved["decided_by"], resolved["rule"]) == ("allow", "rule", "mcp__fs__write_file")
    assert text_of(outcome(events, "write")) == f"Successfully wrote to {vigil_env / 'new.txt'}"
    assert (vigil_env / "new.txt").read_text() == "written by the server"


def test_mcp_json_at_the_project_root_with_variables(vigil_env, monkeypatch):
    monkeypatch.setenv("EVERYTHING_JS", str(EVERYTHING_JS))
    (vigil_env / ".mcp.json").write_text(json.dumps({"mcpServers": {"everything": {
        "command": "node", "args": ["${EVERYTHING_JS}", "${TRANSPORT:-stdio}"],
        "env": {"GREETING": "${UNSET_GREETING}"}}}}))
    steps = [{"tool_calls": [call("env", "mcp__everything__get-env", {})]}, {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, None, *allow("mcp__everything__get-env"))
    assert code == 0
    server_env = json.loads(text_of(outcome(events, "env")))
    assert server_env["GREETING"] == "${UNSET_GREETING}"
    [warning] = [w for w in of(events, "Warning") if w["code"] == "mcp_config_unset_variable"]
    assert warning["message"] == (
        f'{vigil_env / ".mcp.json"}: server "everything": ${{UNSET_GREETING}} is not set (left as written)')

    # --strict-mcp-config ignores the project file
    code, lines = run_vigil(vigil_env, [{"text": "hi"}], None, "--strict-mcp-config", fmt="stream-json")
    assert lines[0]["mcp_servers"] == [] and lines[0]["tools"] == []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def everything_over(transport: str, path: str, log_path: Path):
    """server-everything listening on a loopback port with one of its network transports."""
    port = free_port()
    log = log_path.open("w")
    process = subprocess.Popen(["node", str(EVERYTHING_JS), transport], env={**os.environ, "PORT": str(port)},
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        process.terminate()
        process.wait(DEADLINE_S)
        log.close()


@pytest.fixture
def everything_over_http(tmp_path: Path):
    with everything_over("streamableHttp", "/mcp", tmp_path / "http-server.log") as url:
        yield url


@pytest.fixture
def everything_over_sse(tmp_path: Path):
    with everything_over("sse", "/sse", tmp_path / "sse-server.log") as url:
        yield url


def test_streamable_http_server(vigil_env, everything_over_http, monkeypatch):
    monkeypatch.setenv("TEST_TOKEN", "t0k3n")
    servers = {"remote": {"type": "http", "url": everything_over_http,
                          "headers": {"Authorization": "Bearer ${TEST_TOKEN}"}},
               "alias": {"type": "streamable-http", "url": everything_over_http}}
    steps = [{"tool_calls": [call("echo", "mcp__remote__echo", {"message": "over http"}),
                             call("long", "mcp__alias__trigger-long-running-operation",
                                  {"duration": 0.4, "steps": 2})]},
             {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, servers,
                             *allow("mcp__remote__echo", "mcp__alias__trigger-long-running-operation"))
    assert code == 0
    assert [(s["server"], s["status"]) for s in of(events, "McpServerStatus")][2:4] == [
        ("remote", "connected"), ("alias", "connected")]
    assert text_of(outcome(events, "echo")) == "Echo: over http"
    assert [p["progress"] for p in of(events, "ToolCallProgress", "long")] == [1.0, 2.0]


def test_legacy_sse_server(vigil_env, everything_over_sse):
    servers = {"legacy": {"type": "sse", "url": everything_over_sse}}
    steps = [{"tool_calls": [call("echo", "mcp__legacy__echo", {"message": "over sse"}),
                             call("sum", "mcp__legacy__get-sum", {"a": 2, "b": 40})]},
             {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, servers, *allow("mcp__legacy__echo", "mcp__legacy__get-sum"))
    assert code == 0
    assert ("legacy", "connected") in [(s["server"], s["status"]) for s in of(events, "McpServerStatus")]
    assert text_of(outcome(events, "echo")) == "Echo: over sse"
    assert "42" in text_of(outcome(events, "sum"))
