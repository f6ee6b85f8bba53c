"""Ending on a signal within a bound, whatever state the process is in.

SIGTERM (or a hang-up) starts a shutdown: from then on the children get a short grace between
TERM and KILL instead of a tool's usual one, and a hard deadline is armed with `faulthandler`,
whose watchdog is a C thread that needs no interpreter lock: even a thread stuck in one long C
call (a regular expression, a hash) cannot keep the process alive past it. The deadline writes
the threads' stacks to `report` (stderr in a terminal run, nowhere in the TUI) and `_exit`s;
the reaper then ends whatever children are left.
"""

from __future__ import annotations

import faulthandler
import os
from typing import IO, Any

#: from the signal to the process being gone, at the latest
DEADLINE_S = 4.5
#: TERM → KILL for children once shutting down (a tool's own grace can be 6 s)
SHUTDOWN_GRACE_S = 1.0

_state: dict[str, Any] = {"active": False, "devnull": None}


def begin(deadline_s: float = DEADLINE_S, report: IO[Any] | None = None) -> None:
    """Start shutting down (idempotent): short graces, and a hard deadline."""
    if _state["active"]:
        return
    _state["active"] = True
    if report is None:
        if _state["devnull"] is None:
            _state["devnull"] = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
        report = _state["devnull"]
    try:
        faulthandler.dump_traceback_later(deadline_s, exit=True, file=report)
    except (ValueError, OSError, RuntimeError):
        pass  # no usable file: the short graces still apply


def cancel() -> None:
    """The signal was handled and the process goes on (an embedding program, a test)."""
    if _state["active"]:
        _state["active"] = False
        faulthandler.cancel_dump_traceback_later()


def active() -> bool:
    return bool(_state["active"])


def grace(seconds: float) -> float:
    """A TERM → KILL grace, shortened while shutting down."""
    return min(seconds, SHUTDOWN_GRACE_S) if _state["active"] else seconds
