"""The reaper: a small process that outlives Vigil by a moment, to end what Vigil started.

Run as `python -I -S reaper_process.py VIGIL_PID TOKEN` with its stdin the read end of a pipe
whose write end only Vigil holds. Standard library only (it starts in a few milliseconds and
imports nothing of Vigil). Vigil writes `+PGID` / `-PGID` lines as it starts and ends process
groups. When the pipe reaches end of file, Vigil is gone, however it died (kill -9 included): the
reaper then ends

* every group still registered (its leader checked by start time, so a reused id is left alone);
* every process whose environment carries Vigil's token (`VIGIL_REAPER=TOKEN`), which Vigil
  puts in its own environment so every child, grandchild and daemon it spawns inherits it.
  This catches what left its group (`setsid`) and what started between a spawn and its
  registration;

with TERM, then KILL whatever is left after a short grace; then it removes the sandbox's mount
point placeholders Vigil told it about (`dHEX` / `uHEX` lines, the path in hex) that are still
empty directories, and exits. It sits in its own
session, so a terminal's Ctrl-C or hang-up does not reach it, and it ignores the usual
termination signals: only the pipe tells it to act.
"""

from __future__ import annotations

import os
import signal
import sys
import time

ENV_NAME = "VIGIL_REAPER"
#: after TERM, how long processes get to exit before KILL (all of it well inside a second)
GRACE_S = 0.4
POLL_S = 0.02
MAX_SWEEPS = 20


def start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    return fields[19].decode() if len(fields) > 19 else None


def state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].split()[0].decode()


def marked(token: bytes, me: int) -> set[int]:
    """Live processes whose environment carries the token."""
    wanted = f"{ENV_NAME}=".encode() + token
    out = set()
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                env = handle.read()
        except OSError:
            continue
        if wanted in env.split(b"\0") and state(int(name)) not in (None, "Z"):
            out.add(int(name))
    return out


def signal_all(groups: dict[int, str | None], pids: set[int], number: int) -> None:
    for pgid, started in groups.items():
        now = start_time(pgid)
        if now is not None and started is not None and now != started:
            continue  # the id was given to someone else's process
        try:
            os.killpg(pgid, number)
        except OSError:
            pass
    for pid in pids:
        try:
            os.kill(pid, number)
        except OSError:
            pass


def alive_groups(groups: dict[int, str | None]) -> dict[int, str | None]:
    """The groups with a live member. From /proc, not `killpg(pgid, 0)`: a killed orphan stays a
    zombie where PID 1 does not reap, and a zombie still counts as a member for killpg."""
    if not groups:
        return {}
    live: set[int] = set()
    try:
        names = os.listdir("/proc")
    except OSError:
        return dict(groups)
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[0] != b"Z":
            live.add(int(fields[2]))
    return {pgid: started for pgid, started in groups.items() if pgid in live}


def reap(groups: dict[int, str | None], token: bytes) -> None:
    me = os.getpid()
    pids = marked(token, me)
    signal_all(groups, pids, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline:
        pids = {p for p in pids if state(p) not in (None, "Z")}
        groups = alive_groups(groups)
        if not pids and not groups:
            break
        time.sleep(POLL_S)
    for _ in range(MAX_SWEEPS):  # forks made meanwhile carry the token too: sweep until none is left
        pids |= marked(token, me)
        groups = alive_groups(groups)
        if not pids and not groups:
            return
        signal_all(groups, pids, signal.SIGKILL)
        time.sleep(POLL_S)
        pids = {p for p in pids if state(p) not in (None, "Z")}


def remove_placeholders(paths: set[bytes]) -> None:
    """Deepest first; `rmdir` only ever removes an empty directory (a user's files stay)."""
    for path in sorted(paths, key=len, reverse=True):
        try:
            os.rmdir(path)
        except OSError:
            pass


def main(argv: list[str]) -> int:
    token = argv[2].encode()
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGTSTP):
        signal.signal(number, signal.SIG_IGN)
    os.chdir("/")
    groups: dict[int, str | None] = {}
    placeholders: set[bytes] = set()
    pending = b""
    while True:
        try:
            chunk = os.read(0, 4096)
        except InterruptedError:
            continue
        except OSError:
            chunk = b""
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if line[:1] in (b"d", b"u"):
                try:
                    path = bytes.fromhex(line[1:].decode())
                except ValueError:
                    continue
                (placeholders.add if line[:1] == b"d" else placeholders.discard)(path)
                continue
            try:
                pgid = int(line[1:])
            except ValueError:
                continue
            if line[:1] == b"+":
                groups[pgid] = start_time(pgid)
            elif line[:1] == b"-":
                groups.pop(pgid, None)
    reap(groups, token)
    remove_placeholders(placeholders)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
