"""Vigil as the CLI of the official Claude Agent SDK: `claude_agent_sdk.query()` runs this
worktree's `vigil` through `cli_path` (a small wrapper script) with a scripted model or the
loopback Anthropic server behind it, and the SDK's own code parses everything Vigil writes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    ToolUseBlock,
    UserMessage,
    query,
)
from claude_agent_sdk._internal.message_parser import parse_message

from tests.wire_server import LoopbackServer, Reply, anthropic_events, sse

ROOT = Path(__file__).resolve().parent.parent


def wrapper(tmp_path: Path, *vigil_args: str) -> Path:
    """What an SDK application points `cli_path` at: this worktree's vigil, plus fixed flags."""
    script = tmp_path / "vigil-cli"
    extra = " ".join(f"'{a}'" for a in vigil_args)
    script.write_text(f"#!/bin/sh\nexport PYTHONPATH='{ROOT}'\nexport VIGIL_HOME='{tmp_path / 'vigil-home'}'\n"
                      f"exec '{sys.executable}' -m tui_app \"$@\" {extra}\n")
    script.chmod(0o755)
    return script


def scripted(tmp_path: Path, steps: list[dict[str, Any]]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"steps": steps}))
    return path


def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "notes.txt").write_text("hello world\n")
    return proj


def clean_env(**extra: str) -> dict[str, str]:
    """The SDK merges this over the environment: keys of the machine's own providers must not leak in."""
    return {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "ANTHROPIC_BASE_URL": "", **extra}


async def one_prompt(text: str):
    yield {"type": "user", "message": {"role": "user", "content": text}}


async def collect(prompt: Any, options: ClaudeAgentOptions) -> list[Any]:
    return [message async for message in query(prompt=prompt, options=options)]


EDIT_AND_BASH = [
    {"text": "Reading the notes.", "tool_calls": [
        {"id": "toolu_r1", "name": "Read", "input": {"file_path": "notes.txt"}}]},
    {"expect": ["hello world"], "text": "Changing them, then a shell command.", "tool_calls": [
        {"id": "toolu_e1", "name": "Edit", "input": {"file_path": "notes.txt", "old_string": "hello",
                                                     "new_string": "goodbye"}},
        {"id": "toolu_b1", "name": "Bash", "input": {"command": "touch bash-ran.txt"}}]},
    {"expect": ["updated", "no shell today"], "text": "The notes are changed; the shell was refused."},
]


async def test_the_sdk_drives_vigil_its_callback_decides_and_the_run_ends_on_a_result(tmp_path):
    proj = project(tmp_path)
    asked: list[tuple[str, dict[str, Any], Any]] = []

    async def can_use_tool(name: str, data: dict[str, Any], context: Any):
        asked.append((name, data, context))
        if name == "Bash":
            return PermissionResultDeny(message="no shell today")
        return PermissionResultAllow()

    options = ClaudeAgentOptions(cli_path=str(wrapper(tmp_path, "--script", str(scripted(tmp_path, EDIT_AND_BASH)))),
                                 cwd=str(proj), env=clean_env(), can_use_tool=can_use_tool)
    messages = await collect(one_prompt("Update the notes."), options)

    # the callback was asked for exactly the two calls that need asking (a read in the project does not)
    assert [(name, data.get("file_path") or data.get("command")) for name, data, _ in asked] == [
        ("Edit", str(proj / "notes.txt")), ("Bash", "touch bash-ran.txt")]
    assert asked[1][2].tool_use_id == "toolu_b1"
    assert asked[1][2].suggestions and asked[1][2].suggestions[0].type == "addRules"
    assert (proj / "notes.txt").read_text() == "goodbye world\n"  # the allowed Edit was applied
    assert not (proj / "bash-ran.txt").exists()  # the denied Bash never ran
    assert isinstance(messages[0], SystemMessage) and messages[0].data["claude_code_version"] == "2.1.332"
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.result) == (
        "success", False, "The notes are changed; the shell was refused.")
    assert result.permission_denials == [{"tool_name": "Bash", "tool_use_id": "toolu_b1",
                                          "tool_input": {"command": "touch bash-ran.txt"}}]
    assert result.total_cost_usd == 0 and result.duration_api_ms >= 0  # a scripted model costs nothing
    tool_uses = [b for m in messages if isinstance(m, AssistantMessage) for b in m.content
                 if isinstance(b, ToolUseBlock)]
    assert [b.id for b in tool_uses] == ["toolu_r1", "toolu_e1", "toolu_b1"]
    denied = next(b for m in messages if isinstance(m, UserMessage) for b in m.content
                  if getattr(b, "tool_use_id", None) == "toolu_b1")
    assert denied.is_error and "no shell today" in denied.content


async def test_an_edited_input_from_the_callback_is_what_runs_and_rules_still_apply(tmp_path):
    proj = project(tmp_path)
    steps = [{"text": "Two commands.", "tool_calls": [
        {"id": "b1", "name": "Bash", "input": {"command": "touch one.txt"}},
        {"id": "b2", "name": "Bash", "input": {"command": "touch two.txt"}}]},
        {"expect": ["denied"], "text": "Done."}]
    (proj / ".claude").mkdir()
    (proj / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(touch evil*)"]}}))

    async def can_use_tool(name: str, data: dict[str, Any], context: Any):
        if data["command"] == "touch one.txt":
            return PermissionResultAllow(updated_input={"command": "touch edited.txt"})
        return PermissionResultAllow(updated_input={"command": "touch evil.txt"})  # a deny rule covers it

    options = ClaudeAgentOptions(cli_path=str(wrapper(tmp_path, "--script", str(scripted(tmp_path, steps)))),
                                 cwd=str(proj), env=clean_env(), can_use_tool=can_use_tool)
    messages = await collect(one_prompt("go"), options)
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    assert (proj / "edited.txt").exists() and not (proj / "one.txt").exists()
    assert not (proj / "evil.txt").exists() and not (proj / "two.txt").exists()


async def test_sdk_hooks_are_called_back_with_claude_codes_input_and_their_deny_holds(tmp_path):
    proj = project(tmp_path)
    steps = [{"text": "Shell.", "tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "touch hooked.txt"}},
                                               {"id": "r1", "name": "Read", "input": {"file_path": "notes.txt"}}]},
             {"expect": ["not from a hook", "hello world"], "text": "Done."}]
    seen: list[tuple[dict[str, Any], str | None]] = []

    async def guard(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append((hook_input, tool_use_id))
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": "not from a hook"}}

    options = ClaudeAgentOptions(
        cli_path=str(wrapper(tmp_path, "--script", str(scripted(tmp_path, steps)))), cwd=str(proj), env=clean_env(),
        permission_mode="bypassPermissions", hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]})
    messages = await collect(one_prompt("go"), options)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Done."
    assert not (proj / "hooked.txt").exists()  # bypassPermissions, and still the hook's deny holds
    [(hook_input, tool_use_id)] = seen  # the matcher kept the Read away from the hook
    assert tool_use_id == "b1"
    assert {"session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "effort", "hook_event_name",
            "tool_name", "tool_input", "tool_use_id"} <= set(hook_input)
    assert (hook_input["hook_event_name"], hook_input["tool_input"]) == ("PreToolUse", {"command": "touch hooked.txt"})
    assert hook_input["permission_mode"] == "bypassPermissions"


async def test_a_client_session_takes_turns_switches_mode_and_model_and_can_be_interrupted(tmp_path):
    from tests.procs import marker, wait_for_marker, wait_gone

    proj = project(tmp_path)
    mark = marker()
    steps = [{"text": "A write.", "tool_calls": [{"id": "w1", "name": "Write",
                                                  "input": {"file_path": "a.txt", "content": "A"}}]},
             {"text": "Written."},
             {"text": "Waiting.", "tool_calls": [{"id": "s1", "name": "Bash", "input": {"command": f"sleep {mark}"}}]},
             {"text": "Back."}]
    asked: list[str] = []

    async def can_use_tool(name: str, data: dict[str, Any], context: Any):
        asked.append(name)
        return PermissionResultAllow()

    options = ClaudeAgentOptions(cli_path=str(wrapper(tmp_path, "--script", str(scripted(tmp_path, steps)))),
                                 cwd=str(proj), env=clean_env(), can_use_tool=can_use_tool,
                                 allowed_tools=["Bash(sleep *)"])
    async with ClaudeSDKClient(options) as client:
        await client.set_permission_mode("acceptEdits")
        await client.query("write a")
        first = [m async for m in client.receive_response()]
        assert isinstance(first[-1], ResultMessage) and first[-1].result == "Written."
        assert (proj / "a.txt").read_text() == "A" and asked == []  # acceptEdits: nobody was asked
        await client.set_model("claude-other")
        await client.query("now wait")
        seen: list[Any] = []
        async for message in client.receive_response():
            seen.append(message)
            if isinstance(message, AssistantMessage) and any(isinstance(b, ToolUseBlock) for b in message.content):
                await wait_for_marker(mark, timeout=30)  # the command is running
                await client.interrupt()
        result = seen[-1]
        assert isinstance(result, ResultMessage)
        assert (result.subtype, result.is_error) == ("error_during_execution", True)
        assert result.stop_reason == "tool_use"
        assert wait_gone(mark) == {}  # the interrupt killed the command
        assert [m.model for m in seen if isinstance(m, AssistantMessage)][-1] == "claude-other"
        await client.query("still there?")  # the session takes further turns
        after = [m async for m in client.receive_response()]
        assert isinstance(after[-1], ResultMessage) and after[-1].result == "Back."


def parsed_lines(stdout: str) -> list[Any]:
    """Every line through the SDK's own parser (it raises on a missing required field)."""
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    for line in lines:
        parse_message(line)
    return lines


def unique_reply(n: int, **kw: Any) -> Reply:
    events = anthropic_events(**kw)
    events[0]["message"]["id"] = f"msg_test_{n:03d}"
    return Reply(pieces=sse(events))


async def test_stream_json_from_a_real_provider_has_every_field_the_sdk_reads(tmp_path):
    import asyncio

    proj = project(tmp_path)
    with LoopbackServer() as server:
        server.queue(unique_reply(1, thinking="Look first.", text="Reading.", tool_calls=[
            {"id": "toolu_1", "name": "Read", "input": {"file_path": str(proj / "notes.txt")}}]),
            unique_reply(2, text="It says hello.", usage={"input_tokens": 1000, "output_tokens": 200}))
        env = {**os.environ, "PYTHONPATH": str(ROOT), "VIGIL_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": "",
               "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-test"}
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tui_app", "-p", "What do the notes say?", "--output-format", "stream-json",
            "--verbose", "--model", "claude-sonnet-4-5", cwd=proj, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    lines = parsed_lines(out.decode())
    init, result = lines[0], lines[-1]
    assert (init["type"], init["subtype"], init["claude_code_version"]) == ("system", "init", "2.1.332")
    assert {"cwd", "session_id", "tools", "mcp_servers", "model", "permissionMode", "slash_commands", "apiKeySource",
            "output_style", "agents", "skills", "plugins", "uuid"} <= set(init)
    assistants = [ln for ln in lines if ln["type"] == "assistant"]
    assert [a["message"]["content"][0]["type"] for a in assistants] == ["thinking", "text", "tool_use", "text"]
    assert len({a["message"]["id"] for a in assistants[:3]}) == 1 and assistants[3]["message"]["id"] != assistants[0][
        "message"]["id"]
    assert all(a["uuid"] and a["session_id"] == init["session_id"] and a["parent_tool_use_id"] is None
               for a in assistants)
    user = next(ln for ln in lines if ln["type"] == "user")
    assert user["tool_use_result"]["file"]["filePath"] == str(proj / "notes.txt")
    assert {"duration_ms", "duration_api_ms", "num_turns", "result", "stop_reason", "session_id", "total_cost_usd",
            "usage", "modelUsage", "permission_denials", "uuid", "is_error", "subtype"} <= set(result)
    assert result["stop_reason"] == "end_turn"
    # 1120 input and 230 output tokens of Sonnet 4.5 at $3 / $15 per million
    assert result["total_cost_usd"] == pytest.approx((1120 * 3 + 230 * 15) / 1e6)
    usage = result["modelUsage"]["claude-sonnet-4-5"]
    assert (usage["inputTokens"], usage["outputTokens"], usage["costUSD"]) == (1120, 230, result["total_cost_usd"])
    assert result["usage"]["input_tokens"] == 1120 and result["usage"]["server_tool_use"]["web_search_requests"] == 0


async def test_partial_messages_stream_the_response_as_the_sdk_reads_it(tmp_path):
    proj = project(tmp_path)
    steps = [{"text": "Hello from a scripted model.", "tool_calls": [
        {"id": "r1", "name": "Read", "input": {"file_path": "notes.txt"}}]}, {"text": "Bye."}]
    options = ClaudeAgentOptions(cli_path=str(wrapper(tmp_path, "--script", str(scripted(tmp_path, steps)))),
                                 cwd=str(proj), env=clean_env(), include_partial_messages=True)
    messages = await collect(one_prompt("hi"), options)
    events = [m.event for m in messages if isinstance(m, StreamEvent)]
    text = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta"
                   and e["delta"]["type"] == "text_delta")
    assert text == "Hello from a scripted model.Bye."
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds.count("message_stop") == 2
    tool_json = [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"
                 and e["delta"]["type"] == "input_json_delta"]
    assert [json.loads(j) for j in tool_json] == [{"file_path": "notes.txt"}]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Bye."


def test_with_piped_stdio_and_the_sdks_flags_vigil_never_starts_the_tui(tmp_path):
    import subprocess

    proj = project(tmp_path)
    script = scripted(tmp_path, [{"text": "Fine."}])
    lines = "\n".join(json.dumps(m) for m in [
        {"type": "control_request", "request_id": "r1", "request": {"subtype": "initialize", "hooks": None}},
        {"type": "control_request", "request_id": "r2", "request": {"subtype": "get_context_usage"}},
        {"type": "user", "session_id": "", "parent_tool_use_id": None,
         "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}}]) + "\nnot json\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VIGIL_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-m", "tui_app", "--output-format", "stream-json", "--verbose",
                          "--input-format", "stream-json", "--system-prompt", "", "--permission-prompt-tool", "stdio",
                          "--setting-sources=user,project,local", "--fallback-model", "x", "--script", str(script)],
                         input=lines, capture_output=True, text=True, cwd=proj, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "\x1b[" not in out.stdout  # no terminal control sequence: no full-screen app
    objects = [json.loads(line) for line in out.stdout.splitlines()]
    responses = {o["response"]["request_id"]: o["response"] for o in objects if o["type"] == "control_response"}
    assert responses["r1"]["subtype"] == "success" and responses["r1"]["response"]["claude_code_version"] == "2.1.332"
    assert responses["r2"]["subtype"] == "error" and "get_context_usage" in responses["r2"]["error"]
    assert objects[-1]["type"] == "result" and objects[-1]["result"] == "Fine."
    assert "input line is not JSON" in out.stderr and "--fallback-model is not supported" in out.stderr


def test_without_a_model_the_sdk_mode_says_so_instead_of_playing_the_demo(tmp_path):
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    out = subprocess.run([sys.executable, "-m", "tui_app", "--output-format", "stream-json", "--input-format",
                          "stream-json"], input="", capture_output=True, text=True, cwd=tmp_path,
                         env={**env, "PYTHONPATH": str(ROOT), "VIGIL_HOME": str(tmp_path / "home")}, timeout=60)
    assert out.returncode == 2 and out.stdout == ""
    assert "no model is configured" in out.stderr


#: required keys of the TypeScript SDK's message types (sdk.d.ts of @anthropic-ai/claude-agent-sdk)
TS_REQUIRED = {
    ("system", "init"): {"apiKeySource", "claude_code_version", "cwd", "tools", "mcp_servers", "model",
                         "permissionMode", "slash_commands", "output_style", "skills", "plugins", "uuid",
                         "session_id"},
    ("assistant", None): {"message", "parent_tool_use_id", "uuid", "session_id"},
    ("user", None): {"message", "parent_tool_use_id"},
    ("result", "success"): {"duration_ms", "duration_api_ms", "is_error", "num_turns", "result", "stop_reason",
                            "total_cost_usd", "usage", "modelUsage", "permission_denials", "uuid", "session_id"},
}
TS_BETA_MESSAGE = {"id", "type", "role", "content", "model", "stop_reason", "stop_sequence", "usage"}
TS_NON_NULLABLE_USAGE = {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                         "cache_creation", "server_tool_use", "service_tier", "inference_geo", "iterations",
                         "output_tokens_details", "speed"}
TS_MODEL_USAGE = {"inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens",
                  "webSearchRequests", "costUSD", "contextWindow", "maxOutputTokens"}

TS_DRIVER = """
import { query } from %(sdk)s;
const asked = [];
async function* prompts() {
  yield { type: "user", message: { role: "user", content: "Update the notes." }, parent_tool_use_id: null,
          session_id: "" };
}
const messages = query({ prompt: prompts(), options: {
  pathToClaudeCodeExecutable: %(cli)s, cwd: %(cwd)s, env: { ...process.env, ANTHROPIC_API_KEY: "" },
  canUseTool: async (name, input, ctx) => {
    asked.push([name, ctx.toolUseID ?? null]);
    return name === "Bash" ? { behavior: "deny", message: "no shell today" }
                           : { behavior: "allow", updatedInput: input };
  },
}});
for await (const message of messages) console.log(JSON.stringify({ message }));
console.log(JSON.stringify({ asked }));
"""


async def test_the_typescript_sdk_drives_vigil_too(tmp_path):
    """The official TypeScript SDK (`pathToClaudeCodeExecutable`) runs the same turn, and every message
    it hands its caller has the keys its types declare."""
    import asyncio

    from tests.needs import need_program, require
    from tests.real_agents import INSTALL, NODE_MODULES

    need_program("node")
    sdk = NODE_MODULES / "@anthropic-ai" / "claude-agent-sdk" / "sdk.mjs"
    if not sdk.is_file():
        require(f"the TypeScript Agent SDK is not installed ({INSTALL})")
    proj = project(tmp_path)
    cli = wrapper(tmp_path, "--script", str(scripted(tmp_path, EDIT_AND_BASH)))
    driver = tmp_path / "drive.mjs"
    driver.write_text(TS_DRIVER % {"sdk": json.dumps(str(sdk)), "cli": json.dumps(str(cli)),
                                   "cwd": json.dumps(str(proj))})
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    process = await asyncio.create_subprocess_exec("node", str(driver), cwd=tmp_path, env=env,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    rows = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    messages = [r["message"] for r in rows if "message" in r]
    (asked,) = [r["asked"] for r in rows if "asked" in r]
    assert [name for name, _ in asked] == ["Edit", "Bash"] and asked[1][1] == "toolu_b1"
    assert (proj / "notes.txt").read_text() == "goodbye world\n" and not (proj / "bash-ran.txt").exists()
    for message in messages:
        required = TS_REQUIRED.get((message["type"], message.get("subtype")))
        if required is not None:
            assert required <= set(message), (message["type"], sorted(required - set(message)))
        if message["type"] == "assistant":
            assert set(message["message"]) >= TS_BETA_MESSAGE, sorted(TS_BETA_MESSAGE - set(message["message"]))
    result = messages[-1]
    assert (result["type"], result["subtype"], result["result"]) == (
        "result", "success", "The notes are changed; the shell was refused.")
    assert set(result["usage"]) >= TS_NON_NULLABLE_USAGE, sorted(TS_NON_NULLABLE_USAGE - set(result["usage"]))
    assert all(result["usage"][k] is not None for k in TS_NON_NULLABLE_USAGE)
    for usage in result["modelUsage"].values():
        assert set(usage) >= TS_MODEL_USAGE
    assert [d["tool_use_id"] for d in result["permission_denials"]] == ["toolu_b1"]


async def test_resume_continue_and_fork_pick_up_the_recorded_conversation(tmp_path):
    from tui_app.runtime.log.eventlog import read_events

    proj = project(tmp_path)
    cli = str(wrapper(tmp_path, "--script", str(scripted(tmp_path, [{"text": "Noted."}]))))
    home = tmp_path / "vigil-home" / "sessions"

    def prompts_of(session_id: str) -> list[str]:
        return [e.prompt for e in read_events(home / session_id / "events.jsonl").events if e.type == "TurnStarted"]

    async def ask(text: str, **kw: Any) -> ResultMessage:
        messages = await collect(one_prompt(text), ClaudeAgentOptions(cli_path=cli, cwd=str(proj), env=clean_env(),
                                                                      **kw))
        assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
        return messages[-1]

    first = (await ask("one")).session_id
    assert (await ask("two", resume=first)).session_id == first
    assert (await ask("three", continue_conversation=True)).session_id == first  # the latest in this directory
    forked = (await ask("four", resume=first, fork_session=True)).session_id
    assert forked != first
    assert prompts_of(first) == ["one", "two", "three"]  # the fork left the original as it was
    assert prompts_of(forked) == ["one", "two", "three", "four"]


async def test_a_permission_request_hook_that_answers_first_wins_and_the_sdks_ask_is_withdrawn(tmp_path):
    """The SDK's callback is one more answer to the broker: a PermissionRequest hook racing it may win,
    and then the SDK's pending can_use_tool is cancelled (control_cancel_request)."""
    import asyncio

    proj = project(tmp_path)
    allow = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    (proj / ".claude").mkdir()
    (proj / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PermissionRequest": [
        # it answers once the SDK has been asked (the callback leaves a mark), so the race has one winner
        {"matcher": "Bash", "hooks": [{"type": "command", "timeout": 60, "command":
                                       f"while [ ! -e asked ]; do sleep 0.05; done; echo '{json.dumps(allow)}'"}]}]}}))
    steps = [{"text": "A command.", "tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "touch hooked"}}]},
             {"text": "Done."}]
    asked, cancelled = asyncio.Event(), asyncio.Event()

    async def can_use_tool(name: str, data: dict[str, Any], context: Any):
        asked.set()
        (proj / "asked").touch()
        try:
            await asyncio.Event().wait()  # a person who never answers
        except asyncio.CancelledError:
            cancelled.set()
            raise

    options = ClaudeAgentOptions(cli_path=str(wrapper(tmp_path, "--script", str(scripted(tmp_path, steps)))),
                                 cwd=str(proj), env=clean_env(), can_use_tool=can_use_tool)
    messages = await collect(one_prompt("go"), options)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Done."
    assert (proj / "hooked").exists()  # the hook's allow decided
    assert asked.is_set() and cancelled.is_set()  # the SDK was asked, then told the question was withdrawn


async def test_the_sdks_in_process_mcp_servers_are_left_out_with_a_word_and_the_run_goes_on(tmp_path):
    from claude_agent_sdk import create_sdk_mcp_server, tool

    @tool("greet", "Greets someone", {"name": str})
    async def greet(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"Hello {args['name']}"}]}

    proj = project(tmp_path)
    errors: list[str] = []
    options = ClaudeAgentOptions(
        cli_path=str(wrapper(tmp_path, "--script", str(scripted(tmp_path, [{"text": "Still here."}])))),
        cwd=str(proj), env=clean_env(), stderr=errors.append,
        mcp_servers={"tools": create_sdk_mcp_server("tools", tools=[greet])})
    messages = await collect(one_prompt("hi"), options)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Still here."
    assert any("in-process MCP server 'tools' is not supported" in line for line in errors)
