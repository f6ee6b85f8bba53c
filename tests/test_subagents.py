"""Subagents through the scripted model: the Agent tool runs a subagent's own steps (the script's
"agents" map), several at once, each call through the session's pipeline, tagged with its id."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.builtin_kit import Workspace, of, run
from tests.builtin_kit import workspace as private_workspace
from tui_app.runtime.log.conversation import rebuild_conversation
from tui_app.runtime.log.eventlog import read_events

workspace = private_workspace  # the fixture, visible to this module's tests

CALC = "def add(a, b):\n    return a + b\n\n\ndef double(x):\n    return add(x, x)\n"


def agent_call(call_id: str, description: str, prompt: str, kind: str = "Explore") -> dict:
    return {"id": call_id, "name": "Agent", "input": {"description": description, "prompt": prompt,
                                                       "subagent_type": kind}}


TWO_EXPLORERS = {
    "steps": [
        {"text": "Two questions at once.", "tool_calls": [
            agent_call("toolu_a", "find callers", "Find the callers of add()."),
            agent_call("toolu_b", "read config", "What does config.toml set?")]},
        {"expect": ["add() is called by double", "debug = true"], "text": "Both answered."},
    ],
    "agents": {
        "find callers": [
            {"text": "Searching.", "tool_calls": [{"id": "toolu_s01_01", "name": "Grep",
                                                   "input": {"pattern": "add\\(", "output_mode": "content"}}]},
            {"expect": ["calc.py"], "text": "add() is called by double in calc.py:6."}],
        "read config": [
            {"tool_calls": [{"id": "toolu_s01_01", "name": "Read", "input": {"file_path": "config.toml"}}]},
            {"expect": ["debug"], "text": "It sets debug = true."}],
    },
}


async def test_two_subagents_run_at_once_and_the_caller_gets_their_answers(workspace: Workspace):
    workspace.write("calc.py", CALC)
    workspace.write("config.toml", "debug = true\n")
    session = workspace.session(TWO_EXPLORERS["steps"], script_extra={"agents": TWO_EXPLORERS["agents"]})
    turn, events = await run(session, "Who calls add, and what is in the config?")
    assert turn.reason == "completed" and turn.text == "Both answered."
    started, ended = of(events, "SubagentStarted"), of(events, "SubagentEnded")
    assert [(s.call_id, s.description, s.subagent_type) for s in started] == [
        ("toolu_a", "find callers", "Explore"), ("toolu_b", "read config", "Explore")]
    # both were running before either finished: they ran at the same time, not one after the other
    first_end = min(events.index(e) for e in ended)
    assert all(events.index(s) < first_end for s in started)
    agents = {s.call_id: s.agent_id for s in started}
    assert len(set(agents.values())) == 2
    # their calls went through the pipeline, tagged, with ids of their own (both scripts said toolu_s01_01)
    inner = [e for e in of(events, "ToolCallRequested") if e.agent_id is not None]
    assert sorted((e.agent_id, e.name) for e in inner) == sorted([(agents["toolu_a"], "Grep"),
                                                                 (agents["toolu_b"], "Read")])
    assert all(e.call_id.startswith(f"{e.agent_id}_") for e in inner)
    assert {e.call_id for e in of(events, "ToolCallStarted")} >= {e.call_id for e in inner}
    # the caller's results: each subagent's final answer, and where its whole transcript is
    results = {e.call_id: e for e in of(events, "ToolCallResult") if e.agent_id is None}
    assert results["toolu_a"].model_content.startswith("add() is called by double in calc.py:6.")
    assert results["toolu_b"].model_content.startswith("It sets debug = true.")
    transcripts = {e.call_id: e.artifact for e in of(events, "ArtifactPersisted") if e.tool == "Agent"}
    assert transcripts["toolu_a"].path in results["toolu_a"].model_content
    kept = Path(transcripts["toolu_a"].path).read_text()
    assert "--- tool call" in kept and "Grep" in kept and "return add(x, x)" in kept
    assert [e.reason for e in ended] == ["completed", "completed"] and all(e.transcript for e in ended)
    # the caller's conversation has the two Agent calls and their answers, nothing of the subagents'
    live = session.conversation.snapshot()
    used = [b.name for m in live for b in m.content if b.type == "tool_use"]
    assert used == ["Agent", "Agent"]
    # and a resumed session rebuilds exactly that conversation from the log
    assert rebuild_conversation(read_events(session.log_path).events) == live


async def test_an_explore_subagent_cannot_change_anything(workspace: Workspace):
    workspace.write("notes.txt", "keep me\n")
    steps = [{"tool_calls": [agent_call("toolu_x", "try to write", "Delete notes.txt")]}, {"text": "ok"}]
    agents = {"try to write": [
        {"tool_calls": [{"id": "w", "name": "Write", "input": {"file_path": "notes.txt", "content": "gone"}},
                        {"id": "b", "name": "Bash", "input": {"command": "rm notes.txt"}},
                        {"id": "l", "name": "Bash", "input": {"command": "ls"}}]},
        {"text": "I could not."}]}
    session = workspace.session(steps, script_extra={"agents": agents}, permission_mode="bypassPermissions")
    turn, events = await run(session)
    assert turn.reason == "completed"
    [started] = of(events, "SubagentStarted")
    assert "Write" not in started.tools and "Agent" not in started.tools and "Bash" in started.tools
    outcomes = {e.call_id.split("_", 1)[1]: e for e in events
                if e.type in ("ToolCallResult", "ToolCallError") and e.agent_id == started.agent_id}
    assert (outcomes["w"].phase, outcomes["w"].code) == ("lookup", "unknown_tool")
    assert outcomes["b"].code == "permission_denied" and "read-only" in outcomes["b"].message
    assert outcomes["l"].type == "ToolCallResult"
    assert (workspace.project / "notes.txt").read_text() == "keep me\n"


async def test_a_custom_subagent_from_the_project_with_its_tools_and_prompt(workspace: Workspace):
    workspace.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews code for bugs\n"
                                                  "tools: Read, Grep\nmodel: inherit\n---\nYou review code. "
                                                  "Report bugs with their lines.\n")
    workspace.write("calc.py", CALC)
    steps = [{"tool_calls": [agent_call("toolu_r", "review calc", "Review calc.py", "reviewer")]},
             {"expect": ["no bugs"], "text": "Reviewed."}]
    agents = {"review calc": [{"tool_calls": [{"name": "Read", "input": {"file_path": "calc.py"}}]},
                              {"text": "I found no bugs."}]}
    session = workspace.session(steps, script_extra={"agents": agents})
    menu = next(t.description for t in session.registry.model_tools() if t.name == "Agent")
    assert "- reviewer: Reviews code for bugs (tools: Read, Grep)" in menu and "- Explore:" in menu
    runner = session.services["subagents"]
    host, unknown = runner.host_for(runner.types.get("reviewer"), "review calc", "agent-9")
    assert unknown == [] and [t.name for t in host.tool_menu] == ["Read", "Grep"]
    assert host.system_prompt.startswith("You review code. Report bugs with their lines.")
    assert f"Working directory: {workspace.project}" in host.system_prompt
    turn, events = await run(session)
    assert turn.reason == "completed"
    [started] = of(events, "SubagentStarted")
    assert (started.subagent_type, started.tools) == ("reviewer", ["Read", "Grep"])


async def test_an_unknown_subagent_type_is_an_error_the_model_can_correct(workspace: Workspace):
    steps = [{"tool_calls": [agent_call("toolu_u", "do it", "x", "wizard")]}, {"text": "ok"}]
    _, events = await run(workspace.session(steps))
    [error] = of(events, "ToolCallError", call_id="toolu_u")
    assert error.phase == "precondition" and "no subagent type 'wizard'" in error.message
    assert "general-purpose" in error.message and not of(events, "SubagentStarted")


async def test_a_subagents_call_asks_the_user_and_the_request_names_the_subagent(workspace: Workspace):
    steps = [{"tool_calls": [agent_call("toolu_g", "write a note", "Write note.txt", "general-purpose")]},
             {"text": "ok"}]
    agents = {"write a note": [{"tool_calls": [{"id": "w", "name": "Write",
                                                "input": {"file_path": "note.txt", "content": "hi\n"}}]},
                               {"text": "Written."}]}
    session = workspace.session(steps, script_extra={"agents": agents}, interactive=True)
    asked: list = []

    def answer(event) -> None:
        if event.type == "PermissionRequested":
            asked.append(event)
            from tui_app.runtime.permissions.broker import ApprovalAnswer

            asyncio.get_running_loop().call_soon(
                session.broker.answer, event.request_id, ApprovalAnswer("allow", input_sha256=event.input_sha256))

    session.subscribe(answer)
    turn, events = await run(session)
    assert turn.reason == "completed"
    [request] = asked
    [started] = of(events, "SubagentStarted")
    assert request.agent_id == started.agent_id and request.tool == "Write"
    assert (workspace.project / "note.txt").read_text() == "hi\n"


async def test_an_interrupt_stops_every_running_subagent_and_every_call_gets_its_result(workspace: Workspace):
    steps = [{"tool_calls": [agent_call("toolu_1", "wait one", "sleep", "general-purpose"),
                             agent_call("toolu_2", "wait two", "sleep", "general-purpose")]},
             {"text": "never"}]
    sleeper = [{"tool_calls": [{"name": "Bash", "input": {"command": "sleep 30"}}]}, {"text": "woke"}]
    session = workspace.session(steps, script_extra={"agents": {"wait one": sleeper, "wait two": sleeper}},
                                allowed_tools=["Bash(sleep *)"], permission_mode="default")
    running: list = []

    def watch(event) -> None:
        if event.type == "ToolCallStarted" and event.agent_id is not None:
            running.append(event)
            if len(running) == 2:
                session.interrupt()

    session.subscribe(watch)
    turn, events = await asyncio.wait_for(run(session), 60)
    assert turn.reason == "interrupted" and len(running) == 2
    for call in running:
        [outcome] = [e for e in events if e.type in ("ToolCallResult", "ToolCallError") and e.call_id == call.call_id]
        assert outcome.code == "cancelled"
    assert sorted(e.code for e in of(events, "ToolCallError") if e.agent_id is None) == ["cancelled", "cancelled"]
    assert [e.reason for e in of(events, "SubagentEnded")] == ["interrupted", "interrupted"]


async def test_resumed_sessions_number_new_subagents_after_the_recorded_ones(workspace: Workspace):
    steps = [{"tool_calls": [agent_call("toolu_1", "look", "look", "Explore")]}, {"text": "one"}]
    agents = {"look": [{"text": "nothing here"}]}
    first = workspace.session(steps, script_extra={"agents": agents})
    await run(first)
    again = workspace.session(steps, script_extra={"agents": agents}, resume=first.id)
    _, events = await run(again)
    assert [e.agent_id for e in of(events, "SubagentStarted")] == ["agent-2"]


async def test_a_subagent_compacts_its_own_conversation_and_the_callers_is_untouched(workspace: Workspace):
    workspace.write("a.txt", "alpha\n")
    steps = [{"tool_calls": [agent_call("toolu_c", "long look", "read a lot", "Explore")]},
             {"text": "The caller goes on."}]
    agents = {"long look": [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "a.txt"}}], "usage": {"input_tokens": 9000}},
        {"text": "SUB-SUMMARY: a.txt read, it holds alpha."},
        {"text": "a.txt holds alpha.", "usage": {"input_tokens": 300}}]}
    session = workspace.session(steps, script_extra={"agents": agents},
                                settings={"contextWindow": 10_000, "autoCompact": {"threshold": 0.5}})
    turn, events = await run(session)
    assert turn.reason == "completed"
    [compacted] = of(events, "ConversationCompacted")
    [started] = of(events, "SubagentStarted")
    assert compacted.agent_id == started.agent_id and compacted.summary.startswith("SUB-SUMMARY")
    [result] = of(events, "ToolCallResult", call_id="toolu_c")
    assert result.model_content.startswith("a.txt holds alpha.")
    assert "SUB-SUMMARY" not in str(session.conversation.snapshot())
