"""Server-sent events: lines in, events out (the WHATWG `text/event-stream` rules).

A blank line dispatches the event gathered so far; `data:` lines are joined with newlines; a line
starting with `:` is a comment (keep-alives); one space after the colon is not part of the value;
a field this parser does not know, or a line without a colon, is ignored, as the spec says.
Whether a `data` payload makes sense is the provider's business, not the parser's.

One deliberate difference from the spec: an event not followed by a blank line when the stream
ends is still delivered (some local servers end with `data: [DONE]` and no blank line). An event
cut mid-line by a broken connection then fails the provider's JSON parse, which is reported.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SSEEvent:
    event: str
    data: str


async def iter_sse(lines: AsyncIterable[str]) -> AsyncIterator[SSEEvent]:
    event = ""
    data: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield SSEEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if not colon:
            continue
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    if data:
        yield SSEEvent(event or "message", "\n".join(data))
