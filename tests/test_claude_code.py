"""The real Claude Code CLI under Vigil (docs/architecture.md §11), without the screen: every call passes
Vigil's policy, what Claude Code decided by itself is marked as its decision, Vigil's deny rules
decide with no dialog, a crash costs one turn and nothing of the session, `--resume` goes on with
Claude Code's own session, and the headless stream-json run.

The model is the loopback Anthropic server; Claude Code is the pinned npm package (tests/agents).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests import cc_kit
from tests.cc_kit import cc_reply, cc_session, first, pid_alive, recorder, sse, tool, tool_results, wait_for
from tests.wire_server import Reply, anthropic_events
from tui_app.headless.replay import replay
from tui_app.runtime.log.catalog import list_sessions
from tui_app.runtime.log.eventlog import read_events
from tui_app.runtime.permissions.broker import ApprovalAnswer

ROOT = Path(__file__).parent.parent
# the fixtures, visible to this module's tests
claude, cc_home, project, server = cc_kit.claude, cc_kit.cc_home, cc_kit.project, cc_kit.server


def answer_every_request(session, decision: str = "allow", feedback: str | None = None) -> list:
    """The user, answering each dialog as it opens (through the broker, as the dialog does)."""
    asked = []

    def on_event(event):
        if event.type == "PermissionRequested":
            asked.append(event)
            session.broker.answer(event.request_id, ApprovalAnswer(decision, input_sha256=event.input_sha256,
                                                                   feedback=feedback))
    session.subscribe(on_event)
    return asked


async def test_every_call_passes_vigil_and_what_claude_code_decided_itself_is_marked_as_its_own(
        claude, project, server):
    notes = project / "notes.txt"
    server.queue(
        cc_reply(text="Reading it.", tool_calls=[tool("toolu_read", "Read", file_path=str(notes))]),
        cc_reply(text="Changing it.", tool_calls=[tool("toolu_edit", "Edit", file_path=str(notes),
                                                       old_string="hello", new_string="goodbye")]),
        cc_reply(text="Done: it says goodbye now."))
    session = cc_session(claude, project, interactive=True)
    seen = recorder(session)
    asked = answer_every_request(session)
    await session.start()
    turn = await session.run_turn("Make the note say goodbye.")
    await session.close()

    assert (turn.reason, turn.text, turn.steps) == ("completed", "Done: it says goodbye now.", 3)
    assert notes.read_text() == "goodbye world\n"
    # the Read: Claude Code allowed it by itself, and that is what the log says — no Vigil approval
    read = first(seen, "PermissionResolved", call_id="toolu_read")
    assert (read.decision, read.decided_by) == ("allow", "agent")
    assert read.reason.startswith("allowed by Claude Code")
    assert first(seen, "ToolCallResult", call_id="toolu_read").display.text == "hello world\n"
    # the Edit: asked in Vigil's dialog, with the diff Vigil computed against the file on disk
    assert [a.call_id for a in asked] == ["toolu_edit"]
    assert asked[0].preview_kind == "diff" and "-hello world\n+goodbye world" in asked[0].preview
    assert first(seen, "PermissionResolved", call_id="toolu_edit").decided_by == "user"
    edit = first(seen, "ToolCallResult", call_id="toolu_edit")
    assert edit.display.kind == "file_diff" and (edit.display.added, edit.display.removed) == (1, 1)
    # the same events the built-in agent emits, in the same order for each call
    for call_id in ("toolu_read", "toolu_edit"):
        kinds = [e.type for e in seen if e.call_id == call_id and e.type.startswith("ToolCall")]
        assert kinds == ["ToolCallRequested", "ToolCallStarted", "ToolCallResult"]
    assert [e.type for e in seen if e.type in ("ModelStepStarted", "ModelStepEnded")] == [
        "ModelStepStarted", "ModelStepEnded"] * 3
    started = first(seen, "SessionStarted")
    assert (started.provider, started.agent) == ("claude-code", "claude-code")
    connected = first(seen, "AgentConnected")
    assert connected.agent_session_id and connected.version == "2.1.332"
    # the model saw the Read's text and the Edit's success, each paired with its call
    assert tool_results(server.requests[1])["toolu_read"] == ("1\thello world\n2\t", False)
    assert "updated successfully" in tool_results(server.requests[2])["toolu_edit"][0]
    # the log is the session: nothing of it only in memory
    logged = [e.type for e in read_events(session.log_path).events]
    assert [e.type for e in seen if not e.ephemeral] == logged


async def test_a_vigil_deny_rule_decides_before_claude_code_with_no_dialog(claude, project, server):
    (project / ".vigil").mkdir()
    (project / ".vigil" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(rm *)"]}}))
    server.queue(
        cc_reply(tool_calls=[tool("toolu_rm", "Bash", command="rm -f notes.txt", description="clean up")]),
        cc_reply(text="I may not delete it."))
    session = cc_session(claude, project, interactive=True, permission_mode="bypassPermissions")
    seen = recorder(session)
    asked = answer_every_request(session)
    await session.start()
    turn = await session.run_turn("Delete the note.")
    await session.close()

    assert turn.reason == "completed" and asked == []
    assert (project / "notes.txt").exists()
    resolved = first(seen, "PermissionResolved", call_id="toolu_rm")
    assert (resolved.decision, resolved.decided_by, resolved.rule) == ("deny", "rule", "Bash(rm *)")
    error = first(seen, "ToolCallError", call_id="toolu_rm")
    assert (error.phase, error.code) == ("permission", "permission_denied")
    assert first(seen, "ToolCallStarted", call_id="toolu_rm") is None
    text, is_error = tool_results(server.requests[1])["toolu_rm"]
    assert is_error and "Bash(rm *)" in text


async def test_headless_asks_are_denied_with_vigils_words_and_nothing_runs(claude, project, server):
    """No client to ask (vigil -p): Claude Code's question is answered no, as Vigil's own are."""
    target = project / "new.txt"
    server.queue(cc_reply(tool_calls=[tool("toolu_w", "Write", file_path=str(target), content="x\n")]),
                 cc_reply(text="Could not write."))
    session = cc_session(claude, project)
    seen = recorder(session)
    await session.start()
    await session.run_turn("Write a file.")
    await session.close()
    assert not target.exists()
    assert first(seen, "ToolCallError", call_id="toolu_w").code == "no_permission_client"
    assert tool_results(server.requests[1])["toolu_w"] == ("No permission client configured", True)


async def test_when_claude_code_dies_the_turn_ends_with_its_stderr_and_the_next_turn_resumes_it(
        claude, project, server):
    server.queue(
        cc_reply(text="I will remember 42."),
        cc_reply(text="Writing it down.", tool_calls=[
            tool("toolu_w", "Write", file_path=str(project / "n.txt"), content="42\n")]),
        cc_reply(text="You said 42."))
    session = cc_session(claude, project, interactive=True)
    seen = recorder(session)
    await session.start()
    assert (await session.run_turn("Remember 42.")).reason == "completed"
    driver = session.agent
    pid = driver.proc.pid

    def kill_on_ask(event):
        if event.type == "PermissionRequested":
            os.killpg(pid, signal.SIGKILL)  # Claude Code and everything it started
    session.subscribe(kill_on_ask)
    turn = await session.run_turn("Write it down.")
    assert turn.reason == "error" and "Claude Code was killed by signal 9" in turn.error
    ended = [e for e in seen if e.type == "TurnEnded"][-1]
    assert ended.reason == "error" and "killed by signal 9" in ended.message
    assert first(seen, "Warning", code="agent_exited") is not None
    # the call it was asking about got its one result; the dialog closed by itself
    assert first(seen, "ToolCallError", call_id="toolu_w") is not None
    assert first(seen, "PermissionResolved", call_id="toolu_w").decision == "deny"
    assert not (project / "n.txt").exists()
    await wait_for(lambda: not pid_alive(pid), "the killed Claude Code to be gone")

    turn = await session.run_turn("What did I say?")
    await session.close()
    assert (turn.reason, turn.text) == ("completed", "You said 42."), turn.error
    assert driver.proc.pid != pid
    history = json.dumps(server.requests[-1].json["messages"])
    assert "I will remember 42." in history  # Claude Code resumed its own session
    logged = [e.reason for e in read_events(session.log_path).events if e.type == "TurnEnded"]
    assert logged == ["completed", "error", "completed"]


async def test_resume_goes_on_with_claude_codes_own_session_and_replay_shows_who_decided(claude, project, server):
    server.queue(cc_reply(text="Reading.", tool_calls=[tool("toolu_r", "Read", file_path=str(project / "notes.txt"))]),
                 cc_reply(text="The note says hello world."),
                 cc_reply(text="It said hello world."))
    first_session = cc_session(claude, project)
    await first_session.start()
    await first_session.run_turn("What does the note say?")
    await first_session.close()
    recorded = next(e for e in read_events(first_session.log_path).events if e.type == "AgentConnected")

    [listed] = list_sessions()
    assert (listed.id, listed.provider, listed.turns) == (first_session.id, "claude-code", 1)
    assert listed.model == recorded.model != ""  # the model Claude Code said it runs

    again = cc_session(claude, project, resume=first_session.id)
    assert again.agent.agent_session_id == recorded.agent_session_id
    await again.start()
    turn = await again.run_turn("And before?")
    await again.close()
    assert turn.text == "It said hello world."
    assert "The note says hello world." in json.dumps(server.requests[-1].json["messages"])

    import io
    out = io.StringIO()
    assert replay(first_session.id, "text", out=out) == 0
    text = out.getvalue()
    assert f"claude-code 2.1.332 · model {recorded.model} · its session {recorded.agent_session_id}" in text
    assert "→ Read" in text and "allowed by Claude Code" in text
    assert "> And before?" in text and "It said hello world." in text


def _vigil(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui_app", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)}, **kw)


def test_headless_stream_json_with_claude_code(claude, project, server):
    server.queue(
        cc_reply(text="Looking.", tool_calls=[tool("toolu_r", "Read", file_path=str(project / "notes.txt"))]),
        cc_reply(tool_calls=[tool("toolu_e", "Edit", file_path=str(project / "notes.txt"), old_string="hello",
                                  new_string="bye")]),
        cc_reply(text="I could not edit it."))
    done = _vigil(["-p", "Change the note.", "--agent", "claude-code", "--agent-command", str(claude),
                   "--output-format", "stream-json"], project)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["type"] == "system" and lines[0]["subtype"] == "init"
    assert lines[-1]["type"] == "result" and lines[-1]["subtype"] == "success"
    assert lines[-1]["result"] == "I could not edit it."
    assert [d["tool_use_id"] for d in lines[-1]["permission_denials"]] == ["toolu_e"]
    uses = [b for line in lines if line["type"] == "assistant" for b in line["message"]["content"]
            if b["type"] == "tool_use"]
    assert [(u["id"], u["name"]) for u in uses] == [("toolu_r", "Read"), ("toolu_e", "Edit")]
    results = {line["message"]["content"][0]["tool_use_id"]: line["message"]["content"][0]
               for line in lines if line["type"] == "user"}
    assert not results["toolu_r"].get("is_error") and "hello world" in results["toolu_r"]["content"]
    assert results["toolu_e"]["is_error"] is True
    assert (project / "notes.txt").read_text() == "hello world\n"


@pytest.mark.parametrize("case", ["missing", "too old", "broken"])
def test_a_claude_code_vigil_cannot_use_is_one_clear_line(case, tmp_path, cc_home):
    fake = tmp_path / "claude"
    if case == "too old":  # an old release is not installed here: a stand-in that only says its version
        fake.write_text("#!/bin/sh\necho '1.0.44 (Claude Code)'\n")
    elif case == "broken":
        fake.write_text("#!/bin/sh\necho 'Error: cannot find module' >&2\nexit 3\n")
    if case != "missing":
        fake.chmod(0o755)
    done = _vigil(["-p", "hi", "--agent", "claude-code", "--agent-command", str(fake)], tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    expected = {"missing": "Claude Code was not found at", "too old": "Claude Code 1.0.44 at",
                "broken": "--version failed (exit 3): Error: cannot find module"}[case]
    assert line.startswith("vigil: ") and expected in line


async def test_a_session_claude_code_no_longer_has_starts_afresh_and_says_so(claude, project, server):
    server.queue(cc_reply(text="Hello again."))
    session = cc_session(claude, project)
    session.agent.agent_session_id = "0b1e5a8e-0000-4000-8000-000000000000"  # never recorded by this HOME
    seen = recorder(session)
    await session.start()
    turn = await session.run_turn("Hello?")
    await session.close()
    assert (turn.reason, turn.text) == ("completed", "Hello again.")
    warning = first(seen, "Warning", code="agent_resume_failed")
    assert "0b1e5a8e-0000-4000-8000-000000000000" in warning.message
    assert first(seen, "AgentConnected").agent_session_id != "0b1e5a8e-0000-4000-8000-000000000000"


def _sleepers(seconds: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[:2] == [b"sleep", seconds.encode()] and pid_alive(int(name)):
                found.append(int(name))
    return found


async def test_refusals_failures_and_background_work_are_told_as_they_were_and_closing_ends_it_all(
        claude, project, server):
    seconds = str(300 + os.getpid() % 200)  # this test's own sleep, told apart from any other
    server.queue(
        cc_reply(tool_calls=[tool("toolu_bad", "Edit", file_path=str(project / "notes.txt"), old_string="absent",
                                  new_string="x")]),
        cc_reply(tool_calls=[tool("toolu_fail", "Bash", command="echo broken >&2; exit 3", description="fail")]),
        cc_reply(tool_calls=[tool("toolu_bg", "Bash", command=f"sleep {seconds}", description="wait",
                                  run_in_background=True)]),
        cc_reply(text="All done."))
    session = cc_session(claude, project, interactive=True)
    seen = recorder(session)
    answer_every_request(session)
    await session.start()
    turn = await session.run_turn("Try things.")
    # Claude Code refused the Edit by its own checks: nobody allowed it, it never started
    bad = first(seen, "ToolCallError", call_id="toolu_bad")
    assert (bad.phase, bad.code) == ("precondition", "precondition_failed")
    assert "String to replace not found" in bad.message
    assert [e.type for e in seen if e.call_id == "toolu_bad"] == ["ToolCallRequested", "ToolCallError"]
    # the failing command: its exit code, as a shell user looks for it
    failed = first(seen, "ToolCallError", call_id="toolu_fail")
    assert (failed.code, failed.display.exit_code) == ("execution_failed", 3)
    assert first(seen, "PermissionResolved", call_id="toolu_fail").decided_by == "user"
    assert turn.reason == "completed"
    running = await wait_for(lambda: _sleepers(seconds), "the background command to run")
    await session.close()  # what ctrl+q does: Claude Code and everything it started end
    await wait_for(lambda: not any(pid_alive(pid) for pid in running), "the background command to end")
    assert not session.agent.proc.alive


async def test_always_allow_saves_a_vigil_rule_that_answers_claude_codes_next_question(claude, project, server):
    command = "python3 -c 'print(6 + 36)'"
    server.queue(
        cc_reply(thinking="Compute it twice to be sure.", tool_calls=[tool("toolu_1", "Bash", command=command)]),
        cc_reply(tool_calls=[tool("toolu_2", "Bash", command=command)]),
        cc_reply(text="42, twice."))
    session = cc_session(claude, project, interactive=True)
    seen = recorder(session)
    asked = []

    def always(event):
        if event.type == "PermissionRequested":
            asked.append(event)
            session.broker.answer(event.request_id, ApprovalAnswer("allow", input_sha256=event.input_sha256,
                                                                   always=True))
    session.subscribe(always)
    await session.start()
    turn = await session.run_turn("What is 6 * 7?")
    await session.close()
    assert turn.text == "42, twice." and [a.call_id for a in asked] == ["toolu_1"]
    saved = first(seen, "PermissionResolved", call_id="toolu_1")
    assert (saved.decided_by, saved.saved_rules) == ("user", [f"Bash({command})"])
    local = json.loads((project / ".vigil" / "settings.local.json").read_text())
    assert local["permissions"]["allow"] == [f"Bash({command})"]
    again = first(seen, "PermissionResolved", call_id="toolu_2")
    assert (again.decided_by, again.rule) == ("rule", f"Bash({command})")
    assert [first(seen, "ToolCallResult", call_id=c).model_content for c in ("toolu_1", "toolu_2")] == ["42", "42"]
    thinking = first(seen, "AssistantThinking")
    assert thinking.raw["thinking"] == "Compute it twice to be sure."
    assert "".join(e.text for e in seen if e.type == "AssistantThinkingDelta") == "Compute it twice to be sure."


async def test_esc_while_claude_code_waits_for_an_answer_withdraws_the_question_and_the_next_turn_works(
        claude, project, server):
    server.queue(cc_reply(tool_calls=[tool("toolu_w", "Write", file_path=str(project / "x.txt"), content="x")]),
                 cc_reply(text="Here again."))
    session = cc_session(claude, project, interactive=True)
    seen = recorder(session)
    session.subscribe(lambda e: session.interrupt() if e.type == "PermissionRequested" else None)
    await session.start()
    turn = await session.run_turn("Write x.")
    assert turn.reason == "interrupted"
    resolved = first(seen, "PermissionResolved", call_id="toolu_w")
    assert (resolved.decision, resolved.decided_by) == ("deny", "turn")  # the dialog closed by itself
    assert first(seen, "ToolCallError", call_id="toolu_w").code in ("cancelled", "aborted_before_dispatch")
    assert not (project / "x.txt").exists()
    turn = await session.run_turn("Are you there?")
    await session.close()
    assert (turn.reason, turn.text) == ("completed", "Here again.")


async def test_each_hook_runs_once_claude_codes_by_claude_code_vigils_by_vigil(claude, project, server):
    log = project / "hooks.log"

    def settings(who: str) -> str:
        command = f"echo {who} >> {log}"
        return json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                                                                                     "command": command}]}]}})
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(settings("claude"))
    (project / ".vigil").mkdir()
    (project / ".vigil" / "settings.json").write_text(settings("vigil"))
    server.queue(cc_reply(tool_calls=[tool("toolu_b", "Bash", command="true", description="nothing")]),
                 cc_reply(text="Done."))
    session = cc_session(claude, project, interactive=True)
    answer_every_request(session)
    await session.start()
    turn = await session.run_turn("Do nothing.")
    await session.close()
    assert turn.reason == "completed"
    assert sorted(log.read_text().split()) == ["claude", "vigil"]


def test_settings_can_make_claude_code_the_agent_and_a_named_model_still_means_vigils_own(claude, project):
    from tui_app.assemble import SessionOptions, build_session
    from tui_app.cli import build_parser, wants_demo

    (project / ".vigil").mkdir()
    (project / ".vigil" / "settings.json").write_text(json.dumps({"agent": "claude-code",
                                                                   "agentCommand": str(claude)}))
    session = build_session(SessionOptions(cwd=str(project), persist=False))
    assert session.agent.name == "claude-code" and session.agent.command == str(claude)
    assert not wants_demo(build_parser().parse_args(["--cwd", str(project)]))  # not the demo: Claude Code
    scripted = build_session(SessionOptions(cwd=str(project), provider="scripted", persist=False))
    assert scripted.agent.name == "vigil"


async def test_responses_that_share_a_message_id_stay_separate_steps(claude, project, server):
    """A proxy in front of the API (or a test server) may give every response the same id. Each
    response is still its own step: its streamed text must not run on into the one before it."""
    def same_id(**kw):
        events = anthropic_events(**kw)
        events[0]["message"]["id"] = "msg_shared"
        return Reply(pieces=sse(events))

    notes = str(project / "notes.txt")
    server.queue(same_id(text="Reading it.", tool_calls=[tool("toolu_r", "Read", file_path=notes)]),
                 same_id(text="All read."))
    session = cc_session(claude, project, interactive=True)
    seen = recorder(session)
    await session.start()
    turn = await session.run_turn("Read the note.")
    await session.close()
    assert turn.reason == "completed"
    streamed: dict[int, str] = {}
    for event in seen:
        if event.type == "AssistantTextDelta":
            streamed[event.step] = streamed.get(event.step, "") + event.text
    assert sorted(streamed.values()) == ["All read.", "Reading it."]
    assert [e.type for e in seen if e.type in ("ModelStepStarted", "ModelStepEnded")] == [
        "ModelStepStarted", "ModelStepEnded"] * 2
