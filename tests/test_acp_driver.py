"""ACP agents under Vigil (docs/architecture.md §11), without the screen, against the fixture agent of
tests/acp_fixture_agent.py (the official SDK's agent side, driven by a script)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.acp_kit import agent_log, first, fixture_session, fixture_settings, logged, recorder, wait_for
from tests.needs import need_program
from tui_app.assemble import SessionOptions, build_session
from tui_app.headless.export import transcript_markdown
from tui_app.headless.replay import replay
from tui_app.runtime.log.catalog import list_sessions
from tui_app.runtime.log.eventlog import read_events
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


async def test_a_write_nobody_approved_asks_and_a_refusal_leaves_the_file_and_tells_the_agent(tmp_path, project):
    notes = project / "notes.txt"
    script = {"turns": [[{"write": {"path": str(notes), "content": "overwritten\n"}, "as": "w"},
                         {"report": "w={w}"}]]}
    session, _ = fixture_session(tmp_path, project, script, interactive=True)
    seen = recorder(session)
    asked = answer_every_request(session, "deny")
    await session.start()
    turn = await session.run_turn("write it")
    await session.close()
    assert notes.read_text() == "hello world\n"
    assert turn.text.startswith("w=ERROR") and "denied" in turn.text
    assert [a.tool for a in asked] == ["Write"]
    assert asked[0].preview_display.old_text == "hello world\n"
    assert asked[0].preview_display.new_text == "overwritten\n"
    assert first(seen, "ToolCallError", call_id="write-1").code == "user_denied"


async def test_a_vigil_deny_rule_refuses_the_agents_edit_with_no_dialog(tmp_path, project):
    notes = project / "notes.txt"
    (project / ".vigil").mkdir()
    (project / ".vigil" / "settings.json").write_text('{"permissions": {"deny": ["Edit(notes.txt)"]}}')
    script = {"turns": [[
        {"ask": {"id": "c1", "title": "Edit notes.txt", "kind": "edit", "locations": [str(notes)],
                 "diffs": [{"path": str(notes), "old": "hello world\n", "new": "bye\n"}]}, "as": "answer"},
        {"update": {"id": "c1", "status": "failed", "text": "User refused permission to run tool"}},
        {"report": "answer={answer}"}]]}
    session, _ = fixture_session(tmp_path, project, script, interactive=True)
    seen = recorder(session)
    asked = answer_every_request(session)
    await session.start()
    turn = await session.run_turn("edit")
    await session.close()
    assert turn.text == "answer=reject" and asked == []
    resolved = first(seen, "PermissionResolved", call_id="c1")
    assert (resolved.decision, resolved.decided_by, resolved.rule) == ("deny", "rule", "Edit(notes.txt)")
    assert first(seen, "ToolCallError", call_id="c1").code == "permission_denied"


async def test_an_approved_command_runs_in_vigils_terminal_with_live_output_and_is_not_asked_twice(
        tmp_path, project):
    command = "echo out; echo err >&2; exit 3"
    script = {"turns": [[
        {"tool_call": {"id": "run", "title": command, "kind": "execute", "raw_input": {"command": command}}},
        {"ask": {"id": "run"}, "as": "answer", "if_allowed": [
            {"terminal": {"command": command}, "as": "t", "wait": True},
            {"update": {"id": "run", "status": "completed", "terminal": "t"}},
            {"release": "t"}]},
        {"report": "answer={answer} exit={t_exit} output={t_output!r}"}]]}
    session, log = fixture_session(tmp_path, project, script, interactive=True)
    seen = recorder(session)
    asked = answer_every_request(session)
    await session.start()
    turn = await session.run_turn("run it")
    await session.close()
    assert turn.text == "answer=allow-once exit=3 output='out\\nerr\\n'"
    assert [(a.tool, a.input["command"]) for a in asked] == [("Bash", command)]
    terminal = first(seen, "ToolCallError", call_id="terminal-1")  # exit 3: the row failed, with the output
    assert terminal.tool == "Bash" and terminal.display.exit_code == 3
    assert [e.text for e in seen if e.type == "ToolCallProgress" and e.call_id == "terminal-1"]
    assert first(seen, "PermissionResolved", call_id="terminal-1").decided_by == "user"
    agent_call = first(seen, "ToolCallResult", call_id="run")
    assert agent_call.display.kind == "bash_output" and agent_call.display.exit_code == 3
    assert logged(log, "exited") == [{"exited": "t", "exit_code": 3, "signal": None}]


async def test_a_command_with_variables_is_asked_about_with_them_and_a_kill_stops_its_group(tmp_path, project):
    script = {"turns": [[
        {"terminal": {"command": "sleep", "args": ["300"], "env": {"BASH_ENV": "/tmp/x"}, "limit": 10},
         "as": "t"},
        {"kill": "t"}, {"wait": "t"}, {"output": "t"}, {"release": "t"},
        {"report": "exit={t_exit}"}]]}
    session, _ = fixture_session(tmp_path, project, script, interactive=True)
    seen = recorder(session)
    asked = answer_every_request(session)
    await session.start()
    turn = await session.run_turn("run it")
    await session.close()
    assert turn.text == "exit=SIGTERM"
    assert len(asked) == 1 and "BASH_ENV=/tmp/x" in asked[0].preview and asked[0].input["env"] == {
        "BASH_ENV": "/tmp/x"}
    assert first(seen, "ToolCallError", call_id="terminal-1") or first(seen, "ToolCallResult", call_id="terminal-1")


async def test_esc_in_the_dialog_answers_cancelled_and_cancels_the_turn(tmp_path, project):
    notes = project / "notes.txt"
    script = {"turns": [[
        {"ask": {"id": "c1", "title": "Edit notes.txt", "kind": "edit",
                 "diffs": [{"path": str(notes), "old": "hello", "new": "bye"}]}, "as": "answer"},
        {"wait_cancel": True}],
        [{"say": "still here"}]]}
    session, log = fixture_session(tmp_path, project, script, interactive=True)
    seen = recorder(session)
    answer_every_request(session, "deny", escaped=True)
    await session.start()
    turn = await session.run_turn("edit")
    again = await session.run_turn("are you there?")
    await session.close()
    assert turn.reason == "interrupted" and again.text == "still here"
    assert logged(log, "asked") == [{"asked": "c1", "answer": "cancelled"}]
    assert logged(log, "cancel")
    assert first(seen, "ToolCallError", call_id="c1").code in ("user_denied", "cancelled")
    assert notes.read_text() == "hello world\n"


async def test_interrupting_the_turn_cancels_the_agent_and_its_open_call_gets_a_result(tmp_path, project):
    script = {"turns": [[
        {"tool_call": {"id": "c1", "title": "Search", "kind": "search", "status": "in_progress"}},
        {"wait_cancel": True}],
        [{"say": "next turn works"}]]}
    session, log = fixture_session(tmp_path, project, script)
    seen = recorder(session)
    await session.start()

    def on_event(event):  # the call is a row, but the agent has not yet said it runs unasked: still open
        if event.type == "ToolCallRequested":
            session.interrupt()
    session.subscribe(on_event)
    turn = await session.run_turn("search")
    again = await session.run_turn("again")
    await session.close()
    assert turn.reason == "interrupted" and logged(log, "cancel")
    assert first(seen, "ToolCallError", call_id="c1").code == "cancelled"
    assert again.text == "next turn works"


async def test_a_plan_is_a_todo_list_and_modes_and_commands_reach_the_session(tmp_path, project):
    script = {"modes": {"current": "default", "available": [{"id": "default", "name": "Ask"},
                                                            {"id": "acceptEdits", "name": "Accept edits"},
                                                            {"id": "yolo", "name": "YOLO"}]},
              "commands": [{"name": "init", "description": "Write AGENTS.md", "hint": "what to cover"}],
              "turns": [[{"plan": [{"content": "read", "status": "completed"},
                                   {"content": "fix", "status": "pending"}]},
                         {"mode": "acceptEdits"}, {"say": "ok"}]]}
    session, _ = fixture_session(tmp_path, project, script)
    seen = recorder(session)
    await session.start()
    await session.run_turn("plan")
    assert session.permission_mode == "acceptEdits"  # the agent's mode of that name moves Vigil's along
    assert await session.agent.select_mode("yolo")
    await session.close()
    plan = next(e for e in seen if e.type == "ToolCallResult" and e.tool == "TodoWrite")
    assert [(t.content, t.status) for t in plan.display.todos] == [("read", "completed"), ("fix", "pending")]
    assert [t["content"] for t in first(seen, "TodoUpdated").todos] == ["read", "fix"]  # the plan panel's
    assert [e.mode for e in seen if e.type == "AgentModeChanged"] == ["default", "acceptEdits", "yolo"]
    commands = first(seen, "AgentCommandsChanged")
    assert [(c.name, c.hint) for c in commands.commands] == [("init", "what to cover")]


async def test_an_agent_that_dies_ends_the_turn_with_its_stderr_and_the_next_turn_starts_it_again(tmp_path, project):
    script = {"turns": [[{"say": "about to go"}, {"exit": 7, "marker": str(tmp_path / "died")},
                         {"say": "back"}]]}
    session, log = fixture_session(tmp_path, project, script)
    seen = recorder(session)
    await session.start()
    turn = await session.run_turn("die")
    assert turn.reason == "error" and "exited with code 7" in turn.error and "exits on purpose" in turn.error
    again = await session.run_turn("are you back?")
    await session.close()
    assert again.reason == "completed" and again.text.endswith("back")
    assert first(seen, "Warning", code="agent_exited")
    assert len(logged(log, "new_session")) == 2


async def test_reads_pass_vigils_rules_a_denied_one_is_a_row_and_the_agent_hears_why(tmp_path, project):
    secret = project / "secret.env"
    secret.write_text("TOKEN=1\n")
    (project / ".vigil").mkdir()
    (project / ".vigil" / "settings.json").write_text('{"permissions": {"deny": ["Read(secret.env)"]}}')
    script = {"turns": [[
        {"read": {"path": str(project / "notes.txt")}, "as": "notes"},
        {"read": {"path": str(secret)}, "as": "secret"},
        {"report": "notes={notes!r} secret={secret}"}]]}
    session, _ = fixture_session(tmp_path, project, script)
    seen = recorder(session)
    await session.start()
    turn = await session.run_turn("read")
    await session.close()
    assert turn.text.startswith("notes='hello world\\n' secret=ERROR")
    assert "TOKEN" not in turn.text
    assert not first(seen, "ToolCallRequested", name="Read", input={"file_path": str(project / "notes.txt")})
    assert first(seen, "ToolCallError", call_id="read-1").code == "permission_denied"


async def test_a_file_changed_since_the_agent_read_it_is_not_overwritten(tmp_path, project):
    notes = project / "notes.txt"
    script = {"turns": [[
        {"read": {"path": str(notes)}, "as": "r"},
        {"sleep": 0.3},
        {"write": {"path": str(notes), "content": "agent's version\n"}, "as": "w"},
        {"report": "w={w}"}]]}
    session, _ = fixture_session(tmp_path, project, script, interactive=True)
    seen = recorder(session)
    answer_every_request(session)
    await session.start()
    turn = asyncio.ensure_future(session.run_turn("edit"))
    # the agent read it through Vigil (a baseline); then the user changes it
    await wait_for(lambda: session.services["file_state"].baseline(str(notes)) is not None, "the agent's read")
    notes.write_text("the user's edit\n")
    result = await turn
    await session.close()
    assert notes.read_text() == "the user's edit\n"
    assert result.text.startswith("w=ERROR")
    assert first(seen, "ToolCallError", call_id="write-1").code == "stale_file_baseline"


ROOT = Path(__file__).parent.parent


def _vigil(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui_app", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_headless_stream_json_denies_the_agents_asks_and_lists_them(tmp_path, project):
    notes = project / "notes.txt"
    script = {"turns": [[
        {"say": "Editing."},
        {"ask": {"id": "c1", "title": "Edit notes.txt", "kind": "edit",
                 "raw_input": {"file_path": str(notes), "old_string": "hello", "new_string": "bye"},
                 "diffs": [{"path": str(notes), "old": "hello", "new": "bye"}]}, "as": "a"},
        {"update": {"id": "c1", "status": "failed", "text": "User refused permission to run tool"}},
        {"write": {"path": str(notes), "content": "written anyway\n"}, "as": "w"},
        {"report": "answer={a} write={w}"}]]}
    settings, log = fixture_settings(tmp_path, script)
    done = _vigil(["-p", "Change the note.", "--agent", "fixture", "--settings", str(settings),
                   "--output-format", "stream-json"], project)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["type"] == "system" and lines[0]["subtype"] == "init"
    result = lines[-1]
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["result"].startswith("answer=reject write=ERROR")
    assert [(d["tool_name"], d["tool_use_id"]) for d in result["permission_denials"]] == [
        ("Edit", "c1"), ("Write", "write-1")]
    uses = [b for line in lines if line["type"] == "assistant" for b in line["message"]["content"]
            if b["type"] == "tool_use"]
    assert [(u["id"], u["name"]) for u in uses] == [("c1", "Edit"), ("write-1", "Write")]
    assert notes.read_text() == "hello world\n"
    assert logged(log, "asked") == [{"asked": "c1", "answer": "reject"}]


async def test_a_resumed_session_loads_the_agents_own_and_replay_and_export_show_it(tmp_path, project):
    script = {"load": True, "turns": [[{"say": "First answer."}], [{"say": "Second answer."}]]}
    session, log = fixture_session(tmp_path, project, script)
    await session.start()
    await session.run_turn("first")
    await session.close()
    settings = tmp_path / "fixture-settings.json"
    again = build_session(SessionOptions(cwd=str(project), resume=session.id, settings_file=str(settings),
                                         no_claude_settings=True))
    seen = recorder(again)
    await again.start()
    await again.run_turn("second")
    await again.close()
    assert logged(log, "load_session") == [{"load_session": {"cwd": str(project), "session_id": "fixture-session-1"}}]
    # what the agent replays while loading is already in Vigil's log: it is not told twice
    assert not [e for e in seen if e.type == "AssistantText" and e.text == "an old answer"]
    out = io.StringIO()
    assert replay(session.id, "text", out=out) == 0
    text = out.getvalue()
    assert "First answer." in text and "Second answer." in text
    listed = next(s for s in list_sessions() if s.id == session.id)
    assert (listed.provider, listed.turns) == ("fixture", 2)
    markdown = transcript_markdown(read_events(again.log_path).events)
    assert "First answer." in markdown and "Second answer." in markdown


async def test_the_sdks_complaints_about_a_stray_line_go_to_a_file_not_the_terminal(tmp_path, project, capfd):
    script = {"turns": [[{"stdout": "DEBUG: not a protocol line"}, {"say": "fine"}]]}
    session, _ = fixture_session(tmp_path, project, script)
    await session.start()
    turn = await session.run_turn("hi")
    await session.close()
    assert turn.text == "fine"
    from tui_app.runtime.log.paths import session_dir

    log = session_dir(session.id) / "acp-sdk.log"
    assert "Error parsing JSON-RPC message" in log.read_text()
    assert "JSON-RPC" not in capfd.readouterr().err


async def test_a_write_still_waiting_for_the_user_when_the_turn_is_cancelled_gets_its_result(tmp_path, project):
    notes = project / "notes.txt"
    script = {"turns": [[{"write": {"path": str(notes), "content": "x\n"}, "as": "w"}, {"wait_cancel": True}]]}
    session, log = fixture_session(tmp_path, project, script, interactive=True)
    seen = recorder(session)

    def on_event(event):
        if event.type == "PermissionRequested":
            session.interrupt()  # Esc while the dialog is open
    session.subscribe(on_event)
    await session.start()
    turn = await session.run_turn("write")
    await session.close()
    assert turn.reason == "interrupted" and notes.read_text() == "hello world\n"
    assert first(seen, "ToolCallError", call_id="write-1").code == "cancelled"
    assert logged(log, "write")[0]["got"].startswith("ERROR")


async def test_the_users_feedback_on_a_denied_call_goes_with_the_next_prompt(tmp_path, project):
    notes = project / "notes.txt"
    script = {"turns": [[{"ask": {"id": "c1", "title": "Edit notes.txt", "kind": "edit",
                                  "diffs": [{"path": str(notes), "old": "hello", "new": "bye"}]}}],
                        [{"say": "ok"}]]}
    session, log = fixture_session(tmp_path, project, script, interactive=True)

    def on_event(event):
        if event.type == "PermissionRequested":
            session.broker.answer(event.request_id, ApprovalAnswer("deny", input_sha256=event.input_sha256,
                                                                   feedback="keep hello, add a line instead"))
    session.subscribe(on_event)
    await session.start()
    await session.run_turn("edit")
    await session.run_turn("go on")
    await session.close()
    prompts = logged(log, "prompt")
    assert prompts[1]["prompt"][0] == "go on"
    assert "said: keep hello, add a line instead" in prompts[1]["prompt"][1]


async def test_model_picks_the_agents_model_option_and_the_header_gets_its_name(tmp_path, project):
    script = {"models": [{"value": "default", "name": "Default"}, {"value": "fast", "name": "Fast model"}],
              "turns": [[{"say": "ok"}]]}
    session, log = fixture_session(tmp_path, project, script, model="fast")
    seen = recorder(session)
    await session.start()
    await session.close()
    assert logged(log, "set_config_option") == [{"set_config_option": {"model": "fast"}}]
    assert first(seen, "AgentConnected").model == "Fast model"
    unknown, _ = fixture_session(tmp_path, project, script, model="huge")
    said = recorder(unknown)
    await unknown.start()
    await unknown.close()
    warning = first(said, "Warning", code="agent_model_unknown")
    assert "offers no model 'huge' (it offers default, fast)" in warning.message


async def test_an_agent_that_cannot_start_is_one_line_and_each_turn_tries_again(tmp_path, project):
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"agents": {"ghost": {"command": str(tmp_path / "no-such-agent")}}}))
    session = build_session(SessionOptions(cwd=str(project), agent="ghost", settings_file=str(settings),
                                           no_claude_settings=True))
    seen = recorder(session)
    await session.start()
    turn = await session.run_turn("hi")
    await session.close()
    said = first(seen, "Warning", code="agent_start_failed").message
    assert said.startswith("could not start ghost") and "No such file" in said
    assert turn.reason == "error" and turn.error.startswith("could not start ghost")


def test_an_unknown_agent_on_the_command_line_is_one_line_and_exit_2(tmp_path, project):
    done = _vigil(["-p", "hi", "--agent", "nobody", "--no-claude-settings"], project)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("vigil: unknown agent 'nobody' (known: vigil, claude-code") and \
        done.stderr.count("\n") == 1


async def test_a_terminal_runs_in_vigils_sandbox_like_vigils_own_bash(tmp_path, project):
    need_program("bwrap")
    outside = tmp_path / "outside.txt"
    script = {"turns": [[
        {"terminal": {"command": f"touch {outside}; echo written=$?"}, "as": "t", "wait": True, "release": True},
        {"report": "{t_output}"}]]}
    session, _ = fixture_session(tmp_path, project, script, interactive=True)
    seen = recorder(session)
    answer_every_request(session)
    await session.start()
    turn = await session.run_turn("try")
    await session.close()
    assert first(seen, "ToolCallStarted", call_id="terminal-1").sandboxed is True
    assert not outside.exists() and "written=1" in turn.text  # outside the working directories: read-only


async def test_a_read_outside_the_working_directories_asks_and_headless_that_is_a_no(tmp_path, project):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not the project's\n")
    script = {"turns": [[{"read": {"path": str(elsewhere)}, "as": "r"}, {"report": "r={r}"}]]}
    session, _ = fixture_session(tmp_path, project, script)  # headless: nobody to ask
    seen = recorder(session)
    await session.start()
    turn = await session.run_turn("read")
    await session.close()
    assert turn.text.startswith("r=ERROR") and "not the project's" not in turn.text
    assert first(seen, "ToolCallRequested", call_id="read-1").name == "Read"
    assert first(seen, "ToolCallError", call_id="read-1").code == "no_permission_client"
