"""Headless runs (`vigil -p`): one turn, printed as text, json, stream-json or raw events."""

from __future__ import annotations

import sys
import time
from typing import IO

from tui_app.agents.slash_commands import expand_prompt
from tui_app.headless.stream_json import OutputFormat, Transcript
from tui_app.runtime.session import Session


async def run_headless(session: Session, prompt: str, fmt: OutputFormat, out: IO[str] | None = None) -> int:
    out = out or sys.stdout
    transcript = Transcript(session, fmt, out)
    session.subscribe(transcript.on_event)
    began = time.perf_counter()
    commands = session.services.get("slash_commands")
    if commands is not None:  # `-p "/review src"` runs the custom command's prompt
        prompt, _ = expand_prompt(prompt, commands)
    await session.start()
    transcript.init_line()
    try:
        turn = await session.run_turn(prompt)
    finally:
        await session.close()
    result = transcript.result_object(turn, int((time.perf_counter() - began) * 1000))
    if fmt in ("stream-json", "json"):
        transcript.write(result)
    elif fmt == "text":
        if turn.text:
            out.write(turn.text.rstrip("\n") + "\n")
        if result["is_error"]:
            sys.stderr.write(f"vigil: {result['errors'][0]}\n")
    return 1 if result["is_error"] else 0
