"""The session's JSONL event log: an append-only writer and a tolerant reader.

One event per line, written whole on an O_APPEND descriptor. The writer keeps the file made of
whole lines only:

* at open, a torn last line (the previous process died mid-write) is cut off, so no event ever
  follows a torn line;
* a write that fails (disk full, quota, I/O error) is truncated back to the last complete line,
  and the log is closed for good: a log with a hole in the middle would replay a different
  session. The session stops starting tools (see `Session`). What the failure was is recorded
  in `events.jsonl.incomplete` and, when room allows, as a last `Warning` line; a small reserve
  file is given back first so those few bytes fit on a full disk.

The reader skips a torn or malformed line with a warning and never fails on it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tui_app.runtime.events import Warning
from tui_app.runtime.log.format import LogDecoder, LogEncoder

#: freed when the log fails, so the failure itself can still be written down
RESERVE_BYTES = 16 * 1024
LOG_FAILED_CODE = "log_write_failed"
#: the system call that appends (tests put a failing one here where no small file system can be mounted)
_os_write = os.write
_REASONS = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk quota exceeded", errno.EFBIG: "file too large",
            errno.EIO: "I/O error", errno.EROFS: "read-only file system"}


def failure_reason(exc: BaseException) -> str:
    """A few words for `vigil sessions` and the screen: "disk full", "I/O error" …"""
    number = getattr(exc, "errno", None)
    if number in _REASONS:
        return _REASONS[number]
    return (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__).lower()


def incomplete_marker(log_path: str | Path) -> Path:
    log_path = Path(log_path)
    return log_path.with_name(log_path.name + ".incomplete")


def reserve_path(log_path: str | Path) -> Path:
    log_path = Path(log_path)
    return log_path.with_name(f".{log_path.name}.reserve")


def read_incomplete(log_path: str | Path) -> str | None:
    """Why the log stopped being written ("disk full"), or None when it did not."""
    marker = incomplete_marker(log_path)
    try:
        data = marker.read_bytes()
    except OSError:
        for empty in marker.parent.glob(f"{marker.name}.E*"):  # no room had been left for the reason
            number = getattr(errno, empty.name.rsplit(".", 1)[1], None)
            return _REASONS.get(number, "unknown reason") if isinstance(number, int) else "unknown reason"
        return None
    try:
        return str(json.loads(data).get("reason") or "unknown reason")
    except (ValueError, AttributeError):
        return "unknown reason"


class LogClosed(OSError):
    """The log failed earlier and takes no more events."""


class EventLogWriter:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        #: bytes of whole lines in the file; everything the writer adds ends at a newline
        self.size = os.fstat(self._fd).st_size
        #: bytes of a torn last line cut off at open
        self.dropped_tail = self._drop_torn_tail()
        #: the error that closed the log, if one did
        self.error: OSError | None = None
        #: the last event written whole
        self.last_seq = 0
        self._reserve()
        self._forget_failure()
        #: compact lines (log_format.py): each line may lean on the ones this writer wrote before it
        self._encoder = LogEncoder()

    def _forget_failure(self) -> None:
        """A log that is written again is whole again (the failure note stays in it as history)."""
        marker = incomplete_marker(self.path)
        with contextlib.suppress(OSError):
            marker.unlink(missing_ok=True)
            for empty in marker.parent.glob(f"{marker.name}.E*"):
                empty.unlink(missing_ok=True)

    # ---- keeping whole lines ------------------------------------------------------------------

    def _drop_torn_tail(self) -> int:
        if self.size == 0:
            return 0
        end = self._last_newline_end()
        if end == self.size:
            return 0
        dropped = self.size - end
        os.ftruncate(self._fd, end)
        self.size = end
        return dropped

    def _last_newline_end(self) -> int:
        """The offset just after the file's last newline (0 when it has none)."""
        with open(self.path, "rb") as handle:
            pos = self.size
            while pos > 0:
                start = max(0, pos - 65536)
                handle.seek(start)
                chunk = handle.read(pos - start)
                index = chunk.rfind(b"\n")
                if index >= 0:
                    return start + index + 1
                pos = start
        return 0

    def _reserve(self) -> None:
        # no room even now: the failure will say less
        with contextlib.suppress(OSError), open(reserve_path(self.path), "wb") as handle:
            handle.write(b"\0" * RESERVE_BYTES)

    def write(self, event: Any) -> None:
        if self.error is not None:
            raise LogClosed(self.error.errno, f"the session log is closed after an earlier failure "
                                              f"({failure_reason(self.error)})")
        data = self._encoder.encode(event)
        try:
            self._append(data)
        except OSError as exc:
            self.error = exc
            self._encoder.reset()  # nothing may lean on a line that is not in the file
            self._note_failure(exc, event)
            raise
        self.last_seq = getattr(event, "seq", self.last_seq)

    def _append(self, data: bytes) -> None:
        written = 0
        try:
            while written < len(data):
                written += _os_write(self._fd, data[written:])
        except OSError:
            if written:
                self._truncate_back()
            raise
        self.size += len(data)

    def _truncate_back(self) -> None:
        """Cut a partly written line off; the file ends at its last complete event again."""
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, self.size)

    def _note_failure(self, exc: OSError, event: Any) -> None:
        """Say why the log ends where it does: a marker file and, room allowing, a last line."""
        with contextlib.suppress(OSError):
            reserve_path(self.path).unlink(missing_ok=True)
        reason = failure_reason(exc)
        marker = incomplete_marker(self.path)
        record = json.dumps({"reason": reason, "error": str(exc), "errno": exc.errno, "last_seq": self.last_seq,
                             "ts": time.time()})
        try:
            marker.write_text(record + "\n", encoding="utf-8")
        except OSError:
            # no room for a byte: an empty file, whose name carries the reason, still marks it
            with contextlib.suppress(OSError):
                marker.unlink(missing_ok=True)
                marker.with_name(f"{marker.name}.{errno.errorcode.get(exc.errno or 0, 'EIO')}").touch()
        note = Warning(seq=getattr(event, "seq", 0), session_id=getattr(event, "session_id", ""), ts=time.time(),
                       code=LOG_FAILED_CODE, message=f"The session log could not be written ({reason}); it ends here.",
                       detail={"error": str(exc), "errno": exc.errno})
        with contextlib.suppress(OSError):
            self._append(note.model_dump_json().encode("utf-8") + b"\n")

    @property
    def failed(self) -> bool:
        return self.error is not None

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
            if self.error is None:
                with contextlib.suppress(OSError):
                    reserve_path(self.path).unlink(missing_ok=True)


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
