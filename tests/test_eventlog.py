"""The JSONL event log: every event round-trips, a torn tail is survivable, resume rebuilds the
same conversation the live session had."""

from __future__ import annotations

import errno
import json

import pytest

from tests.fakes import SAFE, UNSAFE, work_spec
from tui_app.agents.builtin_agent import BuiltinAgent
from tui_app.providers.scripted import Script, ScriptedModel
from tui_app.runtime import events as ev
from tui_app.runtime.display import BashOutputDisplay, DiffHunk, FileDiffDisplay, OutputSegment
from tui_app.runtime.log import eventlog
from tui_app.runtime.log.eventlog import EventLogWriter, read_events
from tui_app.runtime.messages import ImageBlock, TextBlock, ToolDefinition
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.session import Session

REF = ev.ArtifactRef(artifact_id="a1", uri="vigil-artifact://s/a1", path="/x/a1.txt", bytes=10, lines=2)
SAMPLES = [
    ev.SessionStarted(cwd="/p", provider="scripted", model="m", permission_mode="default"),
    ev.SettingsLoaded(files=["/p/.vigil/settings.json"], errors=[{"file": "x", "line": 3, "reason": "bad"}]),
    ev.ToolMenu(tools=[ToolDefinition(name="Read", description="d", input_schema={"type": "object"})]),
    ev.McpServerStatus(server="files", status="connected", tools=3),
    ev.Warning(code="hook_timeout", message="the hook timed out", detail={"command": "x.sh"}),
    ev.SessionEnded(reason="exit"),
    ev.PermissionModeChanged(mode="acceptEdits", previous="default"),
    ev.AgentConnected(agent="claude-code", version="2.1.332", agent_session_id="9b88", model="m", tools=["Bash"]),
    ev.AgentModeChanged(agent="gemini", mode="default", modes=[ev.AgentMode(id="default", name="Ask first")]),
    ev.AgentCommandsChanged(agent="gemini", commands=[ev.AgentCommand(name="init", description="d", hint="x")]),
    ev.AgentConnected(agent="vigil", label="Vigil", model="m", provider="anthropic",
                      capabilities=ev.AgentCapabilities(compact=True, set_model=True), client="tui"),
    ev.ModelChanged(model="claude-opus-4-6", previous="claude-sonnet-4-6", client="sdk"),
    ev.RulesChanged(behavior="allow", added=["Bash(npm test)"], destination="localSettings",
                    path="/p/.vigil/settings.local.json", client="tui"),
    ev.LocalCommandRan(command="cost", args="", output="Input tokens 10", client="cli"),
    ev.LocalCommandRan(command="help", output="/help isn't available in this environment.",
                       outcome="unavailable_headless"),
    ev.CompactionStarted(trigger="manual", instructions="keep the numbers"),
    ev.SandboxStatus(status="unavailable", reason="bubblewrap is not installed", network=False),
    ev.WorkingDirectoriesChanged(directories=["/p", "/lib"], added=["/lib"]),
    ev.TurnStarted(turn_id="turn-1", prompt="fix it"),
    ev.UserMessage(turn_id="turn-1", text="fix it"),
    ev.ModelStepStarted(step=1, model="m"),
    ev.AssistantTextDelta(step=1, index=0, text="He"),
    ev.AssistantThinkingDelta(step=1, index=0, text="h"),
    ev.AssistantText(step=1, index=0, text="Hello ✓"),
    ev.AssistantThinking(step=1, index=0, raw={"type": "thinking", "thinking": "hm", "signature": "s"}),
    ev.ModelRetry(attempt=1, max_attempts=5, status=429, reason="rate limited", wait_ms=2000),
    ev.ModelStepEnded(step=1, stop_reason="tool_use", usage={"input_tokens": 10, "output_tokens": 3}),
    ev.TurnEnded(turn_id="turn-1", reason="completed", steps=2),
    ev.ToolCallRequested(call_id="c1", step=1, index=1, name="Read", input={"file_path": "a"}),
    ev.ToolCallScheduled(call_id="c1", batch=1, group=0, groups=[["c1"]]),
    ev.PermissionRequested(call_id="c1", request_id="perm-1", tool="Edit", input={"file_path": "a"},
                           input_sha256="ab" * 32, summary="Edit a", preview_kind="diff", preview="-a\n+b",
                           preview_display=FileDiffDisplay(path="a", hunks=[DiffHunk(
                               old_start=1, old_lines=1, new_start=1, new_lines=1, lines=["-a", "+b"])])),
    ev.PermissionResolved(call_id="c1", request_id="perm-1", decision="allow", decided_by="user",
                          saved_rules=["Edit(a)"]),
    ev.HookRun(event="PreToolUse", command="check.sh", status="timeout", duration_ms=30000),
    ev.ToolCallStarted(call_id="c1", tool="Read", input={"file_path": "a"}, flags=SAFE, timeout_ms=30000),
    ev.ToolCallProgress(call_id="c1", kind="output", stream="stderr", text="warning\n"),
    ev.ToolCallResult(call_id="c1", tool="Bash", model_content=[TextBlock(text="x"), ImageBlock(
        media_type="image/png", data="iVBO")], display=BashOutputDisplay(
        command="ls", segments=[OutputSegment(stream="stdout", text="a\n")], exit_code=0), artifacts=[REF]),
    ev.ToolCallError(call_id="c2", tool="Edit", phase="precondition", code="stale_file_baseline",
                     message="changed", model_content="<tool_use_error>changed</tool_use_error>"),
    ev.ToolBatchComplete(batch=1, ok=1, failed=1),
    ev.ArtifactPersisted(call_id="c1", artifact=REF, tool="Bash"),
    ev.FileChangedExternally(path="/p/a.py"),
    ev.TodoUpdated(todos=[{"content": "x", "status": "pending", "activeForm": "Doing x"}]),
    ev.UserQuestionAsked(call_id="c3", request_id="perm-2", questions=[{
        "question": "Which database?", "header": "Database", "multiSelect": False,
        "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres", "description": "a server"}]}]),
    ev.UserQuestionAnswered(call_id="c3", request_id="perm-2", answers={"Which database?": "SQLite"}),
    ev.ConversationCompacted(summary="We fixed add().", boundary_seq=41, trigger="auto", tokens_before=9000,
                             tokens_after=300, usage={"input_tokens": 9000, "output_tokens": 300}),
    ev.MemoryLoaded(files=[{"path": "/p/CLAUDE.md", "scope": "project", "bytes": 12, "imported_from": None}],
                    problems=["/p/CLAUDE.md:3: @missing.md: no such file"]),
    ev.SubagentStarted(call_id="c4", agent_id="agent-1", description="find callers", subagent_type="Explore",
                       prompt="Find the callers of add()", tools=["Read", "Grep"]),
    ev.ToolCallRequested(call_id="agent-1_c1", agent_id="agent-1", step=2, index=0, name="Grep",
                         input={"pattern": "add("}),
    ev.SubagentEnded(call_id="c4", agent_id="agent-1", reason="completed", steps=2, calls=1, result="two callers",
                     transcript=REF),
    ev.PlanApprovalAsked(call_id="c5", request_id="plan-1", plan="# Plan\n1. fix add()"),
    ev.ProjectTrustAsked(project="/p", sha256="ab" * 32, items=[
        {"kind": "mcp", "name": "helper", "command": "npx helper", "source": "/p/.mcp.json"}]),
    ev.ProjectTrustAnswered(trusted=True, remembered=True, client="tui"),
]


def test_the_samples_cover_every_event_type():
    assert {type(e) for e in SAMPLES} == set(ev.event_types())


def test_an_event_of_the_sessions_own_agent_is_stored_without_an_agent_id():
    assert "agent_id" not in ev.UserMessage(text="hi").model_dump_json()
    assert '"agent_id":"agent-1"' in ev.UserMessage(text="hi", agent_id="agent-1").model_dump_json()


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.type)
def test_every_event_type_round_trips_through_jsonl(tmp_path, event):
    stamped = event.model_copy(update={"seq": 7, "session_id": "s1", "ts": 1234.5})
    writer = EventLogWriter(tmp_path / "events.jsonl")
    writer.write(stamped)
    writer.close()
    read = read_events(tmp_path / "events.jsonl")
    assert read.warnings == []
    assert read.events == [stamped]
    assert type(read.events[0]) is type(event)


def test_a_torn_last_line_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "events.jsonl"
    writer = EventLogWriter(path)
    for event in SAMPLES[:3]:
        writer.write(event)
    writer.close()
    whole = path.read_bytes()
    line = SAMPLES[3].model_dump_json().encode()
    path.write_bytes(whole + line[: len(line) // 2])  # the process died mid-write
    read = read_events(path)
    assert read.events == SAMPLES[:3]
    assert read.torn_tail and len(read.warnings) == 1 and "incomplete" in read.warnings[0]


def test_a_torn_tail_is_cut_off_before_anything_is_appended(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(SAMPLES[0].model_dump_json().encode() + b"\n" + b'{"type": "Turn')
    writer = EventLogWriter(path)
    assert writer.dropped_tail == len(b'{"type": "Turn')
    writer.write(SAMPLES[1])
    writer.close()
    read = read_events(path)
    assert read.events == [SAMPLES[0], SAMPLES[1]]
    assert read.warnings == [] and not read.torn_tail


def test_a_garbage_line_in_the_middle_is_skipped_not_fatal(tmp_path):
    path = tmp_path / "events.jsonl"
    lines = [SAMPLES[0].model_dump_json(), "not json at all", '{"type": "NoSuchEvent"}', SAMPLES[1].model_dump_json()]
    path.write_text("\n".join(lines) + "\n")
    read = read_events(path)
    assert read.events == [SAMPLES[0], SAMPLES[1]] and len(read.warnings) == 2
    assert ":2:" in read.warnings[0] and ":3:" in read.warnings[1]


def test_a_write_that_fails_midway_leaves_whole_lines_and_closes_the_log(tmp_path, monkeypatch):
    """A fault-injecting write: half a line lands, then the disk is full (the tmpfs version of this
    is in test_faults_disk.py)."""
    path = tmp_path / "events.jsonl"
    writer = EventLogWriter(path)
    writer.write(SAMPLES[0])
    real = eventlog._os_write
    calls = []

    def half_then_full(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real(fd, data[: len(data) // 2])
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)  # the reserve was given back: the note fits

    monkeypatch.setattr(eventlog, "_os_write", half_then_full)
    with pytest.raises(OSError):
        writer.write(SAMPLES[1])
    monkeypatch.setattr(eventlog, "_os_write", real)
    with pytest.raises(OSError):  # closed for good: no event after a hole
        writer.write(SAMPLES[2])
    writer.close()
    data = path.read_bytes()
    assert data.endswith(b"\n")
    read = read_events(path)
    assert not read.warnings
    assert read.events[0] == SAMPLES[0]
    note = read.events[-1]
    assert len(read.events) == 2 and note.type == "Warning" and note.code == "log_write_failed"
    assert "disk full" in note.message
    assert eventlog.read_incomplete(path) == "disk full"


SCRIPT = {"steps": [
    {"text": "Looking around.", "tool_calls": [
        {"id": "c1", "name": "Look", "input": {"label": "slow", "delay_ms": 30}},
        {"id": "c2", "name": "Look", "input": {"label": "fast"}},
        {"id": "c3", "name": "Change", "input": {"label": "edit"}},
        {"id": "c4", "name": "Ghost", "input": {}}]},
    {"text": "Now the second part.", "expect": ["did slow", "did fast"], "tool_calls": [
        {"id": "c5", "name": "Look", "input_json": "{not json"}]},
    {"text": "All done."},
]}


def make_session(tmp_path, script: dict) -> Session:
    registry = ToolRegistry()
    registry.register(work_spec("Look", SAFE))
    registry.register(work_spec("Change", UNSAFE))
    return Session(agent=BuiltinAgent(ScriptedModel(Script.model_validate(script))), cwd=str(tmp_path),
                   registry=registry,
                   log_path=tmp_path / "s" / "events.jsonl")


async def test_resume_rebuilds_the_live_conversation_from_the_log(tmp_path):
    live = make_session(tmp_path, SCRIPT)
    await live.start()
    result = await live.run_turn("Please look around.")
    assert result.reason == "completed", result.error
    live_messages = live.conversation.snapshot()
    await live.close()

    resumed = make_session(tmp_path, {"steps": []})
    resumed.id = live.id
    warnings = resumed.resume_from_log()
    assert warnings == []
    assert resumed.conversation.snapshot() == live_messages
    # the results were committed in model order, each paired with its call
    tool_results = [m for m in live_messages if m.role == "user" and m.content[0].type == "tool_result"]
    assert [b.tool_use_id for b in tool_results[0].content] == ["c1", "c2", "c3", "c4"]
    assert [b.is_error for b in tool_results[0].content] == [False, False, False, True]


async def test_resume_continues_the_log_and_the_conversation(tmp_path):
    first = make_session(tmp_path, SCRIPT)
    await first.start()
    await first.run_turn("Please look around.")
    await first.close()

    second = make_session(tmp_path, {"steps": [{"text": "I remember.", "expect": []}]})
    second.id = first.id
    second.resume_from_log()
    await second.start(resumed=True)
    await second.run_turn("Do you remember?")
    await second.close()
    events = read_events(tmp_path / "s" / "events.jsonl").events
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    prompts = [e.text for e in events if e.type == "UserMessage"]
    assert prompts == ["Please look around.", "Do you remember?"]
    request = second.agent.client.requests[0]
    assert request.messages[0].content[0].text == "Please look around."


async def test_a_session_cut_mid_turn_resumes_with_a_result_for_every_call(tmp_path):
    session = make_session(tmp_path, {"steps": [{"tool_calls": [
        {"id": "k1", "name": "Look", "input": {"delay_ms": 10}}]}, {"text": "ok"}]})
    await session.start()
    await session.run_turn("go")
    await session.close()
    # the process died right after the call started: cut the log there, mid-line
    path = tmp_path / "s" / "events.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "ToolCallStarted")
    path.write_text("".join(lines[: cut + 1]) + lines[cut + 1][:20])

    resumed = make_session(tmp_path, {"steps": []})
    resumed.id = session.id
    warnings = resumed.resume_from_log()
    assert len(warnings) == 1 and "incomplete" in warnings[0]
    messages = resumed.conversation.snapshot()
    assert messages[-2].content[0].id == "k1"
    result = messages[-1].content[0]
    assert result.tool_use_id == "k1" and result.is_error and "lost" in result.content
