"""The provider-neutral conversation: what is sent to the model, step after step.

Shaped like the Anthropic Messages API (content blocks); providers translate it to their wire
format. It is always a projection of the session's event log, never a separate truth.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

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
