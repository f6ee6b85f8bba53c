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

#: from the signal to the process being gone, at the latest (VIGIL_SHUTDOWN_DEADLINE_S changes it:
#: a very slow machine, or tests that must see the orderly way out however loaded the machine is)
DEADLINE_S = 4.5
#: TERM → KILL for children once shutting down (a tool's own grace can be 6 s)
SHUTDOWN_GRACE_S = 1.0

_state: dict[str, Any] = {"active": False, "devnull": None, "main": None, "cancelled": False}


def deadline_from_env() -> float:
    try:
        value = float(os.environ.get("VIGIL_SHUTDOWN_DEADLINE_S", ""))
    except ValueError:
        return DEADLINE_S
    return value if value > 0 else DEADLINE_S


def begin(deadline_s: float | None = None, report: IO[Any] | None = None) -> None:
    """Start shutting down (idempotent): short graces, and a hard deadline."""
    if _state["active"]:
        return
    if deadline_s is None:
        deadline_s = deadline_from_env()
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


def run_main(coro: Any) -> Any:
    """`asyncio.run(coro)`, with `coro`'s task known to `cancel_main`: a signal then cancels that
    task alone, and its own `finally` blocks close the session the orderly way (the turn's calls
    get their results, the log its SessionEnded). An exception raised wherever the signal landed,
    or a cancellation of every task at once, could cut that closing short or wedge it."""
    import asyncio

    async def main() -> Any:
        loop = asyncio.get_running_loop()
        _state["main"] = (loop, asyncio.current_task())
        unwake = wake_on_signals(loop)
        try:
            return await coro
        finally:
            unwake()
            _state["main"] = None

    return asyncio.run(main())


def wake_on_signals(loop: Any) -> Any:
    """Make every signal wake `loop`; returns the function that undoes it.

    Python runs signal handlers in the main thread only, but the kernel may hand a process's
    signal to any thread: to a child watcher's thread blocked in `waitpid` while the main thread
    has every signal blocked for a moment (each `vfork` of a subprocess does that). The handler
    then waits until the main thread runs Python again, and a loop asleep in `select` with no
    timer due runs nothing: a Ctrl-C in the middle of a Bash call went unanswered until the call's
    own deadline (seen in loaded test runs). With a wakeup fd the C-level handler, whichever
    thread runs it, writes to a socket the loop watches; the loop wakes and the main thread runs
    the handler. (`loop.add_signal_handler` would do the same, but `asyncio.run` installs its
    SIGINT handler with `signal.signal`, and `exiting_on_signals` runs outside the loop.)"""
    import signal
    import socket

    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)

    def drain() -> None:
        try:
            while reader.recv(4096):
                pass
        except OSError:  # empty (BlockingIOError) or closed: nothing more to read
            pass

    try:
        previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    except ValueError:  # not the main thread: its signals are not ours to route
        reader.close()
        writer.close()
        return lambda: None
    loop.add_reader(reader.fileno(), drain)

    def undo() -> None:
        current = signal.set_wakeup_fd(previous)
        if current != writer.fileno():  # not ours any more (a later `add_signal_handler`): leave theirs
            signal.set_wakeup_fd(current)
        loop.remove_reader(reader.fileno())
        reader.close()
        writer.close()

    return undo


def cancel_main() -> bool:
    """From a signal handler: cancel the task `run_main` runs (once). False when none runs."""
    main = _state["main"]
    if main is None:
        return False
    if not _state["cancelled"]:
        _state["cancelled"] = True
        loop, task = main
        loop.call_soon_threadsafe(task.cancel)
    return True
