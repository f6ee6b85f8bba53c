"""The bundled demo, end to end, headless: a test client answers the approvals the TUI would ask."""

from __future__ import annotations

from pathlib import Path

from tui_app.assemble import SessionOptions, build_session
from tui_app.demo import DEMO_PROMPT, copy_sample_project
from tui_app.runtime.permissions.broker import ApprovalAnswer


async def run_demo(tmp_path, monkeypatch, decide, then: str | None = None):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    project = copy_sample_project(str(tmp_path))
    session = build_session(SessionOptions(cwd=str(project), provider="scripted", interactive=True))
    events = []
    asked = []

    def client(event):
        events.append(event)
        if event.type == "PermissionRequested":
            asked.append(event)
            session.broker.answer(event.request_id, ApprovalAnswer(
                decide(event), input_sha256=event.input_sha256))

    session.subscribe(client)
    await session.start()
    try:
        turn = await session.run_turn(DEMO_PROMPT)
        if then is not None:  # the user asks again once the demo is over
            turn = await session.run_turn(then)
    finally:
        await session.close()
    return project, turn, events, asked


def outcome(events, call_id):
    return next(e for e in events if e.type in ("ToolCallResult", "ToolCallError") and e.call_id == call_id)


async def test_the_demo_finds_and_fixes_the_bug_when_the_edit_is_approved(tmp_path, monkeypatch):
    project, turn, events, asked = await run_demo(tmp_path, monkeypatch, lambda e: "allow")
    assert turn.reason == "completed", turn.error
    assert "scripted demo" in turn.text.lower() or "scripted" in turn.text
    # the model's reasoning before the fix is there to be shown
    (thinking,) = [e for e in events if e.type == "AssistantThinking"]
    assert "Only the even branch is wrong" in thinking.raw["thinking"]
    # the two reads ran as one parallel group
    scheduled = {e.call_id: e.group for e in events if e.type == "ToolCallScheduled"}
    assert scheduled["toolu_demo_02"] == scheduled["toolu_demo_03"]
    # the failing run: error outcome, full log persisted, the failure visible in the model's text
    first_run = outcome(events, "toolu_demo_04")
    assert first_run.type == "ToolCallError" and first_run.model_content.startswith("Exit code 1")
    assert "FAIL: test_even" in first_run.model_content and "<persisted-output>" in first_run.model_content
    (artifact,) = first_run.artifacts
    log = Path(artifact.path).read_text(encoding="utf-8")
    assert "Ran 405 tests" in log and "test_sum_of_first_001_numbers" in log
    # the edit asked with its diff, was approved and applied
    edit_request = next(e for e in asked if e.tool == "Edit")
    assert edit_request.preview_kind == "diff" and "+    return (ordered[middle - 1] + ordered[middle]) / 2" in (
        edit_request.preview)
    assert outcome(events, "toolu_demo_06").type == "ToolCallResult"
    assert "(ordered[middle - 1] + ordered[middle]) / 2" in (project / "calc" / "stats.py").read_text()
    # the re-run passes
    rerun = outcome(events, "toolu_demo_07")
    assert rerun.type == "ToolCallResult" and "OK" in rerun.model_content


async def test_a_denied_edit_changes_nothing_and_the_demo_still_ends(tmp_path, monkeypatch):
    project, turn, events, _ = await run_demo(
        tmp_path, monkeypatch, lambda e: "deny" if e.tool == "Edit" else "allow")
    assert turn.reason == "completed"
    assert outcome(events, "toolu_demo_06").code == "user_denied"
    assert "return ordered[middle]\n    return ordered[middle]" in (project / "calc" / "stats.py").read_text()
    assert outcome(events, "toolu_demo_07").type == "ToolCallError"  # still failing


async def test_a_prompt_after_the_demo_says_how_to_connect_a_real_model(tmp_path, monkeypatch):
    _, turn, _, _ = await run_demo(tmp_path, monkeypatch, lambda e: "allow", then="now add a mode() function")
    assert turn.reason == "completed"
    assert turn.text.startswith("The scripted demo has no more steps, so nothing is done with that prompt.")
    assert "ANTHROPIC_API_KEY" in turn.text and "vigil replay" in turn.text
