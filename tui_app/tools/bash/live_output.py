"""A command's output as it arrives, turned into a bounded, rate-limited stream of progress events.

Bytes are decoded per stream with an incremental UTF-8 decoder (a character split across two reads
stays whole; invalid bytes become U+FFFD), coalesced, neutralised for the terminal (colours kept),
and handed to the ProgressSink at most `rate` events a second: a flush sends one event per run of
one stream, or, when the streams alternated more often than that since the last flush, one event
per stream; after sending k events it waits k/rate. The live view thus keeps the arrival order to
within one flush; the final display keeps it exactly. Events are written to the session log, so
only the first `budget` bytes go out this way, then one note; the full output is in the artifact.
"""

from __future__ import annotations

import asyncio
import codecs
import re

from tui_app.runtime.contract import ProgressSink
from tui_app.runtime.results.sanitize import neutralize
from tui_app.runtime.results.serialize import cut_head_bytes
from tui_app.tools.bash.shell_run import Stream

STREAMS: tuple[Stream, ...] = ("stdout", "stderr")
DEFAULT_BUDGET = 150_000
DEFAULT_RATE = 30.0
# an escape sequence cut off at the end of a read: held back until the rest arrives
_INCOMPLETE_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[P^_X][^\x1b]*|[ -/]*)$")
_ESCAPE_HOLD_MAX = 256


def split_incomplete_escape(text: str) -> tuple[str, str]:
    """(ready, held): `held` is a trailing escape sequence that is not finished yet."""
    window = text[-_ESCAPE_HOLD_MAX:]
    match = _INCOMPLETE_ESCAPE.search(window)
    if match is None:
        return text, ""
    cut = len(text) - len(window) + match.start()
    return text[:cut], text[cut:]


def _by_stream(runs: list[tuple[Stream, list[str]]]) -> list[tuple[Stream, list[str]]]:
    """One run per stream, in order of first appearance: what keeps a flush to two events when
    the streams alternate faster than the flush rate (the final display keeps the exact order)."""
    merged: dict[Stream, list[str]] = {}
    for stream, parts in runs:
        merged.setdefault(stream, []).extend(parts)
    return list(merged.items())


def new_decoders() -> dict[Stream, codecs.IncrementalDecoder]:
    return {s: codecs.getincrementaldecoder("utf-8")(errors="replace") for s in STREAMS}


class LiveOutput:
    def __init__(self, sink: ProgressSink | None, *, budget: int = DEFAULT_BUDGET, rate: float = DEFAULT_RATE,
                 note: str = "") -> None:
        self.sink = sink
        self.budget = budget
        self.rate = rate
        self.note = note or f"[live output stops after {budget} bytes; the full output is kept in an artifact]"
        self.events = 0
        self._decoders = new_decoders()
        self._pending: list[tuple[Stream, list[str]]] = []
        self._carry: dict[Stream, str] = dict.fromkeys(STREAMS, "")
        self._accepted = 0
        self._full = sink is None
        self._note_due = False
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._next_at = 0.0

    def feed(self, stream: Stream, data: bytes) -> None:
        if not self._full:
            self._add(stream, self._decoders[stream].decode(data))

    def _add(self, stream: Stream, text: str) -> None:
        if not text:
            return
        size = len(text.encode("utf-8"))
        room = self.budget - self._accepted
        if size > room:
            text = cut_head_bytes(text, room)
            self._full = self._note_due = True
            size = room
        self._accepted += size
        if self._pending and self._pending[-1][0] == stream:
            self._pending[-1][1].append(text)
        else:
            self._pending.append((stream, [text]))
        if self._timer is None:
            delay = max(0.0, self._next_at - self._loop.time())
            self._timer = self._loop.call_later(delay, self.flush)

    def flush(self, final: bool = False) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        runs, self._pending = self._pending, []
        if len(runs) > len(STREAMS):
            runs = _by_stream(runs)
        sent = 0
        for stream, parts in runs:
            text = self._carry[stream] + "".join(parts)
            text, self._carry[stream] = (text, "") if final else split_incomplete_escape(text)
            sent += self._send(stream, text)
        if final:
            for stream in STREAMS:
                sent += self._send(stream, self._carry[stream])
                self._carry[stream] = ""
        if self._note_due and self.sink is not None:
            self.sink.message(self.note)
            self._note_due = False
            sent += 1
        self.events += sent
        self._next_at = self._loop.time() + max(1, sent) / self.rate

    def _send(self, stream: Stream, text: str) -> int:
        shown = neutralize(text, keep_sgr=True) if text else ""
        if not shown or self.sink is None:
            return 0
        self.sink.output(shown, stream)
        return 1

    def close(self) -> None:
        """Send what is left (also the last bytes of a character the decoder was holding)."""
        if not self._full:
            for stream in STREAMS:
                self._add(stream, self._decoders[stream].decode(b"", final=True))
        self.flush(final=True)
