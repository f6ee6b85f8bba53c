"""Headless runs (`vigil -p`): one turn, printed as text, json, stream-json or raw events.

What a person must know reaches stderr in every format (the `events` format carries it in-band
too): a session log that could not be written ends the run with a non-zero exit, and an output
that could not be saved whole says so. The final text is neutralised before it reaches a
terminal: a model's escape sequences never retitle or clear the user's screen.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

from tui_app.headless.stream_json import OutputFormat, Transcript
from tui_app.headless.terminal import EXIT_OUTPUT_CLOSED
from tui_app.runtime.agent import TurnResult
from tui_app.runtime.commands import Refused, SubmitPrompt
from tui_app.runtime.events import Warning
from tui_app.runtime.log.eventlog import LOG_FAILED_CODE
from tui_app.runtime.results.sanitize import neutralize
from tui_app.runtime.session import Session

#: the exit code of a run whose session log could not be written
EXIT_LOG_FAILED = 3
#: warnings a headless user hears about on stderr whatever the output format
STDERR_WARNINGS = frozenset({LOG_FAILED_CODE, "artifact_fallback", "resumed_where_it_ran", "resumed_mode"})


def stderr_warnings(fmt: OutputFormat, err: IO[str]) -> Any:
    def on_event(event: Any) -> None:
        if isinstance(event, Warning) and event.code in STDERR_WARNINGS:
            try:
                err.write(f"vigil: warning: {neutralize(event.message)}\n")
                err.flush()
            except (BrokenPipeError, ValueError):
                pass  # nobody to tell: the log still holds the warning

    return on_event


async def run_headless(session: Session, prompt: str, fmt: OutputFormat, out: IO[str] | None = None,
                       err: IO[str] | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    transcript = Transcript(session, fmt, out)
    # nobody reads the run any more: it stops (its children with it) rather than go on unseen
    transcript.on_closed = lambda: session.interrupt("output closed")
    session.subscribe(transcript.on_event)
    session.subscribe(stderr_warnings(fmt, err))
    began = time.perf_counter()
    await session.start()
    transcript.init_line(session.controller.facts())
    try:
        if transcript.closed:
            await session.close("output closed")
            return EXIT_OUTPUT_CLOSED
        # the prompt means what it means anywhere: `/compact`, a custom command, `!cmd`, or text
        reply = await session.controller.handle(SubmitPrompt(text=prompt, client="cli"))
        work = await session.controller.wait_idle()
    finally:
        if session.log is not None:  # not closed above
            await session.close()
    if isinstance(work, TurnResult):
        turn = work
    elif isinstance(reply, Refused):
        turn = TurnResult(turn_id="", reason="error", error=reply.message)
    else:  # a local command: what it printed is the run's result
        turn = TurnResult(turn_id="", reason="completed", text=reply.output or "")
    if session.log_failure is not None and turn.reason != "error":
        turn.reason = "error"
        turn.error = f"the session log could not be written ({session.log_failure})"
    if transcript.closed:
        return EXIT_OUTPUT_CLOSED
    result = transcript.result_object(turn, int((time.perf_counter() - began) * 1000))
    if fmt in ("stream-json", "json"):
        transcript.write(result)
    elif fmt == "text":
        if turn.text:
            out.write(neutralize(turn.text).rstrip("\n") + "\n")
        if result["is_error"] and session.log_failure is None:
            err.write(f"vigil: {neutralize(str(result['errors'][0]))}\n")
    if session.log_failure is not None:
        err.write(f"vigil: stopped: the session log could not be written ({session.log_failure})\n")
        return EXIT_LOG_FAILED
    return 1 if result["is_error"] else 0
