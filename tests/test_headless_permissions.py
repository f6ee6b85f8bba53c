"""Whole sessions: headless stream-json with denials, and the session-level hooks (prompt, stop,
session start) through the real turn loop with a scripted model."""

from __future__ import annotations

import io
import json

from tests.hook_helpers import handler, make_hooks, one, script
from tests.perm_specs import BASH, MCP_READ, RAN, READ
from tui_app.agents.builtin_agent import BuiltinAgent
from tui_app.config import load_settings, settings_events
from tui_app.headless.runner import run_headless
from tui_app.providers.scripted import Script, ScriptedModel
from tui_app.runtime.permissions.broker import ApprovalBroker
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.session import Session


def session_for(tmp_path, steps, rules=None, hooks_config=None, specs=(BASH, READ, MCP_READ)) -> Session:
    registry = ToolRegistry()
    for spec in specs:
        registry.register(spec)
    policy = RulePolicy(cwd=str(tmp_path), rules=[make_rule(t, b) for b, ts in (rules or {}).items() for t in ts])
    session = Session(agent=BuiltinAgent(ScriptedModel(Script.model_validate({"steps": steps}))), cwd=str(tmp_path),
                      registry=registry, policy=policy, broker=ApprovalBroker(interactive=False),
                      log_path=tmp_path / "events.jsonl")
    if hooks_config is not None:
        session.hooks, _ = make_hooks(hooks_config, tmp_path, recorder=session.emit)  # type: ignore[arg-type]
    return session


async def test_stream_json_lists_denials_explains_them_and_the_run_goes_on(tmp_path):
    RAN.clear()
    (tmp_path / "README").write_text("read me\n")
    allow_make = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    steps = [
        {"text": "Cleaning and building.", "tool_calls": [
            {"id": "t1", "name": "Bash", "input": {"command": "rm -rf build"}},
            {"id": "t2", "name": "Bash", "input": {"command": "make"}},
            {"id": "t3", "name": MCP_READ.name, "input": {"path": "a"}},
            {"id": "t4", "name": "Read", "input": {"file_path": str(tmp_path / "README")}}]},
        {"text": "Two calls were refused; I will explain.", "expect": ["Bash(rm *)", "No permission client"]},
    ]
    session = session_for(tmp_path, steps, rules={"deny": ["Bash(rm *)"]},
                          hooks_config=one("PermissionRequest", handler(script("respond.py", json.dumps(allow_make))),
                                           matcher="Bash"))
    out = io.StringIO()
    code = await run_headless(session, "build it", "stream-json", out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert code == 0
    # Claude Code's order: a line per content block; a refusal of the permission system is announced
    # by a `permission_denied` line just before its result
    assert [(ln["type"], ln.get("subtype")) for ln in lines] == [
        ("system", "init"), *[("assistant", None)] * 5, ("system", "permission_denied"), ("user", None),
        ("user", None), ("system", "permission_denied"), ("user", None), ("user", None), ("assistant", None),
        ("result", "success")]
    assert lines[0]["permissionMode"] == "default"
    users = [ln for ln in lines if ln["type"] == "user"]
    results = {ln["message"]["content"][0]["tool_use_id"]: ln["message"]["content"][0] for ln in users}
    assert results["t1"]["is_error"] and "denied by the rule Bash(rm *)" in results["t1"]["content"]
    assert not results["t2"].get("is_error")  # the PermissionRequest hook decided
    assert results["t3"]["is_error"] and results["t3"]["content"] == "No permission client configured"
    assert not results["t4"].get("is_error")
    denied = [ln for ln in lines if ln.get("subtype") == "permission_denied"]
    assert [(d["tool_use_id"], d["decision_reason_type"]) for d in denied] == [("t1", "rule"), ("t3", "mode")]
    assert denied[1]["message"] == "No permission client configured"
    assert users[0]["tool_use_result"] == "Error: " + results["t1"]["content"]
    result = lines[-1]
    assert (result["subtype"], result["num_turns"]) == ("success", 2)
    assert result["result"] == "Two calls were refused; I will explain."
    assert result["permission_denials"] == [
        {"tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "rm -rf build"}},
        {"tool_name": MCP_READ.name, "tool_use_id": "t3", "tool_input": {"path": "a"}}]
    assert sorted(name for name, _ in RAN) == ["Bash", "Read"]  # the read may start while the model streams


async def test_a_rejected_prompt_never_reaches_the_model(tmp_path):
    reject = handler(script("exit_with.sh", 2, "no secrets in prompts"))
    session = session_for(tmp_path, [{"text": "never"}], hooks_config=one("UserPromptSubmit", reject))
    await session.start()
    turn = await session.run_turn("here is my API key")
    await session.close()
    assert turn.reason == "rejected" and turn.error.startswith("no secrets in prompts")
    assert session.agent.client.position == 0  # type: ignore[attr-defined]


async def test_prompt_and_session_start_context_reach_the_model(tmp_path):
    context = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "Branch: main"}}
    config = {**one("SessionStart", handler(script("respond.py", "Project uses pytest"))),
              **one("UserPromptSubmit", handler(script("respond.py", json.dumps(context))))}
    session = session_for(tmp_path, [{"text": "ok"}], hooks_config=config)
    await session.start()
    await session.run_turn("run the tests")
    await session.close()
    sent = session.agent.client.requests[0].messages  # type: ignore[attr-defined]
    texts = [b.text for m in sent if m.role == "user" for b in m.content]
    assert texts == ["Project uses pytest", "run the tests", "Branch: main"]


async def test_a_stop_hook_keeps_the_agent_going_at_most_8_times(tmp_path):
    steps = [{"text": f"answer {i}"} for i in range(12)]
    go_on = handler(script("exit_with.sh", 2, "tests not run"))
    session = session_for(tmp_path, steps, hooks_config=one("Stop", go_on))
    await session.start()
    turn = await session.run_turn("fix it")
    await session.close()
    assert turn.steps == 9 and turn.text == "answer 8"
    assert session.agent.client.requests[1].messages[-1].content[0].text.startswith("tests not run")  # type: ignore[attr-defined]


async def test_settings_are_announced_after_the_session_starts(tmp_path):
    (tmp_path / ".vigil").mkdir()
    (tmp_path / ".vigil" / "settings.json").write_text('{"permissions": {"deny": ["Bash(curl *)"]}}')
    (tmp_path / ".vigil" / "settings.local.json").write_text('{"permissions": {"allow": [')
    loaded = load_settings(cwd=str(tmp_path), home=tmp_path / "nohome", config_dir=tmp_path / "noconfig")
    session = session_for(tmp_path, [{"text": "ok"}])
    session.startup_events.extend(settings_events(loaded))
    seen = []
    session.subscribe(seen.append)
    await session.start()
    await session.close()
    types = [e.type for e in seen]
    assert types[:3] == ["SessionStarted", "SettingsLoaded", "Warning"]
    assert seen[1].files == [str(tmp_path / ".vigil" / "settings.json")]
    assert seen[1].errors[0]["file"] == str(tmp_path / ".vigil" / "settings.local.json")
    logged = [json.loads(line)["type"] for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert "SettingsLoaded" in logged


async def test_a_post_tool_use_block_keeps_the_result_a_success_and_tells_the_model(tmp_path):
    """Claude Code's rule: the call ran, so its result stands; the reason reaches the model beside it."""
    RAN.clear()
    (tmp_path / "a").write_text("a\n")
    block = {"decision": "block", "reason": "lint found 3 problems"}
    steps = [{"text": "Reading.", "tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "a"}}]},
             {"text": "Noted.", "expect": ["PostToolUse:Read hook blocking error: lint found 3 problems"]}]
    session = session_for(tmp_path, steps, hooks_config=one("PostToolUse", handler(
        script("respond.py", json.dumps(block))), matcher="Read"))
    out = io.StringIO()
    assert await run_headless(session, "read it", "stream-json", out) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    result = next(ln for ln in lines if ln["type"] == "user")["message"]["content"][0]
    assert "is_error" not in result and "lint found 3 problems" in result["content"]
    assert lines[-1]["permission_denials"] == [] and lines[-1]["result"] == "Noted."
    assert [name for name, _ in RAN] == ["Read"]


async def test_a_headless_pre_tool_use_ask_gives_the_model_the_hooks_reason(tmp_path):
    RAN.clear()
    ask = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                  "permissionDecisionReason": "a person must look at rm"}}
    steps = [{"text": "Cleaning.", "tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "ls"}}]},
             {"text": "Refused.", "expect": ["a person must look at rm"]}]
    session = session_for(tmp_path, steps, hooks_config=one("PreToolUse", handler(
        script("respond.py", json.dumps(ask))), matcher="Bash"))
    out = io.StringIO()
    assert await run_headless(session, "clean", "stream-json", out) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    denied = next(ln for ln in lines if ln.get("subtype") == "permission_denied")
    assert (denied["tool_use_id"], denied["decision_reason_type"], denied["message"]) == (
        "b1", "hook", "a person must look at rm")
    result = next(ln for ln in lines if ln["type"] == "user")["message"]["content"][0]
    assert result["is_error"] and result["content"] == "a person must look at rm"
    assert lines[-1]["permission_denials"] == [{"tool_name": "Bash", "tool_use_id": "b1",
                                                "tool_input": {"command": "ls"}}]
    assert RAN == []
