"""`stream_event` lines (`--include-partial-messages`): the model's response as it streams, in the
shape of Anthropic's raw stream events (message_start, content_block_start / _delta / _stop,
message_delta, message_stop), rebuilt from the session's live events.

A tool call's input reaches the runtime whole (it is validated only once complete), so it is sent
as one `input_json_delta`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tui_app.headless.usage_report import anthropic_usage
from tui_app.runtime.events import (
    AssistantText,
    AssistantTextDelta,
    AssistantThinking,
    AssistantThinkingDelta,
    ModelStepEnded,
    ModelStepStarted,
    ToolCallRequested,
)


class PartialStream:
    def __init__(self, emit: Callable[[dict[str, Any]], None]) -> None:
        self.emit = emit
        self.open: set[int] = set()
        #: blocks of this response already closed (a late repeat of one is not reopened)
        self.done: set[int] = set()

    def on_event(self, event: Any, model: str, message_id: str) -> None:
        if isinstance(event, ModelStepStarted):
            self.open.clear()
            self.done.clear()
            self.emit({"type": "message_start", "message": {
                "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": anthropic_usage({})}})
        elif isinstance(event, AssistantTextDelta):
            self._start(event.index, {"type": "text", "text": ""})
            self._delta(event.index, {"type": "text_delta", "text": event.text})
        elif isinstance(event, AssistantText):
            if event.index not in self.open and event.index not in self.done:  # a block that came whole
                self._start(event.index, {"type": "text", "text": ""})
                self._delta(event.index, {"type": "text_delta", "text": event.text})
            self._stop(event.index)
        elif isinstance(event, AssistantThinkingDelta):
            self._start(event.index, {"type": "thinking", "thinking": "", "signature": ""})
            self._delta(event.index, {"type": "thinking_delta", "thinking": event.text})
        elif isinstance(event, AssistantThinking):
            self._start(event.index, {"type": "thinking", "thinking": "", "signature": ""})
            signature = event.raw.get("signature")
            if isinstance(signature, str) and signature:
                self._delta(event.index, {"type": "signature_delta", "signature": signature})
            self._stop(event.index)
        elif isinstance(event, ToolCallRequested):
            self._start(event.index, {"type": "tool_use", "id": event.call_id, "name": event.name, "input": {}})
            self._delta(event.index, {"type": "input_json_delta", "partial_json": json.dumps(event.input)})
            self._stop(event.index)
        elif isinstance(event, ModelStepEnded):
            for index in sorted(self.open):
                self._stop(index)
            usage = anthropic_usage(event.usage)
            self.emit({"type": "message_delta", "delta": {"stop_reason": event.stop_reason, "stop_sequence": None},
                       "usage": usage})
            self.emit({"type": "message_stop"})

    def _start(self, index: int, block: dict[str, Any]) -> None:
        if index in self.open or index in self.done:
            return
        self.open.add(index)
        self.emit({"type": "content_block_start", "index": index, "content_block": block})

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        self.emit({"type": "content_block_delta", "index": index, "delta": delta})

    def _stop(self, index: int) -> None:
        if index in self.open:
            self.open.discard(index)
            self.done.add(index)
            self.emit({"type": "content_block_stop", "index": index})
