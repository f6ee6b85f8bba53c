"""The interface between the turn loop and a model provider.

A provider turns a `ModelRequest` into a stream of `StreamEvent`s shaped like a real streaming
API: text deltas, a tool call's start, its input-JSON deltas, the block's end, and the step's stop
reason with usage. Network providers and the scripted model produce exactly the same stream, so
the whole runtime is exercised without a network.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tui_app.runtime.messages import Message, ToolDefinition


@dataclass(frozen=True)
class ModelRequest:
    system: str
    messages: Sequence[Message]
    tools: list[ToolDefinition]
    max_tokens: int = 8192
    #: "step" (the agent's next response) or "compaction" (a summary of the conversation)
    purpose: str = "step"


@dataclass(frozen=True, slots=True)
class TextDelta:
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of the model's thinking as it streams (for the screen; the block comes whole later)."""

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingBlockDone:
    index: int
    raw: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolUseStart:
    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolInputDelta:
    index: int
    partial_json: str


@dataclass(frozen=True, slots=True)
class BlockStop:
    index: int


@dataclass(frozen=True, slots=True)
class StepStop:
    stop_reason: str | None
    usage: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Retrying:
    """The provider is about to retry (429, 5xx, overloaded); the turn loop records it."""

    attempt: int
    max_attempts: int
    status: int | None
    reason: str
    wait_ms: int


StreamEvent = (TextDelta | ThinkingDelta | ThinkingBlockDone | ToolUseStart | ToolInputDelta | BlockStop | StepStop
               | Retrying)


class ModelError(Exception):
    """A model request that failed for good (after retries), or a stream that broke."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class ModelClient(Protocol):
    provider: str
    model: str
    supports_images: bool

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...
