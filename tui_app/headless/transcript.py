"""A readable transcript for people (the demo without the TUI): text, each call and its result."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, Any

from tui_app.runtime.events import (
    AssistantText,
    PermissionResolved,
    ToolCallError,
    ToolCallRequested,
    ToolCallResult,
)
from tui_app.runtime.messages import content_text
from tui_app.runtime.results.sanitize import neutralize
from tui_app.runtime.session import Session


def transcript_printer(out: IO[str]) -> Callable[[Any], None]:
    """A readable transcript for people: assistant text, each call and its result in one line.
    Model text and tool output are untrusted: control sequences are neutralised before printing."""

    def on_event(event: Any) -> None:
        if isinstance(event, AssistantText):
            out.write(f"\n{neutralize(event.text)}\n")
        elif isinstance(event, ToolCallRequested):
            shown = json.dumps(event.input, ensure_ascii=False) if not isinstance(event.input, str) else event.input
            out.write(f"  → {neutralize(event.name)} {neutralize(shown)[:150]}\n")
        elif isinstance(event, ToolCallResult | ToolCallError):
            text = neutralize(content_text(event.model_content))
            first = text.strip().splitlines()[0] if text.strip() else ""
            mark = "✓" if isinstance(event, ToolCallResult) else f"✗ {event.code}"
            out.write(f"  {mark} {neutralize(event.tool)} ({len(text.splitlines())} lines) {first[:100]}\n")
        elif isinstance(event, PermissionResolved) and event.decided_by == "agent":
            # an external agent's own decision, never passed off as Vigil's
            out.write(f"    {neutralize(event.reason)}\n")
        else:
            return
        out.flush()

    return on_event


def print_transcript(session: Session, out: IO[str]) -> Any:
    """The demo in a terminal without the TUI."""
    return session.subscribe(transcript_printer(out))
