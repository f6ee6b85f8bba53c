"""A readable transcript for people (the demo without the TUI): text, each call and its result."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, Any

from tui_app.runtime.events import (
    AssistantText,
    ConversationCompacted,
    SubagentEnded,
    SubagentStarted,
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
        agent = getattr(event, "agent_id", None)
        # a subagent's lines are indented under its Agent call, and say whose they are
        pad = f"    [{agent}] " if agent else ""
        if isinstance(event, AssistantText):
            text = neutralize(event.text)
            out.write(f"{pad}{text.strip()[:300]}\n" if agent else f"\n{text}\n")
        elif isinstance(event, ToolCallRequested):
            shown = json.dumps(event.input, ensure_ascii=False) if not isinstance(event.input, str) else event.input
            out.write(f"{pad or '  '}→ {neutralize(event.name)} {neutralize(shown)[:150]}\n")
        elif isinstance(event, ToolCallResult | ToolCallError):
            text = neutralize(content_text(event.model_content))
            first = text.strip().splitlines()[0] if text.strip() else ""
            mark = "✓" if isinstance(event, ToolCallResult) else f"✗ {event.code}"
            out.write(f"{pad or '  '}{mark} {neutralize(event.tool)} ({len(text.splitlines())} lines) {first[:100]}\n")
        elif isinstance(event, SubagentStarted):
            out.write(f"  ⇉ subagent {event.agent_id} ({neutralize(event.subagent_type)}): "
                      f"{neutralize(event.description)}\n")
        elif isinstance(event, SubagentEnded):
            out.write(f"  ⇇ subagent {event.agent_id} {event.reason}: {event.steps} model steps, "
                      f"{event.calls} tool calls\n")
        elif isinstance(event, ConversationCompacted):
            if event.trigger == "clear":
                out.write("\n── conversation cleared ──\n")
            else:
                out.write(f"\n── conversation compacted ({event.trigger}, {event.tokens_before:,} → "
                          f"~{event.tokens_after:,} tokens) ──\n{neutralize(event.summary)}\n──\n")
        else:
            return
        out.flush()

    return on_event


def print_transcript(session: Session, out: IO[str]) -> Any:
    """The demo in a terminal without the TUI."""
    return session.subscribe(transcript_printer(out))
