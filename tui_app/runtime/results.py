"""From a handler's RawResult to the model's content, under the tool's result budget.

Three roads (DESIGN §6): within budget → inline; over budget with the `artifact` strategy → the
full text is persisted and the model gets the persisted-output envelope with a preview; the
`truncate` strategy (or a failed artifact write) → head or tail kept, and a line says so.
Byte counts are UTF-8 bytes and no cut ever splits a character.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tui_app.runtime.contract import RawResult, ResultBudget, ToolSpec
from tui_app.runtime.events import ArtifactRef
from tui_app.runtime.messages import ImageBlock, ObservationContent, TextBlock

PREVIEW_CHARS = 2000
PERSISTED_OPEN = "<persisted-output>"
PERSISTED_CLOSE = "</persisted-output>"


class ArtifactSink(Protocol):
    def persist_text(self, call_id: str, tool: str, text: str) -> ArtifactRef: ...


@dataclass
class Serialized:
    content: ObservationContent
    text: str
    truncated: bool = False
    original_bytes: int = 0
    sent_bytes: int = 0
    strategy: Literal["inline", "truncate", "artifact"] = "inline"
    artifacts: list[ArtifactRef] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def cut_head_bytes(text: str, limit: int) -> str:
    """The longest prefix whose UTF-8 encoding fits in `limit` bytes."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[: max(0, limit)].decode("utf-8", errors="ignore")


def cut_tail_bytes(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    if limit <= 0:
        return ""
    return data[-limit:].decode("utf-8", errors="ignore")


def format_bytes(count: float) -> str:
    if count < 1024:
        return f"{int(count)} bytes"
    for unit in ("KB", "MB", "GB"):
        count /= 1024
        if count < 1024 or unit == "GB":
            return f"{count:.1f}{unit}"
    raise AssertionError("unreachable")


def preview_head(text: str, chars: int = PREVIEW_CHARS) -> tuple[str, bool]:
    """First `chars` characters, cut at the last newline when that newline is in the second half."""
    if len(text) <= chars:
        return text, False
    head = text[:chars]
    cut = head.rfind("\n")
    if cut > chars // 2:
        head = head[:cut]
    return head, True


def preview_tail(text: str, chars: int = PREVIEW_CHARS) -> tuple[str, bool]:
    """Last `chars` characters, starting after the first newline when it is in the first half."""
    if len(text) <= chars:
        return text, False
    tail = text[-chars:]
    cut = tail.find("\n")
    if 0 <= cut < chars // 2:
        tail = tail[cut + 1 :]
    return tail, True


def persisted_envelope(text: str, path: str, end: str = "head", original_bytes: int | None = None) -> str:
    size = utf8_len(text) if original_bytes is None else original_bytes
    if end == "tail":
        preview, more = preview_tail(text)
        lines = [PERSISTED_OPEN,
                 f"Output too large ({format_bytes(size)}). Full output saved to: {path}", "",
                 f"Preview (last {format_bytes(PREVIEW_CHARS)}):"]
        if more:
            lines.append("...")
        lines += [preview, PERSISTED_CLOSE]
        return "\n".join(lines)
    preview, more = preview_head(text)
    lines = [PERSISTED_OPEN,
             f"Output too large ({format_bytes(size)}). Full output saved to: {path}", "",
             f"Preview (first {format_bytes(PREVIEW_CHARS)}):", preview]
    if more:
        lines.append("...")
    lines.append(PERSISTED_CLOSE)
    return "\n".join(lines)


def truncation_notice(original: int, limit: int) -> str:
    return f"[Tool output truncated by resultBudget: original {original} bytes, limit {limit} bytes]"


def truncate_text(text: str, budget: ResultBudget) -> tuple[str, int]:
    """Keep the head (or tail) and append the notice; the whole fits in the budget."""
    limit = budget.limit_bytes
    original = utf8_len(text)
    notice = "\n\n" + truncation_notice(original, limit)
    room = max(0, limit - utf8_len(notice))
    kept = cut_tail_bytes(text, room) if budget.preview_end == "tail" else cut_head_bytes(text, room)
    out = kept + notice
    return out, utf8_len(out)


def model_text_of(spec: ToolSpec, raw: RawResult) -> str:
    if spec.format_model_content is not None:
        text = spec.format_model_content(raw)
    elif raw.text is not None:
        text = raw.text
    elif isinstance(raw.output, str):
        text = raw.output
    elif raw.output is None:
        text = ""
    else:
        text = json.dumps(raw.output, ensure_ascii=False, indent=2, default=str)
    if text == "":
        text = f"({spec.name} completed with no output)"
    return text


def serialize_result(
    spec: ToolSpec, raw: RawResult, call_id: str, sink: ArtifactSink | None = None
) -> Serialized:
    text = model_text_of(spec, raw)
    out = serialize_text(spec, raw, text, call_id, sink)
    if raw.parts:
        images = [ImageBlock(media_type=p["media_type"], data=p["data"]) for p in raw.parts if p.get("type") == "image"]
        out.content = [TextBlock(text=out.text), *images]
    return out


def serialize_text(
    spec: ToolSpec, raw: RawResult, text: str, call_id: str, sink: ArtifactSink | None
) -> Serialized:
    budget = spec.budget
    original = utf8_len(text)
    if original <= budget.limit_bytes:
        return Serialized(text, text, original_bytes=original, sent_bytes=original)
    warnings: list[str] = []
    if budget.over_budget == "artifact":
        ref: ArtifactRef | None = raw.artifact if isinstance(raw.artifact, ArtifactRef) else None
        if ref is None and sink is not None:
            try:
                ref = sink.persist_text(call_id, spec.name, text)
            except Exception as exc:  # disk full, read-only dir: the call still succeeds
                warnings.append(f"Could not persist the output of {spec.name} ({exc}); it was truncated instead")
        elif ref is None:
            warnings.append("No artifact store: the output was truncated instead of persisted")
        if ref is not None:
            if spec.format_persisted is not None:
                envelope = spec.format_persisted(raw, text, ref.path)
            else:
                envelope = persisted_envelope(text, ref.path, budget.preview_end, original)
            return Serialized(envelope, envelope, truncated=True, original_bytes=original,
                              sent_bytes=utf8_len(envelope), strategy="artifact", artifacts=[ref])
    cut, sent = truncate_text(text, budget)
    return Serialized(cut, cut, truncated=True, original_bytes=original, sent_bytes=sent,
                      strategy="truncate", warnings=warnings)


def append_hook_context(content: ObservationContent, context: list[str]) -> ObservationContent:
    """`[Hook additional context]` then numbered entries, after the result (also on failures)."""
    if not context:
        return content
    block = "\n\n[Hook additional context]\n" + "\n".join(f"{i}. {c}" for i, c in enumerate(context, 1))
    if isinstance(content, str):
        return content + block
    return [*content, TextBlock(text=block.lstrip("\n"))]


def json_safe(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=str))
