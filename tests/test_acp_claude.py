"""The real Claude ACP adapter (@agentclientprotocol/claude-agent-acp, pinned in tests/agents) under
Vigil, with the real Claude Code CLI behind it (CLAUDE_CODE_EXECUTABLE) and the loopback Anthropic
server as its model: an Edit whose permission request carries a diff, approved and applied; a
rejected one not applied; a turn cancelled while the model is still answering.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import cc_kit
from tests.cc_kit import cc_reply, first, recorder, tool, tool_results
from tests.real_agents import claude_acp_adapter
from tests.wire_server import Reply, anthropic_events, sse
from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime.permissions.broker import ApprovalAnswer

ROOT = Path(__file__).parent.parent
# the fixtures, visible to this module's tests
claude, cc_home, project, server = cc_kit.claude, cc_kit.cc_home, cc_kit.project, cc_kit.server


@pytest.fixture
def adapter(server) -> Path:
    server.aside = title_reply
    return claude_acp_adapter()


def title_reply(request) -> Reply | None:
    """The adapter has Claude Code title each new session with a model call of its own, in the
    background (its order against the turn's requests varies): answered on the side."""
    if b"naming a coding session" in request.body:
        return cc_reply(text='{"title": "A test session"}')
    return None


def claude_acp_settings(tmp_path: Path, adapter: Path, claude: Path) -> Path:
    """The preset `claude`, pointed at the pinned adapter (run with node) and CLI."""
    settings = tmp_path / "acp-settings.json"
    settings.write_text(json.dumps({"agents": {"claude": {
        "command": "node", "args": [str(adapter)], "env": {"CLAUDE_CODE_EXECUTABLE": str(claude)}}}}))
    return settings


def acp_session(tmp_path: Path, adapter: Path, claude: Path, project: Path, **kw):
    options = SessionOptions(cwd=str(project), agent="claude", settings_file=str(claude_acp_settings(
        tmp_path, adapter, claude)), **kw)
    return build_session(options)


def answer_every_request(session, decision: str) -> list:
    asked = []

    def on_event(event):
        if event.type == "PermissionRequested":
            asked.append(event)
            session.broker.answer(event.request_id, ApprovalAnswer(decision, input_sha256=event.input_sha256))
    session.subscribe(on_event)
    return asked


async def test_an_edit_with_a_diff_approved_in_vigil_is_applied(tmp_path, adapter, claude, project, server):
    notes = project / "notes.txt"
    server.queue(
        cc_reply(text="Changing it.", tool_calls=[tool("toolu_edit", "Edit", file_path=str(notes),
                                                       old_string="hello", new_string="goodbye")]),
        cc_reply(text="The note says goodbye now."))
    session = acp_session(tmp_path, adapter, claude, project, interactive=True)
    seen = recorder(session)
    asked = answer_every_request(session, "allow")
    await session.start()
    turn = await session.run_turn("Make the note say goodbye.")
    await session.close()
    assert (turn.reason, turn.text) == ("completed", "The note says goodbye now.")
    assert notes.read_text() == "goodbye world\n"
    # started in a mode that asks: the adapter's own `auto` asks nothing
    assert [e.mode for e in seen if e.type == "AgentModeChanged"][-1] == "default"
    assert len(asked) == 1 and asked[0].tool == "Edit"
    diff = asked[0].preview_display  # Vigil's own diff: the whole line, from the file on disk
    assert (diff.path, diff.old_text, diff.new_text) == (str(notes), "hello world\n", "goodbye world\n")
    assert first(seen, "PermissionResolved", call_id="toolu_edit").decided_by == "user"
    done = first(seen, "ToolCallResult", call_id="toolu_edit")
    assert done.tool == "Edit" and done.display.kind == "file_diff" and done.display.new_text == "goodbye world\n"
    assert tool_results(server.requests[1])["toolu_edit"][1] is False


async def test_a_rejected_edit_is_not_applied_and_the_model_hears_it(tmp_path, adapter, claude, project, server):
    notes = project / "notes.txt"
    server.queue(
        cc_reply(tool_calls=[tool("toolu_edit", "Edit", file_path=str(notes), old_string="hello",
                                  new_string="goodbye")]),
        cc_reply(text="Understood, I left it."))
    session = acp_session(tmp_path, adapter, claude, project, interactive=True)
    seen = recorder(session)
    asked = answer_every_request(session, "deny")
    await session.start()
    turn = await session.run_turn("Make the note say goodbye.")
    await session.close()
    assert notes.read_text() == "hello world\n"
    assert len(asked) == 1 and turn.text == "Understood, I left it."
    error = first(seen, "ToolCallError", call_id="toolu_edit")
    assert error.code == "user_denied"
    text, is_error = tool_results(server.requests[1])["toolu_edit"]
    assert is_error and "refused" in text.lower()


async def test_cancel_mid_turn_stops_the_answer_and_the_next_turn_works(tmp_path, adapter, claude, project, server):
    slow = anthropic_events(text=["A long answer " * 20] * 40)
    slow[0]["message"]["id"] = "msg_vigil_test_slow"
    pieces = sse(slow, delay=0.25)
    server.queue(Reply(pieces=pieces), cc_reply(text="Fresh answer."))
    session = acp_session(tmp_path, adapter, claude, project, interactive=True)
    seen = recorder(session)
    await session.start()

    def on_event(event):
        if event.type == "AssistantTextDelta":
            session.interrupt()
    stop_listening = session.subscribe(on_event)
    turn = await session.run_turn("Tell me a long story.")
    stop_listening()
    assert turn.reason == "interrupted"
    # the model was still streaming: most of the answer never came
    told = "".join(e.text for e in seen if e.type == "AssistantTextDelta")
    assert 0 < len(told) < len("A long answer " * 20 * 40)
    again = await session.run_turn("Something short.")
    await session.close()
    assert (again.reason, again.text) == ("completed", "Fresh answer.")
    assert first(seen, "TurnEnded").reason == "interrupted"


def test_headless_stream_json_through_the_adapter_denies_the_edit_and_lists_it(
        tmp_path, adapter, claude, project, server):
    notes = project / "notes.txt"
    server.queue(
        cc_reply(text="Changing it.", tool_calls=[tool("toolu_e", "Edit", file_path=str(notes), old_string="hello",
                                                       new_string="bye")]),
        cc_reply(text="I could not edit it."))
    settings = claude_acp_settings(tmp_path, adapter, claude)
    done = subprocess.run([sys.executable, "-m", "tui_app", "-p", "Change the note.", "--agent", "claude",
                           "--settings", str(settings), "--output-format", "stream-json"], cwd=project,
                          capture_output=True, text=True, timeout=180, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    result = lines[-1]
    assert (result["type"], result["subtype"], result["result"]) == ("result", "success", "I could not edit it.")
    assert [(d["tool_name"], d["tool_use_id"]) for d in result["permission_denials"]] == [("Edit", "toolu_e")]
    assert notes.read_text() == "hello world\n"


async def test_an_agent_of_any_name_running_the_claude_adapter_gets_the_supervised_options(
        tmp_path, adapter, claude, project, server):
    """Named "mine", not "claude": the adapter says who it is in initialize, and Vigil sends it the
    supervised-session options all the same — it offers no bypassPermissions mode."""
    settings = tmp_path / "mine-settings.json"
    settings.write_text(json.dumps({"agents": {"mine": {
        "command": "node", "args": [str(adapter)], "env": {"CLAUDE_CODE_EXECUTABLE": str(claude)}}}}))
    session = build_session(SessionOptions(cwd=str(project), agent="mine", settings_file=str(settings),
                                           interactive=True))
    server.queue(cc_reply(text="Hello."))
    seen = recorder(session)
    await session.start()
    await session.run_turn("Hi.")
    await session.close()
    offered = {m.id for e in seen if e.type == "AgentModeChanged" for m in e.modes}
    assert "default" in offered and "bypassPermissions" not in offered
    assert first(seen, "AgentConnected").capabilities.runs_claude_hooks
