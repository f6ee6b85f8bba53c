"""ExitPlanMode: the plan goes to the user, whose answer sets the mode (or keeps planning, with
feedback to the model); headless, the plan ends the turn and is its result."""

from __future__ import annotations

import asyncio
import io
import json

from tests.builtin_kit import Workspace, of, run
from tests.builtin_kit import workspace as private_workspace
from tui_app.headless.runner import run_headless

workspace = private_workspace  # the fixture, visible to this module's tests

PLAN = "# Plan\n1. Fix `add()` in calc.py\n2. Run the tests"


def plan_then_write(**write: str) -> list[dict]:
    return [{"text": "Here is my plan.", "tool_calls": [{"id": "plan", "name": "ExitPlanMode",
                                                         "input": {"plan": PLAN}}]},
            {"tool_calls": [{"id": "write", "name": "Write",
                             "input": {"file_path": "notes.md", "content": "fixed\n", **write}}]},
            {"text": "Done."}]


def answering(session, answers: dict | None):
    """The user's answer to the plan dialog, given as soon as it is asked."""
    asked: list = []

    def on_event(event) -> None:
        if event.type == "PlanApprovalAsked":
            asked.append(event)
            asyncio.get_running_loop().call_soon(session.broker.answer_question, event.request_id, answers)

    session.subscribe(on_event)
    return asked


async def test_approving_with_auto_accept_switches_to_accept_edits_and_edits_run(workspace: Workspace):
    session = workspace.session(plan_then_write(), permission_mode="plan", interactive=True)
    asked = answering(session, {"decision": "acceptEdits"})
    turn, events = await run(session, "Plan the fix")
    assert turn.reason == "completed" and [a.plan for a in asked] == [PLAN]
    [changed] = of(events, "PermissionModeChanged")
    assert (changed.previous, changed.mode) == ("plan", "acceptEdits")
    [approved] = of(events, "ToolCallResult", call_id="plan")
    assert "approved your plan" in approved.model_content and "acceptEdits" in approved.model_content
    [answered] = of(events, "UserQuestionAnswered")
    assert answered.answers == {"decision": "acceptEdits"}
    assert of(events, "ToolCallResult", call_id="write") and not of(events, "PermissionRequested")
    assert (workspace.project / "notes.md").read_text() == "fixed\n"


async def test_approving_and_keep_asking_switches_to_default(workspace: Workspace):
    session = workspace.session(plan_then_write(), permission_mode="plan", interactive=True)
    answering(session, {"decision": "default"})

    def deny(event) -> None:  # the Write now asks, as default mode does
        if event.type == "PermissionRequested":
            from tui_app.runtime.permissions.broker import ApprovalAnswer

            asyncio.get_running_loop().call_soon(session.broker.answer, event.request_id,
                                                 ApprovalAnswer("deny", input_sha256=event.input_sha256))

    session.subscribe(deny)
    _, events = await run(session, "Plan the fix")
    assert [e.mode for e in of(events, "PermissionModeChanged")] == ["default"]
    assert [e.tool for e in of(events, "PermissionRequested")] == ["Write"]


async def test_keep_planning_sends_the_feedback_to_the_model_and_stays_in_plan_mode(workspace: Workspace):
    steps = [{"tool_calls": [{"id": "plan", "name": "ExitPlanMode", "input": {"plan": PLAN}}]},
             {"expect": ["keep planning", "also update the docs"], "text": "I will add the docs."}]
    session = workspace.session(steps, permission_mode="plan", interactive=True)
    answering(session, {"decision": "keep", "feedback": "also update the docs"})
    turn, events = await run(session, "Plan the fix")
    assert turn.reason == "completed" and session.permission_mode == "plan"
    [kept] = of(events, "ToolCallError", call_id="plan")
    assert kept.code == "user_denied" and "also update the docs" in kept.model_content
    assert not of(events, "PermissionModeChanged")


async def test_headless_the_plan_ends_the_turn_and_is_its_result(workspace: Workspace):
    session = workspace.session(plan_then_write(), permission_mode="plan")
    out = io.StringIO()
    code = await run_headless(session, "Plan the fix", "stream-json", out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert code == 0
    result = lines[-1]
    assert result["type"] == "result" and result["subtype"] == "success" and result["result"] == PLAN
    assert not (workspace.project / "notes.md").exists()  # nothing after the plan ran
    assert len(session.agent.client.requests) == 1


async def test_outside_plan_mode_there_is_no_plan_to_exit(workspace: Workspace):
    steps = [{"tool_calls": [{"id": "plan", "name": "ExitPlanMode", "input": {"plan": PLAN}}]}, {"text": "ok"}]
    _, events = await run(workspace.session(steps, permission_mode="default"))
    [error] = of(events, "ToolCallError", call_id="plan")
    assert error.code == "precondition_failed" and "not in plan mode" in error.message


async def test_an_agent_call_is_allowed_in_plan_mode_and_its_writes_are_not(workspace: Workspace):
    steps = [{"tool_calls": [{"id": "look", "name": "Agent", "input": {
        "description": "try a write", "prompt": "write x", "subagent_type": "general-purpose"}}]}, {"text": "ok"}]
    agents = {"try a write": [{"tool_calls": [{"id": "w", "name": "Write",
                                               "input": {"file_path": "x.txt", "content": "x"}}]},
                              {"text": "Plan mode stopped me."}]}
    _, events = await run(workspace.session(steps, permission_mode="plan", script_extra={"agents": agents}))
    assert of(events, "ToolCallResult", call_id="look")
    [denied] = [e for e in of(events, "ToolCallError") if e.agent_id is not None]
    assert denied.code == "permission_denied" and "plan mode" in denied.message
    assert not (workspace.project / "x.txt").exists()
