"""The real Gemini CLI (@google/gemini-cli, pinned in tests/agents) under Vigil over ACP (`--acp`),
offline against the loopback generateContent server: it asks before every edit and command in
its `default` mode, writes through Vigil's fs/write_text_file, and Vigil's plan mode puts it in
its own plan mode (it used to be moved back to default as soon as it connected).
"""

from __future__ import annotations

import json

from tests import acp_agents_kit
from tests.acp_agents_kit import agent_session, answer_every_request, call_story, headless, recorder, stream_lines
from tests.cc_kit import first
from tests.wire_gemini import function_responses, gemini_reply

# the fixtures, visible to this module's tests
home, project, server = acp_agents_kit.home, acp_agents_kit.project, acp_agents_kit.server

ASKED_AND_ALLOWED = ["ToolCallRequested", "PermissionRequested", "PermissionResolved:allow:user", "ToolCallStarted",
                     "ToolCallResult"]


def replace_call(notes):
    return [{"name": "replace", "args": {"file_path": str(notes), "old_string": "hello", "new_string": "goodbye",
                                         "instruction": "Say goodbye"}}]


def shell_call(command):
    return [{"name": "run_shell_command", "args": {"command": command, "description": "Make a file"}}]


def call_id_of(seen, tool):
    return first(seen, "ToolCallRequested", name=tool).call_id


async def test_an_edit_is_asked_with_vigils_diff_then_applied(tmp_path, project, server):
    notes = project / "notes.txt"
    server.queue(gemini_reply(text="Changing it.", calls=replace_call(notes)), gemini_reply(text="Goodbye."))
    session = agent_session(tmp_path, project, server, "gemini")
    seen = recorder(session)
    asked = answer_every_request(session, "allow")
    await session.start()
    turn = await session.run_turn("Make the note say goodbye.")
    await session.close()
    assert (turn.reason, turn.text) == ("completed", "Goodbye.")
    assert notes.read_text() == "goodbye world\n"
    assert call_story(seen, call_id_of(seen, "Edit")) == ASKED_AND_ALLOWED
    diff = asked[0].preview_display
    assert (diff.path, diff.old_text, diff.new_text) == (str(notes), "hello world\n", "goodbye world\n")
    assert "replace" in function_responses(server.requests[-1])


async def test_a_denied_edit_is_not_applied_and_the_model_hears_it(tmp_path, project, server):
    notes = project / "notes.txt"
    server.queue(gemini_reply(calls=replace_call(notes)), gemini_reply(text="I left it."))
    session = agent_session(tmp_path, project, server, "gemini")
    seen = recorder(session)
    answer_every_request(session, "deny")
    await session.start()
    turn = await session.run_turn("Make the note say goodbye.")
    await session.close()
    assert notes.read_text() == "hello world\n"
    call_id = call_id_of(seen, "Edit")
    assert call_story(seen, call_id)[:3] == ["ToolCallRequested", "PermissionRequested", "PermissionResolved:deny:user"]
    assert first(seen, "ToolCallError", call_id=call_id).code == "user_denied"
    heard = json.dumps(function_responses(server.requests[1])).lower()
    assert "cancel" in heard or "reject" in heard or "denied" in heard, heard
    assert turn.text == "I left it."  # Gemini goes on in the same turn, with the refusal in hand


async def test_a_command_is_asked_then_run_or_refused(tmp_path, project, server):
    made = project / "made.txt"
    server.queue(gemini_reply(calls=shell_call("echo hi > made.txt")), gemini_reply(text="Made it."))
    session = agent_session(tmp_path, project, server, "gemini")
    seen = recorder(session)
    asked = answer_every_request(session, "allow")
    await session.start()
    await session.run_turn("Make a file.")
    await session.close()
    assert made.read_text() == "hi\n"
    assert asked[0].tool == "Bash" and asked[0].input["command"] == "echo hi > made.txt"
    assert call_story(seen, call_id_of(seen, "Bash"))[:4] == ASKED_AND_ALLOWED[:4]


async def test_a_refused_command_does_not_run(tmp_path, project, server):
    made = project / "made.txt"
    server.queue(gemini_reply(calls=shell_call("echo hi > made.txt")), gemini_reply(text="Not made."))
    session = agent_session(tmp_path, project, server, "gemini")
    seen = recorder(session)
    answer_every_request(session, "deny")
    await session.start()
    await session.run_turn("Make a file.")
    await session.close()
    assert not made.exists()
    assert first(seen, "ToolCallError", call_id=call_id_of(seen, "Bash")).code == "user_denied"


async def test_plan_mode_stays_plan_and_nothing_runs(tmp_path, project, server):
    made = project / "made.txt"
    server.queue(gemini_reply(calls=shell_call("echo hi > made.txt")), gemini_reply(text="Only a plan."),
                 gemini_reply(text="Only a plan."))
    session = agent_session(tmp_path, project, server, "gemini", permission_mode="plan")
    seen = recorder(session)
    asked = answer_every_request(session, "allow")
    await session.start()
    await session.run_turn("Make a file.")
    await session.close()
    assert session.permission_mode == "plan"
    assert not [e for e in seen if e.type == "PermissionModeChanged"]  # Gemini's `default` did not move Vigil's
    assert [e.mode for e in seen if e.type == "AgentModeChanged"][-1] == "plan"
    assert not made.exists() and asked == []


def test_headless_stream_json_lists_the_denied_edit(tmp_path, project, server):
    notes = project / "notes.txt"
    server.queue(gemini_reply(text="Changing it.", calls=replace_call(notes)), gemini_reply(text="I could not."))
    done = headless(tmp_path, project, server, "gemini", "Change the note.")
    assert done.returncode == 0, done.stderr
    result = stream_lines(done)[-1]
    assert result["type"] == "result" and result["result"] == "I could not."
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Edit"]
    assert notes.read_text() == "hello world\n"


async def test_a_read_runs_unasked_and_its_row_says_gemini_decided(tmp_path, project, server):
    """Gemini CLI reads files by itself, without asking (nor Vigil's fs/read_text_file): Vigil
    shows the read, decided by Gemini CLI, and never claims it allowed it."""
    notes = project / "notes.txt"
    server.queue(gemini_reply(calls=[{"name": "read_file", "args": {"file_path": str(notes)}}]),
                 gemini_reply(text="It says hello."))
    session = agent_session(tmp_path, project, server, "gemini")
    seen = recorder(session)
    asked = answer_every_request(session, "deny")
    await session.start()
    turn = await session.run_turn("What does the note say?")
    await session.close()
    assert asked == [] and turn.text == "It says hello."
    call_id = call_id_of(seen, "Read")
    assert call_story(seen, call_id) == ["ToolCallRequested", "PermissionResolved:allow:agent", "ToolCallStarted",
                                         "ToolCallResult"]
    assert "hello world" in json.dumps(function_responses(server.requests[-1]))


async def test_a_fetch_is_asked_and_a_refused_one_reaches_nothing(tmp_path, project, server):
    """The network: Gemini CLI's web_fetch is asked about; refused, the loopback page is never requested."""
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
        server.queue(gemini_reply(calls=[{"name": "web_fetch", "args": {"prompt": f"Summarize {url}"}}]),
                     gemini_reply(text="Not fetched."), gemini_reply(text="Not fetched."))
        session = agent_session(tmp_path, project, server, "gemini")
        seen = recorder(session)
        asked = answer_every_request(session, "deny")
        await session.start()
        await session.run_turn("Fetch the page.")
        await session.close()
    finally:
        page.shutdown()
    assert hits == [] and [a.tool for a in asked] == ["WebFetch"]
    assert url in str(asked[0].input)  # the dialog shows what will be fetched, from the call's title
    assert first(seen, "ToolCallError", call_id=call_id_of(seen, "WebFetch")).code == "user_denied"
