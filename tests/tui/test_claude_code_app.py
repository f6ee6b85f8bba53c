"""The TUI supervising the real Claude Code CLI: its Edit approved in Vigil's dialog with the diff
Vigil computed, its Bash denied with feedback the model then reads, Esc stopping a long Bash and
everything it started, shift+tab switching Claude Code's own permission mode.

Claude Code is the pinned npm package (tests/agents), its model the loopback Anthropic server.
"""

from __future__ import annotations

import asyncio
import io
import json

from tests import cc_kit
from tests.cc_kit import cc_reply, cc_session, pid_alive, tool, tool_results
from tests.tui.app_harness import AppUnderTest, started, type_prompt, wait_until
from tests.tui.helpers import screen_text
from tui_app.headless.replay import replay
from tui_app.runtime.display import FileDiffDisplay
from widgets.diff.view import DiffView

# the fixtures, visible to this module's tests
claude, cc_home, project, server = cc_kit.claude, cc_kit.cc_home, cc_kit.project, cc_kit.server
DEADLINE_S = cc_kit.DEADLINE_S


def _app(session) -> AppUnderTest:
    return AppUnderTest(session)


async def quit_runtime(pilot) -> None:
    """What ctrl+q does first: Claude Code and everything it started end, the log is closed; the
    screen takes the last events before the test lets the app go."""
    await asyncio.to_thread(pilot.app.close_runtime)
    await wait_until(pilot, lambda: pilot.app.events_of("SessionEnded"), "the session to end", DEADLINE_S)


async def test_an_edit_claude_code_asks_about_is_approved_in_vigils_dialog_with_vigils_diff(
        claude, project, server):
    notes = project / "notes.txt"
    server.queue(
        cc_reply(text="Reading the note.", tool_calls=[tool("toolu_read", "Read", file_path=str(notes))]),
        cc_reply(text="Changing it.", tool_calls=[tool("toolu_edit", "Edit", file_path=str(notes),
                                                       old_string="hello", new_string="goodbye")]),
        cc_reply(text="The note says goodbye now."))
    session = cc_session(claude, project, interactive=True)
    app = _app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        assert "claude-code" in screen_text(app)
        await type_prompt(pilot, "say goodbye")
        dialog = await wait_until(pilot, lambda: app.dialog, "the approval dialog", DEADLINE_S)
        # the diff Vigil computed against the file on disk, in the dialog's own diff view
        assert isinstance(dialog.request.preview_display, FileDiffDisplay)
        assert (dialog.request.preview_display.added, dialog.request.preview_display.removed) == (1, 1)
        await wait_until(pilot, lambda: dialog.query(DiffView), "the diff view in the dialog")
        shown = await wait_until(pilot, lambda: "goodbye world" in screen_text(app) and screen_text(app),
                                 "the diff on screen")
        assert "hello world" in shown
        assert notes.read_text() == "hello world\n"  # nothing runs before the answer
        await pilot.press("y")
        await wait_until(pilot, lambda: app.states().get("toolu_edit") == "done", "the Edit to run", DEADLINE_S)
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end", DEADLINE_S)
        assert notes.read_text() == "goodbye world\n"
        assert app.states() == {"toolu_read": "done", "toolu_edit": "done"}
        await wait_until(pilot, lambda: "The note says goodbye now." in screen_text(app), "the answer on screen")
        read = next(e for e in app.events_of("PermissionResolved") if e.call_id == "toolu_read")
        assert read.decided_by == "agent"  # Claude Code's own decision, not passed off as Vigil's
        await quit_runtime(pilot)
    # the session afterwards, replayed from its log without running anything
    out = io.StringIO()
    assert replay(session.id, "text", out=out) == 0
    text = out.getvalue()
    assert "claude-code" in text and "→ Edit" in text and "✓ Edit" in text and "allowed by Claude Code" in text
    out = io.StringIO()
    assert replay(session.id, "stream-json", out=out) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "The note says goodbye now."


async def test_a_bash_denied_with_feedback_reaches_the_model_in_its_tool_result(claude, project, server):
    server.queue(
        cc_reply(tool_calls=[tool("toolu_bash", "Bash", command="touch built.flag", description="build")]),
        cc_reply(text="Understood, I will not build."))
    session = cc_session(claude, project, interactive=True)
    app = _app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "build it")
        dialog = await wait_until(pilot, lambda: app.dialog, "the approval dialog", DEADLINE_S)
        assert dialog.request.preview == "touch built.flag"  # the exact command
        await pilot.press("f")
        await type_prompt(pilot, "use make instead")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end", DEADLINE_S)
        assert app.states() == {"toolu_bash": "denied"}
        await quit_runtime(pilot)
    assert not (project / "built.flag").exists()
    text, is_error = tool_results(server.requests[1])["toolu_bash"]
    assert is_error and "use make instead" in text


async def test_esc_stops_a_long_bash_and_everything_it_started_and_the_next_prompt_works(
        claude, project, server):
    server.queue(
        cc_reply(tool_calls=[tool("toolu_long", "Bash", description="wait",
                                  command="echo $$ > shell.pid; sleep 300 & echo $! > sleep.pid; wait")]),
        cc_reply(text="Still here."))
    session = cc_session(claude, project, interactive=True)
    app = _app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "wait a while")
        await wait_until(pilot, lambda: app.dialog, "the approval dialog", DEADLINE_S)
        await pilot.press("y")
        pid_files = [project / "shell.pid", project / "sleep.pid"]
        await wait_until(pilot, lambda: all(p.exists() and p.read_text().strip() for p in pid_files),
                         "the command to start", DEADLINE_S)
        pids = [int(p.read_text()) for p in pid_files]
        assert all(pid_alive(pid) for pid in pids) and app.states() == {"toolu_long": "running"}
        await pilot.press("escape")
        ended = await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end", DEADLINE_S)
        assert ended[0].reason == "interrupted"
        await wait_until(pilot, lambda: not any(pid_alive(pid) for pid in pids), "the processes to be gone",
                         DEADLINE_S)
        assert app.states() == {"toolu_long": "cancelled"}
        await type_prompt(pilot, "are you there")
        await wait_until(pilot, lambda: len(app.events_of("TurnEnded")) == 2, "the next turn to end", DEADLINE_S)
        assert app.events_of("TurnEnded")[1].reason == "completed"
        assert [e.text for e in app.events_of("AssistantText")] == ["Still here."]
        await wait_until(pilot, lambda: "Still here." in screen_text(app), "the answer on screen")
        await quit_runtime(pilot)


async def test_shift_tab_switches_claude_codes_own_permission_mode(claude, project, server):
    notes = project / "notes.txt"
    server.queue(
        cc_reply(tool_calls=[tool("toolu_read", "Read", file_path=str(notes))]),
        cc_reply(tool_calls=[tool("toolu_edit", "Edit", file_path=str(notes), old_string="hello",
                                  new_string="hi")]),
        cc_reply(text="Edited."))
    session = cc_session(claude, project, interactive=True)
    app = _app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: "mode acceptEdits " in screen_text(app), "the header to say acceptEdits")
        await type_prompt(pilot, "edit it")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the turn to end", DEADLINE_S)
        assert app.events_of("PermissionRequested") == []
        assert notes.read_text() == "hi world\n"
        edit = next(e for e in app.events_of("PermissionResolved") if e.call_id == "toolu_edit")
        # Claude Code did not ask: it was told the mode and allowed the edit by that mode itself
        assert (edit.decided_by, edit.reason) == ("agent", "allowed by Claude Code (its permission mode)")
        await quit_runtime(pilot)
