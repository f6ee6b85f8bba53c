"""The detail pane's reducer: one call's input, permission story, output, result and timeline."""

from __future__ import annotations

from tests.tui.session_data import CWD, SHELL, T0, bash_display, session_events
from tui_app.runtime.events import (
    CallMetrics,
    FileChangedExternally,
    ToolCallProgress,
    ToolCallRequested,
    ToolCallResult,
    ToolCallStarted,
)
from tui_app.view_model.call_records import LIVE_OUTPUT_BYTES, CallRecords


def records_of_session() -> CallRecords:
    records = CallRecords()
    for event in session_events():
        records.apply(event)
    return records


def test_result_text_is_what_the_model_got_plus_how_it_was_cut_and_where_the_rest_is():
    record = records_of_session().get("toolu_04")
    text = record.result_text()
    assert text.endswith(" sent to the model:\nExit code 1\n…1 failed, 3 passed")
    assert "artifact: original 48,211 bytes, sent 30,000 bytes to the model" in text
    assert "vigil-artifact://s-demo/a1" in text
    assert "path: /home/dev/.local/share/vigil/sessions/s-demo/artifacts/a1.txt" in text


def test_error_result_names_phase_code_and_side_effects():
    record = records_of_session().get("toolu_07")
    assert "error · phase permission · code permission_denied · side effects none" in record.result_text()


def test_timeline_tells_the_permission_story_and_times():
    record = records_of_session().get("toolu_07")
    labels = [e.label for e in record.timeline]
    assert labels == ["requested", "scheduled", "denied", "denied"]
    assert "rule WebFetch(domain:docs.python.org)" in record.timeline[2].detail


def test_wait_and_exec_come_from_metrics():
    record = records_of_session().get("toolu_04")
    assert record.wait_and_exec() == (0, 1840)


def test_the_diff_of_a_call_awaiting_approval_is_its_preview():
    record = records_of_session().get("toolu_05")
    assert record.diff is not None and record.diff.path.endswith("calc/stats.py")
    assert record.outcome is None


def test_live_output_is_bounded_and_dropped_once_the_display_carries_it():
    records = CallRecords()
    records.apply(ToolCallRequested(call_id="c1", step=1, index=0, name="Bash", input={"command": "yes"}))
    records.apply(ToolCallStarted(call_id="c1", tool="Bash", input={"command": "yes"}, flags=SHELL))
    chunk = "y\n" * 5000
    for _ in range(100):
        records.apply(ToolCallProgress(call_id="c1", kind="output", stream="stdout", text=chunk))
    record = records.get("c1")
    assert record.live_bytes <= LIVE_OUTPUT_BYTES
    assert record.dropped_bytes == 100 * len(chunk) - record.live_bytes
    assert record.output_chunks == 100
    records.apply(ToolCallResult(call_id="c1", tool="Bash", model_content="…", display=bash_display("yes", 0)))
    assert record.live_bytes == 0 and not record.live_output
    assert record.bash is not None


def test_external_change_flags_the_calls_that_touched_the_path():
    records = records_of_session()
    changed = records.apply(FileChangedExternally(path="calc/stats.py", change="modified", ts=T0 + 9))
    assert sorted(r.call_id for r in changed) == ["toolu_02", "toolu_05"]
    assert records.get("toolu_05").external_change == "modified"
    assert records.get("toolu_03").external_change is None
    assert records.apply(FileChangedExternally(path=f"{CWD}/other.py")) == []


def test_input_json_is_pretty_and_keeps_unicode():
    records = CallRecords()
    records.apply(ToolCallRequested(call_id="c1", step=1, index=0, name="Write",
                                    input={"file_path": "é.txt", "content": "ü"}))
    assert records.get("c1").input_json() == '{\n  "file_path": "é.txt",\n  "content": "ü"\n}'


def test_the_resolved_input_wins_over_the_requested_one():
    records = CallRecords()
    records.apply(ToolCallRequested(call_id="c1", step=1, index=0, name="Read", input={"file_path": "a"}))
    records.apply(ToolCallStarted(call_id="c1", tool="Read", input={"file_path": "/p/a"}, flags=SHELL))
    assert records.get("c1").input == {"file_path": "/p/a"}
    assert records.get("c1").path == "/p/a"


def test_metrics_missing_falls_back_to_event_times():
    records = CallRecords()
    records.apply(ToolCallRequested(call_id="c1", step=1, index=0, name="Read", input={}))
    records.apply(ToolCallStarted(call_id="c1", tool="Read", input={}, flags=SHELL, ts=T0))
    records.apply(ToolCallResult(call_id="c1", tool="Read", model_content="x", ts=T0 + 0.25,
                                 metrics=CallMetrics()))
    assert records.get("c1").wait_and_exec() == (None, 250)
