"""A session's transcript as Markdown: what was asked, said and done, from its event log.

Tool output is quoted in fences long enough that nothing inside can close them, and stripped of
terminal control sequences, so the file reads the same in any viewer.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from typing import Any

from tui_app.runtime.messages import content_text, thinking_text
from tui_app.runtime.results.sanitize import neutralize

MAX_RESULT_LINES = 40


def fence(text: str, info: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    ticks = "`" * (longest + 1)
    return f"{ticks}{info}\n{text.rstrip()}\n{ticks}"


def _clip(text: str, lines: int = MAX_RESULT_LINES) -> str:
    rows = text.splitlines()
    if len(rows) <= lines:
        return text
    return "\n".join(rows[:lines]) + f"\n… ({len(rows) - lines} more lines)"


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else ""


def transcript_markdown(events: Iterable[Any]) -> str:
    out: list[str] = []
    calls: dict[str, Any] = {}
    for event in events:
        kind = event.type
        if kind == "SessionStarted":
            out.append(f"# Vigil session {event.session_id}\n")
            out.append(f"- Started: {_when(event.ts)}\n- Directory: `{event.cwd}`\n"
                       f"- Model: {event.provider} / {event.model}\n- Permission mode: {event.permission_mode}\n")
        elif kind == "UserMessage":
            who = {"user": "You", "hook": "Hook context", "stop_hook": "Stop hook", "attachment": "Attached file",
                   "shell": "You ran (shell)"}.get(event.source, "You")
            out.append(f"## {who}\n\n{neutralize(event.text)}\n")
        elif kind == "AssistantText":
            out.append(f"## Assistant\n\n{neutralize(event.text)}\n")
        elif kind == "AssistantThinking":
            out.append(_thinking_section(event.raw))
        elif kind == "ToolCallRequested":
            calls[event.call_id or ""] = event
        elif kind in ("ToolCallResult", "ToolCallError"):
            out.append(_call_section(calls.get(event.call_id or ""), event))
        elif kind == "TurnEnded" and event.reason != "completed":
            out.append(f"> Turn ended: {event.reason}{': ' + event.message if event.message else ''}\n")
    return "\n".join(out).rstrip() + "\n"


def _thinking_section(raw: dict[str, Any]) -> str:
    text = thinking_text(raw)
    if text is None:
        return "> *Thinking (redacted by the provider)*\n"
    quoted = "\n".join(f"> {line}" if line else ">" for line in neutralize(text).strip().splitlines())
    return f"> *Thinking*\n>\n{quoted}\n"


def _call_section(requested: Any, outcome: Any) -> str:
    name = requested.name if requested else outcome.tool
    ok = outcome.type == "ToolCallResult"
    status = "done" if ok else f"{outcome.code} ({outcome.phase})"
    lines = [f"### {name} — {status}\n"]
    if requested is not None:
        import json

        lines.append(fence(json.dumps(requested.input, indent=2, ensure_ascii=False), "json"))
    text = neutralize(content_text(outcome.model_content))
    lines.append("\nResult (as the model received it):\n")
    lines.append(fence(_clip(text)))
    for ref in getattr(outcome, "artifacts", []) or []:
        lines.append(f"\nFull output: `{ref.path}` ({ref.bytes} bytes)")
    return "\n".join(lines) + "\n"
