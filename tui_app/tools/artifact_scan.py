"""Reading an artifact's lines: a page from a line on, or the lines matching a regular expression
with context. Standard library only, and runnable as a script (`python -I -S artifact_scan.py`,
a JSON request on stdin, the JSON view on stdout), so ReadArtifact runs it in a process of its
own: a search over a gigabyte, or a regular expression that backtracks for ever, ends the moment
the call is cancelled or times out (the process is killed), and never holds Vigil's interpreter.

The file is streamed, never loaded: a page of a 1 GB log costs a page of memory, and a line of
any length costs at most LINE_READ_BYTES. Binary or invalid UTF-8 bytes are decoded with
replacement characters.
"""

from __future__ import annotations

import json
import re
import sys
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import BinaryIO

MAX_LINE_CHARS = 2000
LINE_CUT_MARKER = f" … [line cut at {MAX_LINE_CHARS} characters]"
# a line is read at most this far; a longer one is shown cut and its rest skipped
LINE_READ_BYTES = 65536
SCAN_CHUNK = 1 << 20


# ---- reading lines ---------------------------------------------------------------------------------

def read_line(f: BinaryIO) -> bytes | None:
    """The next line (at most LINE_READ_BYTES of it; the rest of a longer one is skipped)."""
    line = f.readline(LINE_READ_BYTES)
    if not line:
        return None
    if len(line) == LINE_READ_BYTES and not line.endswith(b"\n"):
        while True:
            more = f.readline(LINE_READ_BYTES)
            if not more or more.endswith(b"\n"):
                break
    return line


def decode_line(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").rstrip("\n")
    return text[:-1] if text.endswith("\r") else text


def shown(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + LINE_CUT_MARKER


def count_lines(f: BinaryIO) -> int:
    f.seek(0)
    count, last = 0, b"\n"
    while chunk := f.read(SCAN_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)


def seek_line(f: BinaryIO, line: int) -> None:
    """Position `f` at the start of 1-based `line` (the caller knows it exists)."""
    f.seek(0)
    need, pos = line - 1, 0
    while need > 0:
        chunk = f.read(SCAN_CHUNK)
        if not chunk:
            return
        found = chunk.count(b"\n")
        if found < need:
            need -= found
            pos += len(chunk)
            continue
        index = -1
        for _ in range(need):
            index = chunk.index(b"\n", index + 1)
        f.seek(pos + index + 1)
        return


# ---- pages and matches -------------------------------------------------------------------------------

@dataclass
class View:
    lines: list[str] = field(default_factory=list)
    first: int = 0
    last: int = 0
    matches: int = 0
    #: the scan stopped before the end (limit or page size reached)
    stopped: bool = False


def page(f: BinaryIO, start: int, limit: int, page_bytes: int) -> View:
    seek_line(f, start)
    view = View(first=start, last=start - 1)
    size = 0
    for number in range(start, start + limit):
        raw = read_line(f)
        if raw is None:
            return view
        line = f"{number:>6}\t{shown(decode_line(raw))}"
        size += len(line.encode("utf-8")) + 1
        if size > page_bytes and view.lines:
            view.stopped = True
            return view
        view.lines.append(line)
        view.last = number
    view.stopped = True
    return view


def search(f: BinaryIO, start: int, regex: re.Pattern[str], limit: int, context: int, page_bytes: int) -> View:
    """grep -n -C: matches as `   12:line`, context as `   11-line`, `--` between groups."""
    seek_line(f, start)
    view = View(first=start, last=start - 1)
    before: deque[tuple[int, str]] = deque(maxlen=context)
    after = 0
    printed = start - 1  # the last line number already shown
    size = 0

    def emit(number: int, text: str, mark: str) -> bool:
        nonlocal printed, size
        if view.lines and number > printed + 1:
            view.lines.append("--")
        line = f"{number:>6}{mark}{shown(text)}"
        size += len(line.encode("utf-8")) + 4
        view.lines.append(line)
        printed = number
        return size <= page_bytes

    number = start - 1
    while (raw := read_line(f)) is not None:
        number += 1
        view.last = number
        text = decode_line(raw)
        if regex.search(text):
            if view.matches >= limit:
                view.last = number - 1
                view.stopped = True
                return view
            for n, t in before:
                if n > printed:
                    emit(n, t, "-")
            before.clear()
            view.matches += 1
            fits = emit(number, text, ":")
            after = context
            if not fits:
                view.stopped = True
                return view
        elif after > 0:
            after -= 1
            emit(number, text, "-")
        else:
            before.append((number, text))
    return view



# ---- as a process ----------------------------------------------------------------------------------

def scan(request: dict) -> dict:
    """One ReadArtifact read: {"path", "start", "limit", "page_bytes", "pattern"?, "context"?,
    "total"?} → {"total", "view"}. `total` is counted when the caller does not know it."""
    with open(request["path"], "rb") as f:
        total = request.get("total")
        if total is None:
            total = count_lines(f)
        start = request["start"]
        if total == 0 or start > total:
            return {"total": total, "view": None}
        if request.get("pattern") is not None:
            view = search(f, start, re.compile(request["pattern"]), request["limit"], request.get("context") or 0,
                          request["page_bytes"])
        else:
            view = page(f, start, request["limit"], request["page_bytes"])
    return {"total": total, "view": asdict(view)}


def main() -> int:
    request = json.loads(sys.stdin.buffer.read())
    try:
        result = scan(request)
    except OSError as exc:
        result = {"error": exc.strerror or str(exc)}
    sys.stdout.write(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
