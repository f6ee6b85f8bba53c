"""The real OpenCode (opencode-ai, pinned in tests/agents) under Vigil over ACP, offline against the
loopback chat-completions server: with its default configuration OpenCode asks nothing, so the
preset tells it to ask (OPENCODE_PERMISSION) and Vigil decides every edit and command; the call
becomes a row, is asked about, then runs — in that order, although OpenCode reports it in
progress before it asks.
"""

from __future__ import annotations

from tests import acp_agents_kit
from tests.acp_agents_kit import (
    agent_session,
    answer_every_request,
    call_story,
    chat_tool_result,
    headless,
    recorder,
    stream_lines,
)
from tests.cc_kit import first
from tests.wire_server import openai_reply

# the fixtures, visible to this module's tests
home, project, server = acp_agents_kit.home, acp_agents_kit.project, acp_agents_kit.server

ASKED_AND_ALLOWED = ["ToolCallRequested", "PermissionRequested", "PermissionResolved:allow:user", "ToolCallStarted",
                     "ToolCallResult"]


def edit(notes, call_id="call_e1"):
    return [{"id": call_id, "name": "edit", "input": {"filePath": str(notes), "oldString": "hello",
                                                      "newString": "goodbye"}}]


async def test_an_edit_is_asked_with_vigils_diff_then_applied(tmp_path, project, server):
    notes = project / "notes.txt"
    server.queue(openai_reply(text="Changing it.", tool_calls=edit(notes)), openai_reply(text="It says goodbye."))
    session = agent_session(tmp_path, project, server, "opencode")
    seen = recorder(session)
    asked = answer_every_request(session, "allow")
    await session.start()
    turn = await session.run_turn("Make the note say goodbye.")
    await session.close()
    assert (turn.reason, turn.text) == ("completed", "It says goodbye.")
    assert notes.read_text() == "goodbye world\n"
    assert call_story(seen, "call_e1") == ASKED_AND_ALLOWED  # never "allowed by OpenCode" first
    diff = asked[0].preview_display  # Vigil's own diff, from the file on disk
    assert (diff.path, diff.old_text, diff.new_text) == (str(notes), "hello world\n", "goodbye world\n")
    row = first(seen, "ToolCallRequested", call_id="call_e1")
    assert row.input.get("filePath") == str(notes)  # the real input, not OpenCode's first placeholder
    assert "applied" in chat_tool_result(server.requests[-1], "call_e1").lower()


async def test_a_denied_edit_is_not_applied_and_the_model_hears_it(tmp_path, project, server):
    """OpenCode ends its turn on a rejection (no model call after it); the next turn's request
    tells the model the user rejected the call."""
    notes = project / "notes.txt"
    server.queue(openai_reply(text="Changing it.", tool_calls=edit(notes)), openai_reply(text="I left it."))
    session = agent_session(tmp_path, project, server, "opencode")
    seen = recorder(session)
    answer_every_request(session, "deny")
    await session.start()
    await session.run_turn("Make the note say goodbye.")
    again = await session.run_turn("Why not?")
    await session.close()
    assert notes.read_text() == "hello world\n"
    assert again.text == "I left it."
    told = ["ToolCallRequested", "PermissionRequested", "PermissionResolved:deny:user"]
    assert call_story(seen, "call_e1")[:3] == told
    assert first(seen, "ToolCallError", call_id="call_e1").code == "user_denied"
    heard = chat_tool_result(server.requests[-1], "call_e1")
    assert heard and "rejected" in heard.lower()


async def test_a_command_is_asked_then_run_or_refused(tmp_path, project, server):
    made = project / "made.txt"
    command = [{"id": "call_b1", "name": "bash", "input": {"command": "echo hi > made.txt",
                                                           "description": "Make a file"}}]
    server.queue(openai_reply(tool_calls=command), openai_reply(text="Made it."),
                 openai_reply(tool_calls=[{**command[0], "id": "call_b2"}]), openai_reply(text="Refused."))
    session = agent_session(tmp_path, project, server, "opencode")
    seen = recorder(session)
    decisions = iter(["allow", "deny"])
    asked = []

    def on_event(event):
        if event.type == "PermissionRequested":
            asked.append(event)
            from tui_app.runtime.permissions.broker import ApprovalAnswer
            session.broker.answer(event.request_id, ApprovalAnswer(next(decisions), input_sha256=event.input_sha256))
    session.subscribe(on_event)
    await session.start()
    await session.run_turn("Make a file.")
    assert made.read_text() == "hi\n"
    made.unlink()
    await session.run_turn("Make it again.")
    await session.close()
    assert not made.exists()
    assert [a.tool for a in asked] == ["Bash", "Bash"] and asked[0].input["command"] == "echo hi > made.txt"
    assert call_story(seen, "call_b1")[:4] == ASKED_AND_ALLOWED[:4]
    assert first(seen, "ToolCallResult", call_id="call_b1").display.exit_code == 0  # OpenCode's metadata.exit
    assert first(seen, "ToolCallError", call_id="call_b2").code == "user_denied"


async def test_plan_mode_stays_plan_and_nothing_is_edited(tmp_path, project, server):
    notes = project / "notes.txt"
    server.queue(openai_reply(tool_calls=edit(notes)), openai_reply(text="Planned only."),
                 openai_reply(text="Planned only."))
    session = agent_session(tmp_path, project, server, "opencode", permission_mode="plan")
    seen = recorder(session)
    asked = answer_every_request(session, "allow")
    await session.start()
    turn = await session.run_turn("Make the note say goodbye.")
    await session.close()
    assert session.permission_mode == "plan"
    assert [e.mode for e in seen if e.type == "AgentModeChanged"][-1] == "plan"  # OpenCode's own plan agent
    assert notes.read_text() == "hello world\n" and turn.reason == "completed"
    assert not [a for a in asked if a.tool != "ExitPlanMode"]


def test_headless_stream_json_lists_the_denied_edit(tmp_path, project, server):
    notes = project / "notes.txt"
    server.queue(openai_reply(text="Changing it.", tool_calls=edit(notes)))
    done = headless(tmp_path, project, server, "opencode", "Change the note.")
    assert done.returncode == 0, done.stderr
    result = stream_lines(done)[-1]
    # OpenCode ends its turn on a rejection: the result is its last words before it
    assert (result["type"], result["subtype"], result["result"]) == ("result", "success", "Changing it.")
    assert [(d["tool_name"], d["tool_use_id"]) for d in result["permission_denials"]] == [("Edit", "call_e1")]
    assert notes.read_text() == "hello world\n"


async def test_a_read_runs_unasked_and_its_row_says_opencode_decided(tmp_path, project, server):
    """OpenCode's reads are not asked about (its permission config has no `read: ask` by default):
    Vigil shows them, decided by OpenCode, and never claims it allowed them."""
    notes = project / "notes.txt"
    server.queue(openai_reply(tool_calls=[{"id": "call_r1", "name": "read", "input": {"filePath": str(notes)}}]),
                 openai_reply(text="It says hello."))
    session = agent_session(tmp_path, project, server, "opencode")
    seen = recorder(session)
    asked = answer_every_request(session, "deny")
    await session.start()
    await session.run_turn("What does the note say?")
    await session.close()
    assert asked == []
    assert call_story(seen, "call_r1") == ["ToolCallRequested", "PermissionResolved:allow:agent", "ToolCallStarted",
                                           "ToolCallResult"]
    assert first(seen, "PermissionResolved", call_id="call_r1").reason == "allowed by OpenCode"
    assert "hello world" in chat_tool_result(server.requests[-1], "call_r1")


async def test_a_fetch_is_asked_and_a_refused_one_reaches_nothing(tmp_path, project, server):
    """The network: OpenCode's webfetch is asked about (the preset's `webfetch: ask`); refused, the
    loopback page is never requested."""
    import http.server
    import threading

    hits = []

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"canary page")

        def log_message(self, *args):
            pass

    page = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=page.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{page.server_address[1]}/secret"
    try:
        server.queue(openai_reply(tool_calls=[{"id": "call_f1", "name": "webfetch",
                                               "input": {"url": url, "format": "text"}}]),
                     openai_reply(text="Not fetched."))
        session = agent_session(tmp_path, project, server, "opencode")
        seen = recorder(session)
        asked = answer_every_request(session, "deny")
        await session.start()
        await session.run_turn("Fetch the page.")
        await session.close()
    finally:
        page.shutdown()
    assert [a.tool for a in asked] == ["WebFetch"] and hits == []
    assert first(seen, "ToolCallError", call_id="call_f1").code == "user_denied"
