"""ACP agents under Vigil (DESIGN §11), without the screen, against the fixture agent of
tests/acp_fixture_agent.py (the official SDK's agent side, driven by a script)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp_kit import agent_log, first, fixture_session, logged, recorder
from tui_app.runtime.permissions.broker import ApprovalAnswer


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vigil-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path, home) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "notes.txt").write_text("hello world\n")
    return path


def answer_every_request(session, decision: str = "allow", escaped: bool = False) -> list:
    asked = []

    def on_event(event):
        if event.type == "PermissionRequested":
            asked.append(event)
            session.broker.answer(event.request_id, ApprovalAnswer(decision, input_sha256=event.input_sha256,
                                                                   escaped=escaped))
    session.subscribe(on_event)
    return asked


async def test_text_and_thoughts_stream_into_one_step_and_the_turn_ends_with_the_agents_usage(tmp_path, project):
    script = {"modes": {"current": "auto", "available": [{"id": "auto", "name": "Auto"},
                                                         {"id": "default", "name": "Ask first"}]},
              "turns": [[{"think": "pondering"}, {"say": "Hello from the fixture agent.", "message_id": "m1"}]]}
    session, log = fixture_session(tmp_path, project, script)
    seen = recorder(session)
    await session.start()
    turn = await session.run_turn("hi")
    await session.close()
    assert (turn.reason, turn.text) == ("completed", "Hello from the fixture agent.")
    assert first(seen, "AssistantText").text == "Hello from the fixture agent."
    assert first(seen, "AssistantThinking").raw["thinking"] == "pondering"
    assert [e.mode for e in seen if e.type == "AgentModeChanged"] == ["auto", "default"]
    assert logged(log, "set_mode") == [{"set_mode": "default"}]
    assert first(seen, "AgentConnected").version == "1.2.3"
    assert agent_log(log)[0]["initialize"] == {"fs_read": True, "fs_write": True, "terminal": True, "client": "vigil"}


async def test_a_multi_file_edit_is_one_dialog_with_vigils_own_diffs_and_the_approved_writes_need_no_second(
        tmp_path, project):
    notes, other = project / "notes.txt", project / "other.py"
    other.write_text("a = 1\nb = 2\n")
    script = {"turns": [[
        {"tool_call": {"id": "c1", "title": "Edit two files", "status": "pending"}},
        # the diff comes in an update, with no kind; the request later carries neither
        {"update": {"id": "c1", "diffs": [{"path": str(notes), "old": "hello", "new": "goodbye"},
                                          {"path": str(other), "old": "a = 1\nb = 2\n", "new": "a = 1\nb = 3\n"}]}},
        {"ask": {"id": "c1", "kind": "edit", "locations": [str(notes), str(other)]}, "as": "answer",
         "if_allowed": [
             {"write": {"path": str(notes), "content": "goodbye world\n"}, "as": "w1"},
             {"write": {"path": str(other), "content": "a = 1\nb = 3\n"}, "as": "w2"},
             {"update": {"id": "c1", "status": "completed"}}]},
        {"report": "answer={answer} w1={w1} w2={w2}"}]]}
    session, _ = fixture_session(tmp_path, project, script, interactive=True)
    seen = recorder(session)
    asked = answer_every_request(session)
    await session.start()
    turn = await session.run_turn("edit both")
    await session.close()
    assert turn.text == "answer=allow-once w1=ok w2=ok"
    # one dialog for both files, each diffed by Vigil against the disk (the fragment applied in place)
    assert len(asked) == 1 and asked[0].tool == "Edit"
    preview = asked[0].preview_display
    assert preview.kind == "file_diffs"
    assert [(f.path, f.old_text, f.new_text) for f in preview.files] == [
        (str(notes), "hello world\n", "goodbye world\n"), (str(other), "a = 1\nb = 2\n", "a = 1\nb = 3\n")]
    assert notes.read_text() == "goodbye world\n" and other.read_text() == "a = 1\nb = 3\n"
    # the writes carry out exactly what was approved: rows of their own, not asked again
    writes = [e for e in seen if e.type == "ToolCallResult" and e.call_id.startswith("write-")]
    assert [(w.tool, w.display.path) for w in writes] == [("Write", str(notes)), ("Write", str(other))]
    resolved = {e.call_id: e for e in seen if e.type == "PermissionResolved"}
    assert resolved["write-1"].decided_by == "user" and "approved in the agent's" in resolved["write-1"].reason
    assert (resolved["c1"].decision, resolved["c1"].decided_by) == ("allow", "user")
    # the agent's call shows what happened to both files
    done = first(seen, "ToolCallResult", call_id="c1")
    assert done.display.kind == "file_diffs" and [f.path for f in done.display.files] == [str(notes), str(other)]
