"""The table's reducer: session events → one row per call, state only moving forward."""

from __future__ import annotations

import pytest

from tests.tui.session_data import READ, SHELL, T0, session_events
from tui_app.runtime.events import (
    CallMetrics,
    PermissionRequested,
    PermissionResolved,
    ToolCallError,
    ToolCallProgress,
    ToolCallRequested,
    ToolCallResult,
    ToolCallScheduled,
    ToolCallStarted,
    TurnStarted,
)
from tui_app.view_model.tool_rows import ToolRows, target_of_input


def requested(call_id: str, name: str = "Bash", data: object = None, ts: float = T0) -> ToolCallRequested:
    return ToolCallRequested(call_id=call_id, step=1, index=0, name=name, input=data or {"command": "ls"}, ts=ts)


def error(call_id: str, code: str, phase: str = "execute") -> ToolCallError:
    return ToolCallError(call_id=call_id, tool="Bash", phase=phase, code=code, message=code, model_content=code)


def test_a_call_goes_queued_running_done_with_duration_and_size():
    rows = ToolRows()
    rows.apply(requested("c1", data={"command": "pytest -q"}))
    row = rows.get("c1")
    assert (row.number, row.tool, row.target, row.state) == (1, "Bash", "pytest -q", "queued")
    rows.apply(ToolCallScheduled(call_id="c1", batch=0, group=1, groups=[["c0"], ["c1", "c2"]]))
    assert row.group == "g2 ∥2"
    rows.apply(ToolCallStarted(call_id="c1", tool="Bash", input={"command": "pytest -q"}, target="pytest -q",
                               flags=SHELL, ts=T0 + 1))
    assert row.state == "running"
    assert row.elapsed_ms(now=T0 + 3.5) == 2500
    rows.apply(ToolCallProgress(call_id="c1", kind="output", stream="stdout", text="héllo\n"))
    assert row.output_bytes == len("héllo\n".encode())
    rows.apply(ToolCallResult(call_id="c1", tool="Bash", model_content="ok", original_bytes=48_000,
                              metrics=CallMetrics(total_ms=2100, exec_ms=2000)))
    assert (row.state, row.duration_ms, row.output_bytes) == ("done", 2000, 48_000)
    assert row.elapsed_ms(now=T0 + 100) == 2000


def test_approval_moves_the_row_to_awaiting_then_back_to_queued():
    rows = ToolRows()
    rows.apply(requested("c1", "Edit", {"file_path": "/p/a.py"}))
    rows.apply(PermissionRequested(call_id="c1", request_id="r1", tool="Edit", input={"file_path": "/p/a.py"},
                                   input_sha256="x", summary="Edit a.py"))
    assert rows.get("c1").state == "awaiting approval"
    rows.apply(PermissionResolved(call_id="c1", request_id="r1", decision="allow", decided_by="user"))
    assert rows.get("c1").state == "queued"


def test_an_allow_by_rule_for_a_queued_call_changes_nothing():
    rows = ToolRows()
    rows.apply(requested("c1"))
    version = rows.get("c1").version
    assert rows.apply(PermissionResolved(call_id="c1", decision="allow", decided_by="rule")) is None
    assert rows.get("c1").version == version


@pytest.mark.parametrize(("code", "state"), [
    ("user_denied", "denied"), ("permission_denied", "denied"), ("hook_denied", "denied"),
    ("no_permission_client", "denied"), ("cancelled", "cancelled"), ("aborted_before_dispatch", "cancelled"),
    ("turn_stopped", "cancelled"), ("timeout", "failed"), ("execution_failed", "failed"),
    ("schema_invalid", "failed"), ("unknown_tool", "failed"),
])
def test_error_codes_route_to_a_state(code, state):
    rows = ToolRows()
    rows.apply(requested("c1"))
    rows.apply(error("c1", code))
    assert rows.get("c1").state == state
    assert rows.get("c1").error_code == code


def test_a_denial_settles_the_row_before_its_error_arrives():
    rows = ToolRows()
    rows.apply(requested("c1"))
    rows.apply(PermissionResolved(call_id="c1", decision="deny", decided_by="rule", reason="no"))
    assert rows.get("c1").state == "denied"
    rows.apply(error("c1", "permission_denied", "permission"))
    assert rows.get("c1").state == "denied"


def test_a_settled_row_is_never_reopened_by_late_events():
    rows = ToolRows()
    rows.apply(requested("c1"))
    rows.apply(ToolCallResult(call_id="c1", tool="Bash", model_content="ok", original_bytes=10))
    assert rows.apply(ToolCallProgress(call_id="c1", kind="output", text="late")) is None
    assert rows.apply(ToolCallStarted(call_id="c1", tool="Bash", input={}, flags=READ)) is None
    assert rows.get("c1").state == "done"
    assert rows.get("c1").output_bytes == 10


def test_events_without_a_known_call_are_ignored():
    rows = ToolRows()
    assert rows.apply(TurnStarted(prompt="hi")) is None
    assert rows.apply(ToolCallProgress(call_id="ghost", kind="output", text="x")) is None
    assert len(rows) == 0


def test_progress_with_a_total_becomes_a_fraction():
    rows = ToolRows()
    rows.apply(requested("c1"))
    rows.apply(ToolCallStarted(call_id="c1", tool="Bash", input={}, flags=SHELL))
    rows.apply(ToolCallProgress(call_id="c1", kind="progress", progress=3, total=4))
    assert rows.get("c1").progress == 0.75


def test_rows_keep_the_model_order_and_number_calls():
    rows = ToolRows()
    for event in session_events():
        rows.apply(event)
    assert [r.call_id for r in rows.rows] == [f"toolu_0{i}" for i in range(1, 9)]
    assert [r.number for r in rows.rows] == list(range(1, 9))
    states = {r.call_id: r.state for r in rows.rows}
    assert states == {
        "toolu_01": "done", "toolu_02": "done", "toolu_03": "done", "toolu_04": "done",
        "toolu_05": "awaiting approval", "toolu_06": "running", "toolu_07": "denied", "toolu_08": "cancelled",
    }


@pytest.mark.parametrize(("data", "target"), [
    ({"file_path": "/a/b.py", "content": "x"}, "/a/b.py"),
    ({"command": "npm test", "description": "run tests"}, "npm test"),
    ({"url": "https://example.com", "prompt": "summarise"}, "https://example.com"),
    ('{"pattern": "**/*.py"}', "**/*.py"),
    ({"some_mcp_arg": "value"}, "value"),
    ("not json", ""),
    ([1, 2], ""),
    ({}, ""),
])
def test_target_of_input(data, target):
    assert target_of_input(data) == target


def test_a_failed_command_says_its_exit_code_and_an_early_read_keeps_its_group():
    from tui_app.runtime.display import BashOutputDisplay

    rows = ToolRows()
    rows.apply(requested("c1", data={"command": "pytest"}))
    rows.apply(ToolCallError(call_id="c1", tool="Bash", phase="execute", code="execution_failed", message="x",
                             model_content="Exit code 2", display=BashOutputDisplay(command="pytest", exit_code=2)))
    assert (rows.get("c1").state, rows.get("c1").error_code) == ("failed", "exit 2")
    # a read started while the model streamed finishes before its batch is scheduled
    rows.apply(requested("r1", name="Read", data={"file_path": "a"}))
    rows.apply(ToolCallResult(call_id="r1", tool="Read", model_content="a"))
    rows.apply(ToolCallScheduled(call_id="r1", batch=0, group=0, groups=[["r1", "r2"]]))
    assert (rows.get("r1").state, rows.get("r1").group) == ("done", "g1 ∥2")
