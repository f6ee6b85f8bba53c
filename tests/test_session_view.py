"""The session's view model, without Textual: every event folded once into rows, records, header,
reports and pending requests; a request settled elsewhere says what settled it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.tui.session_data import session_events
from tui_app.runtime.events import (
    AgentCommand,
    AgentCommandsChanged,
    AgentMode,
    AgentModeChanged,
    ConversationCompacted,
    FileChangedExternally,
    McpServerStatus,
    PermissionRequested,
    PermissionResolved,
    PlanApprovalAsked,
    SubagentStarted,
    TodoUpdated,
    ToolCallError,
    UserQuestionAnswered,
    UserQuestionAsked,
)
from tui_app.view_model.session_view import SessionView

ROOT = Path(__file__).parent.parent


def asked(request_id: str, call_id: str, **kw: object) -> PermissionRequested:
    return PermissionRequested(
        request_id=request_id,
        call_id=call_id,
        tool="Edit",
        input={"file_path": "a.py"},
        input_sha256="0",
        summary="Edit a.py",
        **kw,
    )


def test_one_fold_feeds_rows_records_and_header_alike():
    events = session_events()
    view = SessionView()
    changes = [view.apply(event) for event in events]
    assert view.applied == len(events)
    # every call has a row and a record, and they agree on what the call is
    assert [row.call_id for row in view.rows.rows] == list(view.records.records)
    for row in view.rows.rows:
        assert view.records.get(row.call_id).tool == row.tool
    waiting = [row.call_id for row in view.rows.rows if row.state == "awaiting approval"]
    assert waiting and [r.call_id for r in view.requests.waiting] == waiting
    assert view.header.waiting == len(waiting)
    # each change names the row the event moved; the events of no call change none
    assert {c.row.call_id for c in changes if c.row is not None} == {r.call_id for r in view.rows.rows}
    assert all(c.row is None and not c.records for e, c in zip(events, changes, strict=True) if e.call_id is None)


def test_the_pending_requests_are_one_queue_in_the_order_asked_and_say_what_settled_them():
    view = SessionView()
    view.apply(
        SubagentStarted(
            call_id="agent-1", agent_id="sub-1", description="find callers", subagent_type="Explore", prompt="p"
        )
    )
    view.apply(asked("p1", "c1"))
    view.apply(UserQuestionAsked(request_id="q1", questions=[{"question": "Which?"}]))
    view.apply(PlanApprovalAsked(request_id="plan1", plan="# Plan"))
    view.apply(asked("p2", "c2", agent_id="sub-1"))
    view.apply(asked("p3", "c3", interactive=False))  # only hooks can answer it: nobody is asked
    assert [r.request_id for r in view.requests.waiting] == ["p1", "q1", "plan1", "p2"]
    assert view.requests.asked_by(view.requests.get("p2")) == "the Explore subagent “find callers”"
    assert view.requests.asked_by(view.requests.get("p1")) is None

    hook = PermissionResolved(request_id="p1", call_id="c1", decision="allow", decided_by="hook")
    (settled,) = view.apply(hook).settled
    assert (settled.request.request_id, settled.event) == ("p1", hook)
    # a question's answer settles the question, never a permission request of the same id
    assert [s.request.request_id for s in view.apply(UserQuestionAnswered(request_id="q1")).settled] == ["q1"]
    cancelled = UserQuestionAnswered(request_id="plan1", outcome="cancelled")
    assert [s.event for s in view.apply(cancelled).settled] == [cancelled]
    # a call that ended while its request waited settles the request
    ended = ToolCallError(
        call_id="c2", tool="Edit", phase="permission", code="cancelled", message="x", model_content="x"
    )
    assert [s.request.request_id for s in view.apply(ended).settled] == ["p2"]
    assert view.requests.waiting == [] and len(view.requests) == 0


def test_the_reports_keep_what_the_session_said_about_itself():
    view = SessionView()
    view.apply(McpServerStatus(server="docs", status="connecting"))
    view.apply(McpServerStatus(server="docs", status="connected", tools=3))
    view.apply(ConversationCompacted(trigger="manual", summary="s", boundary_seq=9))
    view.apply(ConversationCompacted(trigger="clear", summary="", boundary_seq=10))
    modes = AgentModeChanged(agent="fixture", mode="auto", modes=[AgentMode(id="auto", name="Auto")])
    view.apply(modes)
    view.apply(AgentCommandsChanged(agent="fixture", commands=[AgentCommand(name="review")]))
    reports = view.reports
    assert reports.mcp["docs"].status == "connected" and reports.compactions == 1
    assert reports.agent_modes == modes and [c.name for c in reports.agent_commands.commands] == ["review"]


def test_the_view_model_loads_no_textual():
    code = (
        "import sys, tui_app.view_model.session_view, tui_app.view_model.follow\n"
        "print(','.join(m for m in sys.modules if m == 'textual' or m.startswith('textual.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == ""


def test_the_files_and_the_plan_are_the_sessions_own_not_its_subagents():
    view = SessionView(cwd="/p")
    written = TodoUpdated(todos=[{"content": "fix median", "status": "in_progress"}])
    assert view.apply(written).files == written
    assert view.apply(TodoUpdated(todos=[], agent_id="sub-1")).files is None  # the subagent's own list
    assert view.files.todos == written.todos
    changed = view.apply(FileChangedExternally(path="/p/calc/stats.py")).files
    assert (changed.path, changed.kind) == ("calc/stats.py", "outside")
    assert view.apply(FileChangedExternally(path="/p/calc/stats.py")).files is None  # said once
    assert list(view.files.changes) == ["calc/stats.py"]
