"""Shell mode through the whole app: a `!` line runs in the user's shell in the cwd (not by the
model), streams into the chat and the table as a Bash row marked with `!`, and is context for the
next prompt in Claude Code's tags; Esc stops a long one with everything it started."""

from __future__ import annotations

from tests.procs import marker, wait_gone, with_marker
from tests.tui.app_harness import AppUnderTest, started, type_prompt, wait_until
from tests.tui.helpers import screen_text
from tests.tui.test_agent_flows import agent_session, turn_over


async def test_a_bang_line_runs_in_the_shell_and_is_context_for_the_next_prompt(tmp_path, monkeypatch):
    session = agent_session(tmp_path, monkeypatch, [{"text": "I see the output."}])
    app = AppUnderTest(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await started(pilot)
        await pilot.press("!")
        assert app.main.prompt.has_class("-shell") and "shell" in str(app.main.prompt.border_title)
        await pilot.press(*"pwd; echo from-stderr >&2; ls")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.events_of("UserMessage"), "the command's context")
        assert app.main.prompt.text == "" and not app.main.prompt.has_class("-shell")
        [row] = app.main.table.rows.rows
        assert row.tool == "Bash" and row.target.startswith("!pwd") and row.state == "done"
        [context] = app.events_of("UserMessage")
        assert context.source == "shell"
        assert context.text.startswith("<bash-input>pwd; echo from-stderr >&2; ls</bash-input>")
        assert f"<bash-stdout>{tmp_path / 'project'}\ncalc.py</bash-stdout>" in context.text
        assert "<bash-stderr>from-stderr</bash-stderr>" in context.text
        assert "Bash !pwd" in screen_text(app)  # the chat's row, marked as the user's
        assert not app.events_of("ToolCallRequested") and not app.events_of("TurnStarted")  # not the model's
        await type_prompt(pilot, "what did it say?")
        await turn_over(pilot, app)
        first = session.agent.client.requests[0].messages
        texts = [getattr(block, "text", "") for message in first for block in message.content]
        assert any("<bash-stdout>" in text and "calc.py" in text for text in texts)
        assert texts[-1] == "what did it say?"
        assert not any(getattr(block, "type", "") == "tool_use" for m in first for block in m.content)


async def test_esc_stops_a_long_command_and_what_it_started(tmp_path, monkeypatch):
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, [{"text": "ok"}]))
    tag = marker()
    async with app.run_test(size=(140, 40)) as pilot:
        await started(pilot)
        await pilot.press(*f"!sleep {tag} & sleep {tag}", "enter")
        await wait_until(pilot, lambda: len(with_marker(tag)) >= 2, "both sleeps to run")
        assert app.controls.busy
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.events_of("UserMessage"), "the command to end")
        assert wait_gone(tag) == {}  # the shell and both sleeps, the one in the background too
        [row] = app.main.table.rows.rows
        assert row.state == "cancelled"
        assert "[interrupted by the user]" in app.events_of("UserMessage")[0].text
