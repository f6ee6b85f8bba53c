"""The session's JSONL event log: an append-only writer and a tolerant reader.

One event per line, written with a single `write` on an O_APPEND descriptor, so a crash leaves at
worst one torn last line. The reader skips a torn or malformed line with a warning and never fails
on it; a write that fails (disk full) is reported and the next successful write starts on a fresh
line, so what was saved before stays readable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tui_app.runtime.log_format import LogDecoder, LogEncoder


class EventLogWriter:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._torn = self._ends_without_newline()
        self.failures = 0
        #: compact lines (log_format.py); it starts afresh after a failed write
        self._encoder = LogEncoder()

    def _ends_without_newline(self) -> bool:
        size = os.fstat(self._fd).st_size
        if size == 0:
            return False
        with open(self.path, "rb") as handle:
            handle.seek(size - 1)
            return handle.read(1) != b"\n"

    def write(self, event: Any) -> None:
        data = self._encoder.encode(event)
        if self._torn:
            data = b"\n" + data
        try:
            written = os.write(self._fd, data)
            while written < len(data):
                written += os.write(self._fd, data[written:])
        except OSError:
            self._encoder.reset()  # the next line must not lean on one that may be torn
            self._torn = True
            self.failures += 1
            raise
        self._torn = False

    def sync(self) -> None:
        try:
            os.fsync(self._fd)
        except OSError:
            pass

    def close(self) -> None:
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1


@dataclass
class LogRead:
    events: list[Any] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: the last line was cut short (a crash mid-write)
    torn_tail: bool = False


def read_events(path: str | Path) -> LogRead:
    result = LogRead()
    decoder = LogDecoder()
    with open(path, "rb") as handle:
        lines = handle.read().split(b"\n")
    last = len(lines) - 1
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            result.events.append(decoder.decode(line))
        except (ValidationError, ValueError) as exc:
            if number - 1 == last:
                result.torn_tail = True
                result.warnings.append(f"{path}: the last line is incomplete (a crash mid-write?); skipped it")
            else:
                reason = str(exc).splitlines()[0][:200]
                result.warnings.append(f"{path}:{number}: unreadable event skipped ({reason})")
    return result
