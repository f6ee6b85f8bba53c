"""A deterministic model that plays a script, streaming like a network provider.

Script format (DESIGN §9):

    {"steps": [{"text": "Reading the files.",
                "tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": "a.py"}}],
                "expect": ["words", "the last tool results must contain"]},
               {"text": "Done."}]}

Each step is one model response, consumed in order after the previous step's tool results. Text
streams in small deltas, each tool call as start → input-JSON deltas → stop, then the stop reason
and a usage estimate, so the whole runtime sees what a real provider would send. A tool call may
give `"input_json"` (raw text, possibly invalid) instead of `"input"`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tui_app.runtime.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, content_text
from tui_app.runtime.model import (
    BlockStop,
    ModelError,
    ModelRequest,
    StepStop,
    StreamEvent,
    TextDelta,
    ThinkingBlockDone,
    ThinkingDelta,
    ToolInputDelta,
    ToolUseStart,
)

EXHAUSTED_TEXT = "(The script has no more steps.)"


class ScriptedCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    name: str
    input: Any = None
    input_json: str | None = None


class ScriptedStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = ""
    thinking: str | None = None
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    expect: list[str] = Field(default_factory=list)
    stop_reason: str | None = None
    #: pause before this step's first delta (the demo uses it to look like a real model)
    delay_ms: int = 0


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")

    steps: list[ScriptedStep]
    #: pause between deltas
    chunk_delay_ms: int = 0
    model: str = "scripted"
    #: what the model says when it is asked again after its last step
    after_the_end: str = EXHAUSTED_TEXT


class ScriptError(ValueError):
    pass


def load_script(path: str | Path) -> Script:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read script {path}: {exc.strerror or exc}") from None
    try:
        return Script.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ScriptError(f"invalid script {path}: {where}: {first['msg']}") from None


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class ScriptedModel:
    provider = "scripted"
    supports_images = False

    def __init__(self, script: Script, chunk_chars: int = 24) -> None:
        self.script = script
        self.model = script.model
        self.chunk_chars = chunk_chars
        self.position = 0
        self.requests: list[ModelRequest] = []

    @property
    def exhausted(self) -> bool:
        return self.position >= len(self.script.steps)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return self._stream(request)

    async def _pause(self, ms: int) -> None:
        if ms > 0:
            await asyncio.sleep(ms / 1000)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if self.exhausted:
            yield TextDelta(0, self.script.after_the_end)
            yield BlockStop(0)
            yield StepStop("end_turn", {"input_tokens": 0, "output_tokens": 0})
            return
        step = self.script.steps[self.position]
        number = self.position + 1
        self.position += 1
        check_expectations(step, number, request)
        await asyncio.sleep(step.delay_ms / 1000)  # a response never arrives synchronously
        delay = self.script.chunk_delay_ms
        index = 0
        if step.thinking:
            for piece in _chunks(step.thinking, self.chunk_chars):
                await self._pause(delay)
                yield ThinkingDelta(index, piece)
            yield ThinkingBlockDone(index, {"type": "thinking", "thinking": step.thinking, "signature": "scripted"})
            index += 1
        if step.text:
            for piece in _chunks(step.text, self.chunk_chars):
                await self._pause(delay)
                yield TextDelta(index, piece)
            yield BlockStop(index)
            index += 1
        out_chars = len(step.text)
        for n, call in enumerate(step.tool_calls, 1):
            call_id = call.id or f"toolu_s{number:02d}_{n:02d}"
            yield ToolUseStart(index, call_id, call.name)
            raw = call.input_json if call.input_json is not None else json.dumps(
                {} if call.input is None else call.input, ensure_ascii=False)
            out_chars += len(raw)
            for piece in _chunks(raw, self.chunk_chars * 2):
                await self._pause(delay)
                yield ToolInputDelta(index, piece)
            yield BlockStop(index)
            index += 1
        stop = step.stop_reason or ("tool_use" if step.tool_calls else "end_turn")
        # a rough estimate from the newest message only: a real count is the provider's business,
        # and summing the whole history would make every step cost more than the last
        in_tokens = max(1, message_chars(request.messages[-1]) // 4) if request.messages else 1
        yield StepStop(stop, {"input_tokens": in_tokens, "output_tokens": max(1, out_chars // 4)})


def message_chars(message: Message) -> int:
    """About how long a message is, without serialising it (that cost more than the step)."""
    total = 0
    for block in message.content:
        if isinstance(block, TextBlock):
            total += len(block.text)
        elif isinstance(block, ToolResultBlock):
            total += len(content_text(block.content))
        elif isinstance(block, ToolUseBlock):
            total += len(block.name) + len(str(block.input))
        else:
            total += 64
    return total


def last_tool_results_text(request: ModelRequest) -> str:
    for message in reversed(request.messages):
        if message.role == "user":
            results = [b for b in message.content if isinstance(b, ToolResultBlock)]
            if results:
                return "\n".join(content_text(b.content) for b in results)
    return ""


def check_expectations(step: ScriptedStep, number: int, request: ModelRequest) -> None:
    if not step.expect:
        return
    seen = last_tool_results_text(request)
    missing = [word for word in step.expect if word not in seen]
    if missing:
        raise ModelError(
            f"Scripted step {number} expected {', '.join(repr(w) for w in missing)} in the last tool results"
        )
