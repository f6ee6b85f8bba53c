"""What the approval dialog (and the log) is told about a call, what the Notification hook hears
when a prompt opens, and what a PermissionRequest hook is offered: a user reads all of it."""

from __future__ import annotations

import json

import pytest

from tests.hook_helpers import handler, script
from tests.perm_specs import BASH, MCP_WRITE, RAN, WEBFETCH, WRITE
from tests.permission.approving import allow, answering, deny, logged, permission_hook, setup
from tui_app.runtime.files.state import FileState
from tui_app.runtime.pipeline import ToolCall, run_call


@pytest.fixture(autouse=True)
def _clear_ran():
    RAN.clear()


async def test_a_tool_without_a_preview_shows_its_exact_input_as_indented_json(tmp_path):
    """WebFetch has no preview of its own: the dialog shows the input, as the user would write it."""
    env, rec, broker = setup(tmp_path, WEBFETCH)
    answering(env, rec, broker, deny)
    data = {"url": "http://localhost:8080/café", "prompt": "résumé in 3 lines"}
    out = await run_call(ToolCall("t1", "WebFetch", data), env)
    assert out.code == "user_denied" and RAN == []
    (asked,) = rec.of("PermissionRequested")
    assert asked.preview_kind == "json"
    # letters, not \\u escapes; two spaces a level
    assert asked.preview == '{\n  "url": "http://localhost:8080/café",\n  "prompt": "résumé in 3 lines"\n}'


async def test_a_control_sequence_hidden_in_a_write_is_shown_in_the_diff_not_dropped(tmp_path):
    """A terminal title escape in file content: the user sees ␛ … ␇ in the diff they approve."""
    env, rec, broker = setup(tmp_path, WRITE)
    env.services["file_state"] = FileState(str(tmp_path), emit=rec)
    answering(env, rec, broker, deny)
    target = tmp_path / "notes.txt"
    out = await run_call(ToolCall("t1", "Write", {"file_path": str(target), "content": "fine\x1b]0;owned\x07 text\n"}),
                         env)
    assert out.code == "user_denied" and not target.exists()
    (asked,) = rec.of("PermissionRequested")
    shown = asked.preview_display.model_dump_json()
    assert "fine␛]0;owned␇ text" in shown and "\\u001b" not in shown and "\\u0007" not in shown


async def test_the_notification_hook_hears_which_session_needs_permission(tmp_path):
    log = tmp_path / "notified.jsonl"
    env, rec, broker = setup(tmp_path, mode="acceptEdits",
                             hooks_config={"Notification": [{"matcher": "permission_prompt",
                                                             "hooks": [handler(script("record.py", log))]}]})
    env.transcript_path = str(tmp_path / "events.jsonl")
    answering(env, rec, broker, allow)
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert out.type == "ToolCallResult"
    await env.hooks.session_end({}, "exit")  # waits for the notification, which is not waited for
    [seen] = [json.loads(line)["stdin"] for line in log.read_text().splitlines()]
    assert {k: seen[k] for k in ("session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name",
                                 "notification_type", "title", "message")} == {
        "session_id": "test", "transcript_path": str(tmp_path / "events.jsonl"), "cwd": str(tmp_path),
        "permission_mode": "acceptEdits", "hook_event_name": "Notification", "notification_type": "permission_prompt",
        "title": "Permission needed", "message": "Vigil needs your permission to use Bash"}


async def test_a_headless_run_sends_no_permission_prompt_notification(tmp_path):
    """Nobody is there to answer a prompt: nothing tells the user one is open."""
    log = tmp_path / "notified.jsonl"
    env, _rec, _ = setup(tmp_path, interactive=False,
                         hooks_config={"Notification": [{"hooks": [handler(script("record.py", log))]}]})
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    await env.hooks.session_end({}, "exit")
    assert out.code == "no_permission_client" and not log.exists()


@pytest.mark.parametrize("spec, tool_input, rules", [
    (BASH, {"command": "npm run lint"}, [{"toolName": "Bash", "ruleContent": "npm run lint"}]),
    (MCP_WRITE, {"path": "a"}, [{"toolName": "mcp__files__write_file"}]),  # a whole tool: no content
])
async def test_a_permission_request_hook_is_offered_the_rule_always_allow_would_save(tmp_path, spec, tool_input,
                                                                                     rules):
    log = tmp_path / "asked.jsonl"
    env, _rec, _ = setup(tmp_path, spec, interactive=False, hooks_config=permission_hook(tmp_path, {}, log))
    out = await run_call(ToolCall("t1", spec.name, tool_input), env)
    assert out.code == "no_permission_client"  # the hook gave no decision, and nobody else can
    (asked,) = logged(log)
    assert asked["permission_suggestions"] == [
        {"type": "addRules", "rules": rules, "behavior": "allow", "destination": "localSettings"}]
