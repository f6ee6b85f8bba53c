"""The real Codex (codex-acp 0.16.0, Codex core inside; pinned in tests/agents) under Vigil over ACP,
offline against the loopback Responses API server. The preset starts it in `read-only`, where it
asks before every edit; its commands run inside its own sandbox without asking (read-only there)
unless the model asks to escalate, and then Vigil decides the unwrapped command.
"""

from __future__ import annotations

import json

from tests import acp_agents_kit
from tests.acp_agents_kit import (
    agent_session,
    answer_every_request,
    call_story,
    codex_entry,
    headless,
    recorder,
    stream_lines,
)
from tests.cc_kit import first
from tests.wire_responses import function_output, responses_reply

# the fixtures, visible to this module's tests
home, project, server, scratch = (acp_agents_kit.home, acp_agents_kit.project, acp_agents_kit.server,
                                  acp_agents_kit.scratch)

ASKED_AND_ALLOWED = ["ToolCallRequested", "PermissionRequested", "PermissionResolved:allow:user", "ToolCallStarted",
                     "ToolCallResult"]
PATCH = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-hello world\n+goodbye world\n*** End Patch\n"


def patch_call(call_id="call_p1"):
    return [{"call_id": call_id, "name": "apply_patch", "input": PATCH}]


def command_call(command, call_id="call_x1", escalate=True):
    arguments = {"cmd": command, "justification": "make a file"}
    if escalate:
        arguments["sandbox_permissions"] = "require_escalated"
    return [{"call_id": call_id, "name": "exec_command", "arguments": arguments}]


def session_of(tmp_path, project, server, scratch, **kw):
    return agent_session(tmp_path, project, server, "codex", entry=codex_entry(tmp_path, server, scratch), **kw)


async def test_an_edit_is_asked_with_vigils_diff_then_applied(tmp_path, project, server, scratch):
    notes = project / "notes.txt"
    server.queue(responses_reply(text="Changing it.", custom_calls=patch_call()), responses_reply(text="Goodbye."))
    session = session_of(tmp_path, project, server, scratch)
    seen = recorder(session)
    asked = answer_every_request(session, "allow")
    await session.start()
    turn = await session.run_turn("Make the note say goodbye.")
    await session.close()
    assert (turn.reason, turn.text) == ("completed", "Goodbye.")
    assert notes.read_text() == "goodbye world\n"
    assert [e.mode for e in seen if e.type == "AgentModeChanged"][-1] == "read-only"  # where it asks
    # Codex says the call is in progress before it asks: still asked first, then run
    assert call_story(seen, "call_p1") == ASKED_AND_ALLOWED
    diff = asked[0].preview_display
    assert (diff.path, diff.old_text, diff.new_text) == (str(notes), "hello world\n", "goodbye world\n")
    assert "Success" in function_output(server.requests[-1].json, "call_p1")


async def test_a_denied_edit_is_not_applied_and_codex_ends_the_turn(tmp_path, project, server, scratch):
    """Codex offers only `abort` for a no: its turn ends there; the next turn goes on."""
    notes = project / "notes.txt"
    server.queue(responses_reply(text="Changing it.", custom_calls=patch_call()), responses_reply(text="Next."))
    session = session_of(tmp_path, project, server, scratch)
    seen = recorder(session)
    asked = answer_every_request(session, "deny")
    await session.start()
    denied = await session.run_turn("Make the note say goodbye.")
    again = await session.run_turn("Fine, leave it.")
    await session.close()
    assert notes.read_text() == "hello world\n"
    told = ["ToolCallRequested", "PermissionRequested", "PermissionResolved:deny:user"]
    assert call_story(seen, "call_p1")[:3] == told
    assert first(seen, "ToolCallError", call_id="call_p1").code == "user_denied"
    assert denied.reason == "completed" and again.text == "Next."  # ended by the no, not interrupted
    assert "Codex can only abort: a no ends its turn" in asked[0].reason  # the dialog says so before the choice


async def test_an_escalated_command_is_asked_unwrapped_and_run(tmp_path, project, server, scratch):
    made = project / "made.txt"
    server.queue(responses_reply(function_calls=command_call("echo hi > made.txt")), responses_reply(text="Made."))
    session = session_of(tmp_path, project, server, scratch)
    seen = recorder(session)
    asked = answer_every_request(session, "allow")
    await session.start()
    await session.run_turn("Make a file.")
    await session.close()
    assert made.read_text() == "hi\n"
    # Codex sends ["/bin/bash", "-lc", CMD]: the dialog, the rules and "always allow" see CMD
    assert asked[0].tool == "Bash" and asked[0].input["command"] == "echo hi > made.txt"
    assert first(seen, "ToolCallStarted", call_id="call_x1").target == "echo hi > made.txt"
    assert call_story(seen, "call_x1")[:4] == ASKED_AND_ALLOWED[:4]
    done = first(seen, "ToolCallResult", call_id="call_x1")  # its result, not the question asked before it
    assert done.display.exit_code == 0 and "Proposed Amendment" not in str(done.model_content)


async def test_a_bash_rule_allows_the_unwrapped_command_without_a_dialog(tmp_path, project, server, scratch):
    made = project / "made.txt"
    server.queue(responses_reply(function_calls=command_call("touch made.txt")), responses_reply(text="Made."))
    entry = codex_entry(tmp_path, server, scratch)
    settings = tmp_path / "codex-settings.json"
    settings.write_text(json.dumps({"agents": {"codex": entry}, "permissions": {"allow": ["Bash(touch *)"]}}))
    from tui_app.assemble import SessionOptions, build_session
    session = build_session(SessionOptions(cwd=str(project), agent="codex", settings_file=str(settings),
                                           no_claude_settings=True, interactive=True))
    seen = recorder(session)
    asked = answer_every_request(session, "deny")
    await session.start()
    await session.run_turn("Make a file.")
    await session.close()
    assert made.exists() and asked == []
    resolved = first(seen, "PermissionResolved", call_id="call_x1")
    assert (resolved.decision, resolved.decided_by) == ("allow", "rule")


async def test_a_command_inside_codexs_sandbox_runs_unasked_and_read_only(tmp_path, project, server, scratch):
    """What Vigil cannot supervise: without escalation Codex runs the command in its own read-only
    sandbox without asking; codex-acp reports the call only sometimes (a fast command's start can
    go unreported), and when it does the row says Codex decided. The sandbox keeps it from writing."""
    made = project / "made.txt"
    server.queue(responses_reply(function_calls=command_call("echo hi > made.txt", escalate=False)),
                 responses_reply(text="It failed."))
    session = session_of(tmp_path, project, server, scratch)
    seen = recorder(session)
    asked = answer_every_request(session, "allow")
    await session.start()
    await session.run_turn("Make a file.")
    await session.close()
    assert not made.exists() and asked == []
    assert "Read-only file system" in function_output(server.requests[-1].json, "call_x1")
    assert "without asking Vigil" in first(seen, "Warning", code="agent_acts_unasked").message  # said up front
    unasked = ["ToolCallRequested", "PermissionResolved:allow:agent", "ToolCallStarted", "ToolCallError"]
    assert call_story(seen, "call_x1") in ([], unasked, [*unasked[:3], "ToolCallResult"])
    resolved = first(seen, "PermissionResolved", call_id="call_x1")
    assert resolved is None or resolved.reason == "allowed by Codex"


async def test_plan_mode_stays_plan_in_codexs_read_only_mode(tmp_path, project, server, scratch):
    server.queue(responses_reply(text="A plan."))
    session = session_of(tmp_path, project, server, scratch, permission_mode="plan")
    seen = recorder(session)
    await session.start()
    await session.run_turn("Plan it.")
    await session.close()
    assert session.permission_mode == "plan"
    assert [e.mode for e in seen if e.type == "AgentModeChanged"][-1] == "read-only"


def test_headless_stream_json_lists_the_denied_edit(tmp_path, project, server, scratch):
    notes = project / "notes.txt"
    server.queue(responses_reply(text="Changing it.", custom_calls=patch_call()))
    done = headless(tmp_path, project, server, "codex", "Change the note.",
                    entry=codex_entry(tmp_path, server, scratch))
    assert done.returncode == 0, done.stderr  # Codex's abort for the no is not an error of the run
    result = stream_lines(done)[-1]
    assert (result["type"], result["subtype"], result["is_error"]) == ("result", "success", False)
    assert [(d["tool_name"], d["tool_use_id"]) for d in result["permission_denials"]] == [("Edit", "call_p1")]
    assert notes.read_text() == "hello world\n"
