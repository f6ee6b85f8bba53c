"""The gate an external agent's calls pass (docs/architecture.md §11), on a real session's policy, hooks and
broker, without an agent: what an attacker-controlled input can and cannot get past it, and what
goes back to the agent in Claude Code's protocol.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from tui_app.agents.calls import CallBook
from tui_app.agents.claude_code import protocol
from tui_app.agents.gate import Gate, Verdict
from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime.permissions.broker import ApprovalAnswer

CALL = "toolu_1"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vigil-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path = tmp_path / "project"
    (path / ".vigil").mkdir(parents=True)
    (path / "notes.txt").write_text("hello world\n")
    (path / ".vigil" / "settings.json").write_text(json.dumps({"permissions": {
        "deny": ["Bash(rm *)", "NotebookEdit"], "allow": ["WebSearch"]}}))
    return path


def gate_of(project, answer: ApprovalAnswer | None = None) -> tuple[Gate, list]:
    """A gate on a real session (its own agent is never run); `answer` is the user's, given as
    soon as a dialog opens, with the hash of the input the dialog showed."""
    session = build_session(SessionOptions(cwd=str(project), interactive=True, persist=False))
    seen: list = []

    def on_event(event):
        seen.append(event)
        if event.type == "PermissionRequested" and answer is not None:
            session.broker.answer(event.request_id, ApprovalAnswer(
                answer.decision, input_sha256=event.input_sha256, feedback=answer.feedback))
    session.subscribe(on_event)
    book = CallBook(session, "Claude Code")
    book.begin_turn("turn-1")
    return Gate(session, "Claude Code"), seen


async def test_a_deny_rule_sees_through_keys_vigil_does_not_know(project):
    gate, seen = gate_of(project)
    verdict = await gate.screen("turn-1", CALL, "Bash", {"command": "rm -rf src", "dangerouslyDisableSandbox": True})
    assert verdict.behavior == "deny" and "Bash(rm *)" in verdict.reason
    assert [(e.type, e.decided_by) for e in seen] == [("PermissionResolved", "rule")]


async def test_the_dialog_shows_and_the_agent_gets_back_its_whole_input_byte_for_byte(project):
    data = {"command": "make build", "description": "build", "dangerouslyDisableSandbox": True}
    gate, seen = gate_of(project, ApprovalAnswer("allow"))
    assert (await gate.screen("turn-1", CALL, "Bash", data)).behavior == "ask"
    verdict = await gate.ask("turn-1", CALL, "Bash", data, "This command requires approval")
    [asked] = [e for e in seen if e.type == "PermissionRequested"]
    assert asked.input == data and asked.preview == "make build"  # the key Vigil does not know is shown too
    assert verdict.behavior == "allow" and verdict.input == data
    assert protocol.permission_result(verdict) == {"behavior": "allow", "updatedInput": data}


async def test_an_input_vigil_cannot_read_is_asked_about_never_passed(project):
    gate, seen = gate_of(project, ApprovalAnswer("deny"))
    assert (await gate.screen("turn-1", CALL, "Bash", {"command": 42})).behavior == "ask"
    verdict = await gate.ask("turn-1", CALL, "Bash", {"command": 42})
    [asked] = [e for e in seen if e.type == "PermissionRequested"]
    assert asked.decided_by == "guard" and "cannot check" in asked.reason
    assert verdict.behavior == "deny" and verdict.code == "user_denied"


async def test_a_tool_only_the_agent_knows_is_judged_by_its_name(project):
    gate, _ = gate_of(project)
    assert (await gate.screen("turn-1", "c1", "NotebookEdit", {"notebook_path": "a.ipynb"})).behavior == "deny"
    assert (await gate.screen("turn-1", "c2", "Skill", {"skill": "x"})).behavior == "ask"  # the mode asks
    allowed = await gate.ask("turn-1", "c3", "WebSearch", {"query": "textual"})
    assert (allowed.behavior, allowed.input) == ("allow", {"query": "textual"})


async def test_a_read_the_agent_asks_about_goes_to_the_user_with_the_agents_reason(project):
    gate, seen = gate_of(project, ApprovalAnswer("deny", feedback="not that file"))
    data = {"file_path": str(project / "notes.txt")}
    assert (await gate.screen("turn-1", CALL, "Read", data)).behavior == "pass"  # Vigil has no objection
    verdict = await gate.ask("turn-1", CALL, "Read", data, "it is in a sensitive directory")
    [asked] = [e for e in seen if e.type == "PermissionRequested"]
    assert asked.decided_by == "agent" and asked.reason == "Claude Code asks: it is in a sensitive directory"
    assert verdict.behavior == "deny" and "not that file" in verdict.reason
    assert protocol.permission_result(verdict) == {"behavior": "deny", "message": verdict.reason}


async def test_an_edit_is_previewed_against_the_file_on_disk(project):
    gate, seen = gate_of(project, ApprovalAnswer("allow"))
    data = {"file_path": str(project / "notes.txt"), "old_string": "hello", "new_string": "bye", "replace_all": False}
    await gate.ask("turn-1", CALL, "Edit", data)
    [asked] = [e for e in seen if e.type == "PermissionRequested"]
    assert asked.preview_kind == "diff" and "-hello world\n+bye world" in asked.preview


async def test_a_question_withdrawn_closes_its_dialog_as_decided_by_the_turn(project):
    gate, seen = gate_of(project)  # nobody answers
    task = asyncio.ensure_future(gate.ask("turn-1", CALL, "Bash", {"command": "make"}))
    while not any(e.type == "PermissionRequested" for e in seen):
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    resolved = [e for e in seen if e.type == "PermissionResolved"]
    assert [(e.decision, e.decided_by) for e in resolved] == [("deny", "turn")]


def test_vigils_word_in_claude_codes_hook_output():
    assert protocol.hook_output(Verdict("pass")) == {}
    assert protocol.hook_output(Verdict("ask", "rule says ask")) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "rule says ask"}}
    denied = protocol.hook_output(Verdict("deny", "no", interrupt=True, context=["note"]))
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert denied["hookSpecificOutput"]["additionalContext"] == "note"
    assert (denied["continue"], denied["stopReason"]) == (False, "no")
    # an allow always carries updatedInput, even an empty one (older releases fail closed without it)
    assert protocol.permission_result(Verdict("allow", input={})) == {"behavior": "allow", "updatedInput": {}}


def test_bypass_permissions_is_enforced_by_vigil_not_passed_on():
    assert [protocol.agent_mode(m) for m in ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")] == [
        "default", "acceptEdits", "plan", "dontAsk", "default"]
