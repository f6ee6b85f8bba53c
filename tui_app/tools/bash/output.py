"""Everything a shell call prints, at any size, with memory that stays flat.

Each chunk goes, in arrival order, to three places: the artifact (every byte, unchanged: opened the
moment the output outgrows what the model may see, and fed from then on), a bounded window of the
latest bytes (the display and the model's tail), and the live progress stream. The first few KB
are kept too, so a failure can show the head as well as the tail.

Output that fits in memory stays there and creates no artifact at all.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from tui_app.runtime.contract import ProgressSink
from tui_app.runtime.display import OutputSegment
from tui_app.runtime.events import ArtifactRef
from tui_app.runtime.results import budgets
from tui_app.runtime.results.sanitize import neutralize
from tui_app.runtime.results.serialize import cut_tail_bytes, utf8_len
from tui_app.tools.bash.live_output import LiveOutput, new_decoders
from tui_app.tools.bash.shell_run import Stream

MODEL_BUDGET = budgets.BASH.limit_bytes
DISPLAY_BUDGET = 150_000
HEAD_BYTES = 4096

Chunk = tuple[Stream, bytes | memoryview]


def reason_of(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def skip_continuation(data: bytes) -> bytes:
    """Drop the tail end of a character whose first bytes were cut away (at most 3 bytes)."""
    start = 0
    while start < min(3, len(data)) and 0x80 <= data[start] <= 0xBF:
        start += 1
    return data[start:]


def decode_chunks(chunks: Iterable[Chunk], cut_at_start: bool = False, final: bool = True) -> list[tuple[Stream, str]]:
    """Per-stream incremental decoding, so stdout and stderr interleaving never splits a character."""
    decoders = new_decoders()
    seen: set[str] = set()
    out: list[tuple[Stream, str]] = []
    last: dict[Stream, int] = {}
    for stream, chunk in chunks:
        data = bytes(chunk)
        if cut_at_start and stream not in seen:
            data = skip_continuation(data)
        seen.add(stream)
        last[stream] = len(out)
        out.append((stream, decoders[stream].decode(data)))
    if final:
        for stream, index in last.items():
            # an unfinished character at a stream's very end belongs after its last piece, not
            # after whatever the other stream wrote later
            rest = decoders[stream].decode(b"", final=True)
            if rest:
                out[index] = (stream, out[index][1] + rest)
    return out


def merged_segments(pieces: Iterable[tuple[Stream, str]], budget: int) -> list[OutputSegment]:
    """Neutralised display segments, adjacent runs of one stream merged, the latest `budget` bytes."""
    runs: list[list] = []
    for stream, text in pieces:
        shown = neutralize(text, keep_sgr=True)
        if not shown:
            continue
        if runs and runs[-1][0] == stream:
            runs[-1][1].append(shown)
        else:
            runs.append([stream, [shown]])
    segments = [OutputSegment(stream=s, text="".join(parts)) for s, parts in runs]
    size = sum(utf8_len(s.text) for s in segments)
    while segments and size > budget:  # replacement characters can grow binary output threefold
        first = segments[0]
        first_size = utf8_len(first.text)
        if size - first_size >= budget:
            segments.pop(0)
            size -= first_size
        else:
            kept = cut_tail_bytes(first.text, first_size - (size - budget))
            segments[0] = OutputSegment(stream=first.stream, text=kept)
            size = budget
    return segments


@dataclass
class Collected:
    total_bytes: int
    #: the window of latest output: neutralised for the screen …
    segments: list[OutputSegment]
    #: … and as decoded, per stream, for hooks and `tool_use_result`
    stdout: str
    stderr: str
    #: the whole output when it all stayed in memory
    complete_text: str | None
    head: str
    #: the last MODEL_BUDGET bytes
    tail: str
    truncated: bool
    artifact: ArtifactRef | None = None
    artifact_uri: str | None = None
    artifact_error: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def omitted_bytes(self) -> int:
        return max(0, self.total_bytes - utf8_len(self.head) - utf8_len(self.tail))


class OutputCollector:
    def __init__(self, *, artifacts: object | None, call_id: str, tool: str = "Bash",
                 progress: ProgressSink | None = None, model_budget: int = MODEL_BUDGET,
                 display_budget: int = DISPLAY_BUDGET, head_bytes: int = HEAD_BYTES) -> None:
        self.artifacts = artifacts
        self.call_id = call_id
        self.tool = tool
        self.model_budget = model_budget
        self.display_budget = max(display_budget, model_budget)
        self.head_bytes = head_bytes
        self.live = LiveOutput(progress, budget=display_budget)
        self.total = 0
        self._head: list[Chunk] = []
        self._head_size = 0
        self._tail: deque[Chunk] = deque()
        self._tail_size = 0
        self._dropped = False
        self._writer = None
        self._artifact_error: str | None = None

    # ---- while running --------------------------------------------------------------------------

    def feed(self, stream: Stream, data: bytes) -> None:
        self.total += len(data)
        if self._writer is not None:
            self._write(data)
        elif self.total > self.model_budget and self._artifact_error is None and self.artifacts is not None:
            self._open_artifact(data)
        if self._head_size < self.head_bytes:
            part = data[: self.head_bytes - self._head_size]
            self._head.append((stream, part))
            self._head_size += len(part)
        self._tail.append((stream, data))
        self._tail_size += len(data)
        self._trim()
        self.live.feed(stream, data)

    def _trim(self) -> None:
        excess = self._tail_size - self.display_budget
        while excess > 0:
            self._dropped = True
            stream, chunk = self._tail[0]
            if len(chunk) <= excess:
                self._tail.popleft()
                self._tail_size -= len(chunk)
                excess -= len(chunk)
            else:  # a view, not a copy: trimming a 256 KiB read must not copy it
                self._tail[0] = (stream, memoryview(chunk)[excess:])
                self._tail_size -= excess
                excess = 0

    def _open_artifact(self, data: bytes) -> None:
        try:
            self._writer = self.artifacts.open_writer(self.call_id, self.tool, visible_while_writing=True)  # type: ignore[attr-defined]
        except Exception as exc:
            self._artifact_error = reason_of(exc)
            return
        # nothing has been dropped yet: the window still holds every earlier byte
        for _, chunk in self._tail:
            self._write(chunk)
        self._write(data)

    def _write(self, data: bytes | memoryview) -> None:
        if self._writer is None:
            return
        try:
            self._writer.write(bytes(data) if isinstance(data, memoryview) else data)
        except Exception as exc:  # disk full: keep running, keep the window; say so in the result
            self._artifact_error = reason_of(exc)
            self._abort_writer()

    def _abort_writer(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            try:
                writer.abort()
            except Exception:
                pass

    @property
    def artifact_uri(self) -> str | None:
        return getattr(self._writer, "uri", None)

    # ---- at the end -----------------------------------------------------------------------------

    def finish(self) -> Collected:
        """Flush the live stream and publish the artifact; callable once, on every ending."""
        self.live.close()
        ref = None
        uri = self.artifact_uri
        if self._writer is not None:
            try:
                ref = self._writer.close()
            except Exception as exc:
                self._artifact_error = reason_of(exc)
                self._abort_writer()
                uri = None
            self._writer = None
        pieces = decode_chunks(self._tail, cut_at_start=self._dropped)
        window = "".join(text for _, text in pieces)
        out = Collected(
            total_bytes=self.total,
            segments=merged_segments(pieces, self.display_budget),
            stdout=cut_tail_bytes("".join(t for s, t in pieces if s == "stdout"), self.display_budget),
            stderr=cut_tail_bytes("".join(t for s, t in pieces if s == "stderr"), self.display_budget),
            complete_text=None if self._dropped else window,
            head="".join(text for _, text in decode_chunks(self._head, final=False)),
            tail=cut_tail_bytes(window, self.model_budget),
            truncated=self._dropped,
            artifact=ref, artifact_uri=uri, artifact_error=self._artifact_error,
        )
        if self._artifact_error is not None:
            out.warnings.append(f"The full output could not be saved ({self._artifact_error})")
        return out
