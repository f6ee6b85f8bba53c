"""The bash_output card, built as output arrives and bounded on its own (docs/architecture.md §6).

A command may print gigabytes; its card keeps at most 150000 bytes: the first third of the limit
from the start of the output and the rest from its end, with the gap between them counted, so the
banner that says what ran and the error at the end are both on screen. The artifact holds the
rest. Text is neutralised as it comes in (SGR colours kept, every other control sequence dropped),
with a sequence cut between two chunks held back until it is whole.
"""

from __future__ import annotations

import codecs
from collections import deque
from typing import Literal

from tui_app.runtime.display import BashOutputDisplay, OutputSegment
from tui_app.runtime.results.sanitize import StreamNeutralizer
from tui_app.runtime.results.serialize import cut_head_bytes, cut_tail_bytes, utf8_len

Stream = Literal["stdout", "stderr"]
MAX_BASH_OUTPUT_BYTES = 150_000
HEAD_SHARE = 3  # the head keeps 1/HEAD_SHARE of the limit
#: an error's one-line message on its card and in the log (the model's text has its own budget)
MAX_ERROR_MESSAGE_BYTES = 20_000


class BashOutputBuffer:
    """Feed it stdout and stderr chunks in the order they arrive; `build` makes the card."""

    def __init__(self, limit: int = MAX_BASH_OUTPUT_BYTES) -> None:
        self.limit = limit
        self.head_limit = limit // HEAD_SHARE
        self.tail_limit = limit - self.head_limit
        self.total_bytes = 0
        self.omitted_bytes = 0
        self._head: list[tuple[Stream, str]] = []
        self._head_bytes = 0
        self._head_open = True
        self._tail: deque[list] = deque()  # [stream, text, bytes]
        self._tail_bytes = 0
        self._clean = {"stdout": StreamNeutralizer(keep_sgr=True), "stderr": StreamNeutralizer(keep_sgr=True)}
        self._decoders = {name: codecs.getincrementaldecoder("utf-8")("replace") for name in self._clean}
        self._closed = False

    @property
    def kept_bytes(self) -> int:
        return self._head_bytes + self._tail_bytes

    def add(self, chunk: str | bytes, stream: Stream = "stdout") -> None:
        if self._closed:
            raise ValueError("the card was already built")
        if isinstance(chunk, bytes):
            self.total_bytes += len(chunk)
            chunk = self._decoders[stream].decode(chunk)
        else:
            self.total_bytes += utf8_len(chunk)
        self._place(stream, self._clean[stream].feed(chunk))

    def _place(self, stream: Stream, text: str) -> None:
        if not text:
            return
        size = utf8_len(text)
        if self._head_open:
            room = self.head_limit - self._head_bytes
            if size <= room:
                self._head.append((stream, text))
                self._head_bytes += size
                return
            part = cut_head_bytes(text, room)
            if part:
                self._head.append((stream, part))
                self._head_bytes += utf8_len(part)
            self._head_open = False
            text = text[len(part):]
            size = utf8_len(text)
        self._tail.append([stream, text, size])
        self._tail_bytes += size
        while self._tail_bytes > self.tail_limit:
            first = self._tail[0]
            excess = self._tail_bytes - self.tail_limit
            if first[2] <= excess:
                self._tail.popleft()
                dropped = first[2]
            else:
                kept = cut_tail_bytes(first[1], first[2] - excess)
                dropped = first[2] - utf8_len(kept)
                first[1], first[2] = kept, first[2] - dropped
            self._tail_bytes -= dropped
            self.omitted_bytes += dropped

    def _close(self) -> None:
        if self._closed:
            return
        for stream in ("stdout", "stderr"):
            rest = self._decoders[stream].decode(b"", final=True)
            self._place(stream, self._clean[stream].feed(rest) + self._clean[stream].finish())
        self._closed = True

    def segments(self) -> tuple[list[OutputSegment], int | None]:
        """The kept output as merged segments, and where the gap is (None when nothing was cut)."""
        self._close()
        head = _merge(self._head)
        tail = _merge([(stream, text) for stream, text, _ in self._tail])
        if not self.omitted_bytes:
            return _merge([(s.stream, s.text) for s in head + tail]), None
        return head + tail, len(head)

    def build(self, command: str, *, exit_code: int | None = None, duration_ms: int = 0,
              interrupted: bool = False, timed_out: bool = False, artifact_uri: str | None = None,
              background_task_id: str | None = None, truncated: bool = False) -> BashOutputDisplay:
        segments, gap_at = self.segments()
        return BashOutputDisplay(
            command=command, segments=segments, exit_code=exit_code, duration_ms=duration_ms,
            interrupted=interrupted, timed_out=timed_out, total_bytes=self.total_bytes,
            truncated=truncated or self.omitted_bytes > 0, omitted_bytes=self.omitted_bytes, gap_at=gap_at,
            artifact_uri=artifact_uri, background_task_id=background_task_id,
        )


def _merge(pieces: list[tuple[Stream, str]]) -> list[OutputSegment]:
    merged: list[list] = []
    for stream, text in pieces:
        if not text:
            continue
        if merged and merged[-1][0] == stream:
            merged[-1][1].append(text)
        else:
            merged.append([stream, [text]])
    return [OutputSegment(stream=stream, text="".join(texts)) for stream, texts in merged]


def bash_output_display(command: str, stdout: str | bytes = "", stderr: str | bytes = "",
                        limit: int = MAX_BASH_OUTPUT_BYTES, **fields: object) -> BashOutputDisplay:
    """A card for output that was collected whole (stdout first, then stderr)."""
    buffer = BashOutputBuffer(limit)
    buffer.add(stdout, "stdout")
    buffer.add(stderr, "stderr")
    return buffer.build(command, **fields)  # type: ignore[arg-type]
