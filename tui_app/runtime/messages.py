"""The provider-neutral conversation: what is sent to the model, step after step.

Shaped like the Anthropic Messages API (content blocks); providers translate it to their wire
format. It is always a projection of the session's event log, never a separate truth.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Annotated, Any, Literal, overload

from pydantic import BaseModel, ConfigDict, Field


class _Block(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)  # built on first use (start-up)


class TextBlock(_Block):
    type: Literal["text"] = "text"
    text: str


class ImageBlock(_Block):
    type: Literal["image"] = "image"
    media_type: str
    data: str  # base64


class ToolUseBlock(_Block):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: Any


class ThinkingBlock(_Block):
    """Passed back to the provider byte for byte (signatures must survive)."""

    type: Literal["thinking"] = "thinking"
    raw: dict[str, Any]


def thinking_text(raw: dict[str, Any]) -> str | None:
    """The readable text of a thinking block: Anthropic's `thinking`, or the `reasoning` an
    OpenAI-compatible server streamed; None when the provider redacted it."""
    text = raw.get("thinking") if raw.get("type") == "thinking" else raw.get("text")
    return text if isinstance(text, str) else None


ResultPart = Annotated[TextBlock | ImageBlock, Field(discriminator="type")]
ObservationContent = str | list[ResultPart]


class ToolResultBlock(_Block):
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: ObservationContent
    is_error: bool = False


Block = Annotated[
    TextBlock | ImageBlock | ToolUseBlock | ThinkingBlock | ToolResultBlock, Field(discriminator="type")
]


class Message(_Block):
    role: Literal["user", "assistant"]
    content: list[Block]


class ToolDefinition(_Block):
    """One entry of the tool menu the model is shown."""

    name: str
    description: str
    input_schema: dict[str, Any]


def content_text(content: ObservationContent) -> str:
    """The text of an observation (images become a short placeholder)."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if isinstance(part, TextBlock):
            parts.append(part.text)
        else:
            parts.append(f"[image {part.media_type}]")
    return "\n".join(parts)


class MessageHistory(Sequence[Message]):
    """The first `length` messages of a conversation, without copying them.

    The builder only ever appends, so a prefix of its list never changes: a request can hold one
    for as long as it likes. Copying the history for every model step made each step cost more than
    the last, and a provider (or a test) that kept its requests kept every copy."""

    __slots__ = ("_length", "_messages")

    def __init__(self, messages: list[Message], length: int) -> None:
        self._messages = messages
        self._length = length

    def __len__(self) -> int:
        return self._length

    @property
    def base(self) -> list[Message]:
        """The list this is a prefix of (a new one after a compaction)."""
        return self._messages

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return self._messages[: self._length][index]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("message index out of range")
        return self._messages[index]

    def __iter__(self) -> Iterator[Message]:
        messages = self._messages
        for i in range(self._length):
            yield messages[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(other) == self._length and all(a == b for a, b in zip(self, other, strict=False))

    def __repr__(self) -> str:
        return f"MessageHistory({self._length} messages)"
