"""From a handler's RawResult to the model's content, under the tool's result budget.

Three roads (docs/architecture.md §6): within budget → inline; over budget with the `artifact` strategy → the
full text is persisted and the model gets the persisted-output envelope with a preview; the
`truncate` strategy (or a failed artifact write) → head or tail kept, and a line says so.
A failure keeps its head *and* its tail, because the error is usually the last thing printed.
Byte counts are UTF-8 bytes and no cut ever splits a character.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tui_app.runtime.contract import RawResult, ResultBudget, ToolSpec
from tui_app.runtime.events import ArtifactRef
from tui_app.runtime.messages import ImageBlock, ObservationContent, TextBlock

PREVIEW_CHARS = 2000
PERSISTED_OPEN = "<persisted-output>"
PERSISTED_CLOSE = "</persisted-output>"
#: a failure keeps 1/N of its room for the head and the rest for the tail
FAILURE_HEAD_SHARE = 4
SUMMARY_CHARS = 500

PreviewMode = Literal["head", "tail", "both"]
_SURROGATE = re.compile("[\ud800-\udfff]")


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
    #: the first line of the full text (an error's one-line message)
    summary: str = ""


# ---- bytes and characters ----------------------------------------------------------------------

def valid_unicode(text: str) -> str:
    """Text that encodes as UTF-8: lone surrogates (from a surrogateescape decode) become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def cut_head_bytes(text: str, limit: int) -> str:
    """The longest prefix whose UTF-8 encoding fits in `limit` bytes."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    # a character cut in two leaves an incomplete sequence at the end, which "ignore" drops
    return data[: max(0, limit)].decode("utf-8", errors="ignore")


def cut_tail_bytes(text: str, limit: int) -> str:
    """The longest suffix whose UTF-8 encoding fits in `limit` bytes."""
    data = text.encode("utf-8", "surrogatepass")
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


# ---- previews and the persisted-output envelope ------------------------------------------------

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


def persisted_envelope(text: str, path: str, end: PreviewMode = "head", original_bytes: int | None = None) -> str:
    """What the model gets instead of an output persisted at `path`: its size, the path and a
    preview of its head, its tail, or both (a failure)."""
    size = utf8_len(text) if original_bytes is None else original_bytes
    label = format_bytes(PREVIEW_CHARS)
    lines = [PERSISTED_OPEN, f"Output too large ({format_bytes(size)}). Full output saved to: {path}", ""]
    if end == "tail":
        preview, more = preview_tail(text)
        lines.append(f"Preview (last {label}):")
        if more:
            lines.append("...")
        lines.append(preview)
    else:
        preview, more = preview_head(text)
        lines += [f"Preview (first {label}):", preview]
        if more and end == "both":
            tail, gap = preview_tail(text[len(preview):])
            if gap:
                lines += ["...", f"Preview (last {label}):", tail]
            else:  # head and tail meet: the preview is the whole text
                lines[-1] = preview + tail
        elif more:
            lines.append("...")
    lines.append(PERSISTED_CLOSE)
    return "\n".join(lines)


# ---- truncation --------------------------------------------------------------------------------

def truncation_notice(original: int, limit: int) -> str:
    return f"[Tool output truncated by resultBudget: original {original} bytes, limit {limit} bytes]"


def omitted_marker(count: int) -> str:
    return f"\n\n[... {count} bytes omitted ...]\n\n"


def truncate_text(text: str, budget: ResultBudget) -> tuple[str, int]:
    """Keep the head (or tail) and append the notice; the whole fits in the budget."""
    limit = budget.limit_bytes
    original = utf8_len(text)
    notice = "\n\n" + truncation_notice(original, limit)
    room = max(0, limit - utf8_len(notice))
    kept = cut_tail_bytes(text, room) if budget.preview_end == "tail" else cut_head_bytes(text, room)
    out = kept + notice
    return out, utf8_len(out)


def truncate_middle(text: str, limit: int, original: int | None = None,
                    budget_limit: int | None = None) -> tuple[str, int]:
    """Keep a quarter of the room for the head and the rest for the tail, say how much of the
    middle is gone, and append the notice; the whole fits in `limit` (unless the notice alone
    does not). `original` is the size of the whole output when `text` is only its two ends;
    `budget_limit` is the limit the notice names when `limit` is what is left of it."""
    size = utf8_len(text)
    original = size if original is None else original
    notice = "\n\n" + truncation_notice(original, limit if budget_limit is None else budget_limit)
    room = max(0, limit - utf8_len(notice) - utf8_len(omitted_marker(original)))
    head = cut_head_bytes(text, min(room // FAILURE_HEAD_SHARE, size // 2))
    head_bytes = utf8_len(head)
    tail = cut_tail_bytes(text, min(room - head_bytes, size - head_bytes))
    omitted = original - head_bytes - utf8_len(tail)
    out = head + omitted_marker(omitted) + tail + notice
    return out, utf8_len(out)


def bound_text(text: str, limit: int) -> tuple[str, bool]:
    """A text within `limit` bytes: unchanged, or its head and tail (for failures and messages)."""
    if utf8_len(text) <= limit:
        return text, False
    return truncate_middle(text, limit)[0], True


def failure_text(exit_line: str, output: str, budget: ResultBudget, artifact_path: str | None = None,
                 total_bytes: int | None = None) -> str:
    """The model's text for a failed command: the exit line, then the output within the budget.

    The exit line (`Exit code 2`) is always there. A short output follows whole; a long one keeps
    its head and its tail (an error at the end of a long log is never cut away) — inside the
    persisted-output envelope when the full output was saved to `artifact_path`. `output` may be
    the head and the tail of a stream joined together (each at least the budget long) when
    `total_bytes` gives the size of the whole."""
    output = valid_unicode(output)
    exit_line = valid_unicode(exit_line).rstrip("\n")
    size = utf8_len(output) if total_bytes is None else total_bytes
    if artifact_path is not None:
        body = persisted_envelope(output, artifact_path, "both", size)
    else:
        room = max(0, budget.limit_bytes - utf8_len(exit_line) - 1)
        whole = size <= room and utf8_len(output) == size
        body = output if whole else truncate_middle(output, room, size, budget.limit_bytes)[0]
    if not body:
        return exit_line
    return f"{exit_line}\n{body}" if exit_line else body


# ---- serialisation -----------------------------------------------------------------------------

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
    return valid_unicode(text)


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:SUMMARY_CHARS]
    return ""


def serialize_result(
    spec: ToolSpec, raw: RawResult, call_id: str, sink: ArtifactSink | None = None
) -> Serialized:
    text = model_text_of(spec, raw)
    out = serialize_text(spec, raw, text, call_id, sink)
    out.summary = first_line(text)
    if raw.parts:
        images = [ImageBlock(media_type=p["media_type"], data=p["data"]) for p in raw.parts if p.get("type") == "image"]
        out.content = [TextBlock(text=out.text), *images]
    return out


def serialize_text(
    spec: ToolSpec, raw: RawResult, text: str, call_id: str, sink: ArtifactSink | None
) -> Serialized:
    budget = spec.budget
    limit = budget.limit_bytes
    original = utf8_len(text)
    # an artifact the tool streamed itself (Bash) exists whatever road the text takes
    given = raw.artifact if isinstance(raw.artifact, ArtifactRef) else None
    refs = [given] if given is not None else []
    warnings: list[str] = []
    if isinstance(raw.artifact, BaseException):  # the tool tried to stream one and the disk said no
        warnings.append(f"Could not persist the output of {spec.name} ({raw.artifact}); "
                        "the model got what fits in its budget")
    if original <= limit:
        return Serialized(text, text, original_bytes=original, sent_bytes=original, artifacts=refs,
                          warnings=warnings)
    if budget.over_budget == "artifact" and not warnings:
        ref = given
        if ref is None and sink is not None:
            try:
                ref = sink.persist_text(call_id, spec.name, text)
            except Exception as exc:  # disk full, read-only dir: the call still succeeds
                warnings.append(f"Could not persist the output of {spec.name} ({exc}); it was truncated instead")
        elif ref is None:
            warnings.append(f"No artifact store: the output of {spec.name} was truncated instead of persisted")
        if ref is not None:
            whole = max(original, ref.bytes) if given is not None else original
            if spec.format_persisted is not None:
                envelope = valid_unicode(spec.format_persisted(raw, text, ref.path))
                envelope = bound_text(envelope, limit)[0]
            else:
                end: PreviewMode = "both" if raw.is_error else budget.preview_end
                envelope = persisted_envelope(text, ref.path, end, whole)
            return Serialized(envelope, envelope, truncated=True, original_bytes=whole,
                              sent_bytes=utf8_len(envelope), strategy="artifact", artifacts=[ref])
    cut, sent = truncate_middle(text, limit) if raw.is_error else truncate_text(text, budget)
    return Serialized(cut, cut, truncated=True, original_bytes=original, sent_bytes=sent,
                      strategy="truncate", artifacts=refs, warnings=warnings)


def append_hook_context(content: ObservationContent, context: list[str]) -> ObservationContent:
    """`[Hook additional context]` then numbered entries, after the result (also on failures)."""
    if not context:
        return content
    block = "\n\n[Hook additional context]\n" + "\n".join(f"{i}. {c}" for i, c in enumerate(context, 1))
    if isinstance(content, str):
        return content + block
    return [*content, TextBlock(text=block.lstrip("\n"))]


def content_bytes(content: ObservationContent) -> int:
    """UTF-8 bytes of the text the model gets (images are counted by their providers, not here)."""
    if isinstance(content, str):
        return utf8_len(content)
    return sum(utf8_len(part.text) for part in content if isinstance(part, TextBlock))


def json_safe(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if _plain_json(value):  # looked at, not serialised: an Edit's output holds a whole file
        return value
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=str))


def _plain_json(value: Any, depth: int = 0) -> bool:
    if value is None or isinstance(value, str | int | bool):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if depth > 64:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_json(v, depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_plain_json(v, depth + 1) for v in value)
    return False
