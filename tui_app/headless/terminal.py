"""What Vigil prints must be inert in a terminal, and a reader that goes away must not crash it.

Text for people goes through `neutralize` (escape sequences and control characters removed).
JSON lines are built with `json_line`: `json.dumps` escapes C0 controls but leaves DEL and the C1
range (U+0080–U+009F; U+009B is a one-character CSI to many terminals) and the line separators
raw when `ensure_ascii` is off; those are written as `\\uXXXX` escapes here, which is the same JSON.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

_RAW_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029]")
#: the exit code of a process whose output was closed under it (as if killed by SIGPIPE)
EXIT_OUTPUT_CLOSED = 141


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def terminal_safe_json(text: str) -> str:
    """JSON text (from any serialiser) with the characters a terminal may act on escaped."""
    return _RAW_IN_JSON.sub(_escape, text)


def json_line(obj: Any) -> str:
    return terminal_safe_json(json.dumps(obj, ensure_ascii=False))


def silence_stdout() -> None:
    """stdout was closed by its reader (`vigil sessions | head -2`): point it at /dev/null so the
    interpreter's last flush at exit cannot fail again and print a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
