"""Whole flows through the app: a real session on its own thread, the scripted model, real tools,
files and processes; the user's keys through pilot; what the screen shows afterwards."""

from __future__ import annotations

import asyncio
import threading

from tests.procs import kill_marked, marker, wait_for_marker, wait_gone
from tests.tui.app_harness import AppUnderTest, make_session, started, type_prompt, wait_until
from tests.tui.helpers import screen_text
from tui_app.runtime.hooks.runner import NoHooks, PermissionHookAnswer
from tui_app.runtime.permissions.decision import ModePolicy
from widgets.diff.view import DiffView

EDIT = {"id": "e1", "name": "Edit",
        "input": {"file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}}
READ = {"id": "r1", "name": "Read", "input": {"file_path": "calc.py"}}


def chat_text(app: AppUnderTest) -> str:
    return "\n".join(app.main.chat.assistant_texts())


async def test_prompt_stream_rows_edit_dialog_with_its_diff_approve_and_the_detail_shows_the_diff(
        tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [
        {"text": "Reading the module first, to see what `add` does.", "tool_calls": [READ]},
        {"text": "It subtracts. Here is the fix.", "tool_calls": [EDIT]},
        {"text": "Fixed: **add** now adds.", "expect": ["has been updated"]},
    ], chunk_delay_ms=5)
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "fix add")
        assert app.main.prompt.text == ""  # taken, and remembered
        await wait_until(pilot, lambda: app.dialog, "the Edit's approval dialog")
        assert app.states() == {"r1": "done", "e1": "awaiting approval"}
        text = screen_text(app)
        assert "Approve Edit?" in text and "Edit calc.py: 1 line replaced" in text
        assert "-     return a - b" in text and "+     return a + b" in text
        assert app.bells == 1
        # the answer streamed: deltas reached the screen before the block was complete
        assert app.events_of("AssistantTextDelta") and "Reading the module first" in chat_text(app)
        await pilot.press("y")
        await wait_until(pilot, lambda: app.states()["e1"] == "done", "the Edit to be done")
        await wait_until(pilot, lambda: not session.busy and "Fixed: **add** now adds." in chat_text(app),
                         "the last answer")
        assert (tmp_path / "project" / "calc.py").read_text().count("return a + b") == 1
        assert app.main.detail.call_id == "e1" and app.main.detail.active_tab == "diff"
        diff = app.main.detail.query_one("#detail-diff", DiffView)
        assert diff.model is not None and [line.text for line in diff.model.lines if line.kind == "added"] == [
            "    return a + b"]
        screen = screen_text(app)
        assert "✓ Edit calc.py" in screen and "+     return a + b" in screen
        assert "Fixed: add now adds." in screen


async def test_deny_with_feedback_reaches_the_model(tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [
        {"text": "Changing it.", "tool_calls": [READ, EDIT]},
        {"text": "Understood: I leave it subtracting.", "expect": ["keep it subtracting"]},
    ])
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "fix add")
        await wait_until(pilot, lambda: app.dialog, "the approval dialog")
        await pilot.press("f")
        await pilot.press(*"keep", "space", *"it", "space", *"subtracting")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end")
        (ended,) = app.events_of("TurnEnded")
        assert ended.reason == "completed", ended.message  # the script's `expect` saw the words
        assert app.states() == {"r1": "done", "e1": "denied"}
        (error,) = app.events_of("ToolCallError")
        assert error.code == "user_denied" and "The user said: keep it subtracting" in error.model_content
        assert "return a - b" in (tmp_path / "project" / "calc.py").read_text()
        assert "Understood: I leave it subtracting." in screen_text(app)


class SlowAllowingHook(NoHooks):
    """A PermissionRequest hook that answers once the test has seen the dialog (a fixed delay
    races a slow machine's first frame)."""

    def __init__(self) -> None:
        self.dialog_seen = threading.Event()

    def has_permission_request_hooks(self, tool_name: str) -> bool:
        return True

    async def permission_request(self, call, suggestions):
        await asyncio.to_thread(self.dialog_seen.wait, 30)
        return PermissionHookAnswer("allow", message="edits to calc.py are pre-approved")


async def test_a_hook_that_answers_first_closes_the_dialog_and_says_who_decided(tmp_path, monkeypatch):
    session = make_session(tmp_path, monkeypatch, [{"tool_calls": [READ, EDIT]}, {"text": "Done."}])
    session.hooks = hook = SlowAllowingHook()
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "fix add")
        dialog = await wait_until(pilot, lambda: app.dialog, "the approval dialog")
        hook.dialog_seen.set()
        await wait_until(pilot, lambda: app.dialog is None and dialog not in app.screen_stack,
                         "the dialog to close by itself")
        await wait_until(pilot, lambda: app.states().get("e1") == "done", "the Edit to run")
        await wait_until(pilot, lambda: any(
            "A PermissionRequest hook allowed Edit calc.py first: edits to calc.py are pre-approved" in n
            for n in app.notifications()), "the notification of who decided")
        (resolved,) = app.events_of("PermissionResolved")
        assert resolved.decided_by == "hook"
        await wait_until(pilot, lambda: app.main.prompt.has_focus, "the focus back where the user was")


async def test_three_approvals_queue_and_say_where_they_are(tmp_path, monkeypatch):
    files = {"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n"}
    reads = [{"id": f"r{n}", "name": "Read", "input": {"file_path": f"{n}.txt"}} for n in "abc"]
    session = make_session(tmp_path, monkeypatch, [{"tool_calls": reads}, {"text": "Read all three."}], files=files)
    session.policy = ModePolicy(ask={"Read"})  # three reads in one parallel group, each asks
    app = AppUnderTest(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "read them")
        await wait_until(pilot, lambda: len(app.events_of("PermissionRequested")) == 3, "three requests")
        await wait_until(pilot, lambda: "Approve Read?   1 of 3" in screen_text(app), "1 of 3")
        assert set(app.states().values()) == {"awaiting approval"}
        for n, position in (("a", 1), ("b", 2), ("c", 3)):
            assert f"Read {n}.txt" in screen_text(app)
            assert f"{position} of 3" in screen_text(app)
            await pilot.press("y")
            await pilot.pause(0.05)
        await wait_until(pilot, lambda: set(app.states().values()) == {"done"}, "all three done")
        assert app.dialog is None and app.bells == 3


async def test_escape_interrupts_a_running_bash_its_process_group_is_gone_and_the_rows_say_so(
        tmp_path, monkeypatch):
    mark = marker()
    session = make_session(tmp_path, monkeypatch, [
        {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": f"echo started; sleep {mark}"}},
                        {"id": "w1", "name": "Write", "input": {"file_path": "out.txt", "content": "x"}}]},
        {"text": "never reached"},
    ], mode="bypassPermissions")
    app = AppUnderTest(session)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await started(pilot)
            await type_prompt(pilot, "run it")
            await wait_until(pilot, lambda: app.states().get("b1") == "running", "the Bash to run")
            await wait_for_marker(mark)
            await wait_until(pilot, lambda: "started" in screen_text(app), "live output")
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end")
            assert wait_gone(mark) == {}
            assert app.states() == {"b1": "cancelled", "w1": "cancelled"}
            codes = {e.call_id: e.code for e in app.events_of("ToolCallError")}
            assert codes == {"b1": "cancelled", "w1": "aborted_before_dispatch"}
            assert app.events_of("TurnEnded")[0].reason == "interrupted"
            assert not (tmp_path / "project" / "out.txt").exists()
            text = screen_text(app)
            assert "– Bash" in text and "– cancelled" in text and "interrupted" in text
    finally:
        kill_marked(mark)


async def test_ctrl_q_stops_every_child_process_and_exits(tmp_path, monkeypatch):
    mark, background = marker(), marker()
    session = make_session(tmp_path, monkeypatch, [
        {"tool_calls": [{"id": "b0", "name": "Bash",
                         "input": {"command": f"sleep {background}", "run_in_background": True}}]},
        {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": f"sleep {mark}"}}]}],
        mode="bypassPermissions")
    app = AppUnderTest(session)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await started(pilot)
            await type_prompt(pilot, "run it")
            await wait_for_marker(background)
            await wait_for_marker(mark)
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: app.closed, "the runtime to close")
        assert app.return_code == 0
        assert wait_gone(mark) == {} and wait_gone(background) == {}  # the command and the background task
        assert not app.runner._thread.is_alive()
    finally:
        kill_marked(mark)
        kill_marked(background)
