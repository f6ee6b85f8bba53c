"""A drained batch of session events made cheaper to show, without changing what it says.

A burst of text or thinking deltas or output chunks becomes one event per run: consecutive deltas of the same
text block are joined, and an output chunk is joined to the previous chunk of the same call and
stream when nothing of that call came in between. Everything else keeps its place and order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui_app.runtime.events import AssistantTextDelta, AssistantThinkingDelta, ToolCallProgress


def coalesce(events: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    #: call id → index in `out` of that call's latest event, when it is an output chunk
    last_output: dict[str, int] = {}
    for event in events:
        if isinstance(event, AssistantTextDelta | AssistantThinkingDelta):
            prev = out[-1] if out else None
            if (type(prev) is type(event) and prev.turn_id == event.turn_id
                    and prev.step == event.step and prev.index == event.index):
                out[-1] = prev.model_copy(update={"text": prev.text + event.text})
                continue
        elif isinstance(event, ToolCallProgress) and event.kind == "output" and event.call_id:
            at = last_output.get(event.call_id)
            if at is not None and out[at].stream == event.stream:
                out[at] = out[at].model_copy(update={"text": out[at].text + event.text})
                continue
            out.append(event)
            last_output[event.call_id] = len(out) - 1
            continue
        call_id = getattr(event, "call_id", None)
        if call_id is not None:
            last_output.pop(call_id, None)
        out.append(event)
    return out
