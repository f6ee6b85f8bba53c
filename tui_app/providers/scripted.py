"""A deterministic model that plays a script, streaming like a network provider.

Script format (docs/architecture.md §9):

    {"steps": [{"text": "Reading the files.",
                "tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": "a.py"}}],
                "expect": ["words", "the last tool results must contain"]},
               {"text": "Done."}]}

Each step is one model response, consumed in order after the previous step's tool results. Text
streams in small deltas, each tool call as start → input-JSON deltas → stop, then the stop reason
and a usage estimate, so the whole runtime sees what a real provider would send. A tool call may
give `"input_json"` (raw text, possibly invalid) instead of `"input"`.

A compaction request (the model asked for a summary of the conversation) consumes the next step
like any other: its text is the summary. A step's `"usage"` replaces the estimate (tests of
compaction fix the token counts with it). Subagents play their own steps: `"agents"` maps an Agent
call's `description` to the steps of the subagent it starts:

    {"steps": [...], "agents": {"find callers": [{"text": "…", "tool_calls": [...]}, {"text": "final answer"}]}}
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tui_app.runtime.messages import Message, MessageHistory, ToolResultBlock, content_text
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
    #: what the step reports as usage instead of the estimate
    usage: dict[str, int] | None = None


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")

    steps: list[ScriptedStep]
    #: pause between deltas
    chunk_delay_ms: int = 0
    model: str = "scripted"
    #: what the model says when it is asked again after its last step
    after_the_end: str = EXHAUSTED_TEXT
    #: an Agent call's description → the steps of the subagent it starts
    agents: dict[str, list[ScriptedStep]] = Field(default_factory=dict)


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
        self._menu: tuple[Any, int] | None = None
        #: (the conversation's list, how many of its messages were counted, their JSON length)
        self._counted: tuple[list[Message], int, int] | None = None

    @property
    def exhausted(self) -> bool:
        return self.position >= len(self.script.steps)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return self._stream(request)

    def for_agent(self, description: str) -> ScriptedModel:
        """The model of a subagent started by an Agent call with this description: its steps
        are the script's `agents[description]`, played from the first each time."""
        steps = self.script.agents.get(description)
        script = self.script.model_copy(update={
            "steps": list(steps or []), "agents": {},
            "after_the_end": self.script.after_the_end if steps is not None else (
                f"(The script has no steps for a subagent described {description!r}: add them under \"agents\".)")})
        return ScriptedModel(script, self.chunk_chars)

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
        for n, call in enumerate(step.tool_calls, 1):
            call_id = call.id or f"toolu_s{number:02d}_{n:02d}"
            yield ToolUseStart(index, call_id, call.name)
            raw = call.input_json if call.input_json is not None else json.dumps(
                {} if call.input is None else call.input, ensure_ascii=False)
            for piece in _chunks(raw, self.chunk_chars * 2):
                await self._pause(delay)
                yield ToolInputDelta(index, piece)
            yield BlockStop(index)
            index += 1
        stop = step.stop_reason or ("tool_use" if step.tool_calls else "end_turn")
        if step.usage is not None:
            yield StepStop(stop, dict(step.usage))
            return
        # like a provider's count, the whole request: what compaction watches fill the window
        out_tokens = max(1, (len(step.text) + sum(len(json.dumps(c.input)) for c in step.tool_calls)) // 4)
        yield StepStop(stop, {"input_tokens": self._request_tokens(request), "output_tokens": out_tokens})

    def _request_tokens(self, request: ModelRequest) -> int:
        if self._menu is None or self._menu[0] is not request.tools:
            self._menu = (request.tools, len(json.dumps([t.model_dump() for t in request.tools])))
        return max(1, (len(request.system) + self._menu[1] + self._messages_chars(request.messages)) // 4)

    def _messages_chars(self, messages: Sequence[Message]) -> int:
        """The JSON length of every message, counted once: a request's history is the previous
        one's plus what followed (summing it again every step made a long run quadratic)."""
        base = messages.base if isinstance(messages, MessageHistory) else None
        done, chars = 0, 0
        if base is not None and self._counted is not None and self._counted[0] is base \
                and self._counted[1] <= len(messages):
            _, done, chars = self._counted
        for index in range(done, len(messages)):
            chars += len(messages[index].model_dump_json())
        if base is not None:
            self._counted = (base, len(messages), chars)
        return chars


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
