"""What the user approved is what runs: a command approved to run in the sandbox runs there, even
if the sandbox is switched off (a settings file edited, say) while the dialog was open."""

from __future__ import annotations

import asyncio
import dataclasses

from tests.needs import need_program
from tests.sec_kit import attack_settings, canary_root, isolate, make_canary, open_session
from tests.waiting import eventually
from tui_app.runtime.permissions.broker import ApprovalAnswer
from tui_app.runtime.pipeline import ToolCall, run_call

__all__ = ["canary_root"]  # the fixture, imported for pytest


async def test_a_command_approved_for_the_sandbox_runs_in_it_though_the_sandbox_was_switched_off_meanwhile(
        canary_root, monkeypatch):
    need_program("bwrap")
    need_program("socat")
    canary = make_canary(canary_root, attack_settings())
    isolate(monkeypatch, canary)
    session = await open_session(canary, interactive=True)
    try:
        written = canary.outside / "written-by-the-command"
        run = asyncio.ensure_future(run_call(ToolCall("c1", "Bash", {"command": f"touch {written}"}),
                                             session.call_env(None)))
        request = await eventually(lambda: next(iter(session.broker.pending()), None), "the question")
        sandbox = session.services["sandbox"]
        assert sandbox.runs_sandboxed(request.input)  # asked as a sandboxed run
        sandbox.settings = dataclasses.replace(sandbox.settings, enabled=False)
        assert session.broker.answer(request.request_id, ApprovalAnswer("allow", input_sha256=request.input_sha256))
        await asyncio.wait_for(run, 120)
        # the sandbox kept the file system outside the working directories read-only
        assert not written.exists()
    finally:
        await session.close()
