"""Start-up: how long until Vigil answers, next to Python itself and to importing Textual.

Each contender is a fresh process, timed from spawn:
  * `python -c pass` and `python -c "import textual.app"` (the peers: the floor, and what any
    Textual app pays before its first frame);
  * `vigil --version` (until it exits);
  * the first stream-json line of a scripted headless run (`vigil -p … --output-format
    stream-json`, until its first line is read from the pipe);
  * the first TUI frame (`vigil --script …` on a pseudo-terminal of 160x48, until the screen
    shows the session's header; the process is then stopped).
The console script is the one `pip install` made (.venv/bin/vigil). Every contender runs --repeat
times, interleaved; medians with their spread, and the ratio to each peer.

    .venv/bin/python bench/startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VIGIL = ROOT / ".venv" / "bin" / "vigil"
GOALS = {"vigil --version": 0.06, "first stream-json line": 0.25}


def until_exit(argv: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - began


def until_first_line(argv: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - began
    assert json.loads(line)["type"] == "system", line
    proc.stdout.read()
    proc.wait()
    return elapsed


def until_first_frame(argv: list[str], env: dict[str, str], marker: bytes) -> float:
    """Spawn on a pty and read until `marker` is on the screen (Textual draws a frame in one write)."""
    began = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal of 160x48
        os.execve(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 48, 160, 0, 0))
    seen = b""
    elapsed = float("nan")
    deadline = began + 30
    try:
        while time.perf_counter() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            if marker in seen:
                elapsed = time.perf_counter() - began
                break
    finally:
        os.kill(pid, signal.SIGTERM)
        drain_until = time.perf_counter() + 10
        while time.perf_counter() < drain_until:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            try:
                if select.select([fd], [], [], 0.1)[0]:
                    os.read(fd, 65536)
            except OSError:
                pass
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="vigil-startup-") as tmp:
        work = Path(tmp)
        project = work / "project"
        project.mkdir()
        script = work / "script.json"
        script.write_text(json.dumps({"model": "startup-bench-model", "steps": [{"text": "Hello."}]}))
        env = {**os.environ, "VIGIL_HOME": str(work / "home"), "TERM": "xterm-256color", "COLUMNS": "160",
               "LINES": "48"}
        headless = [str(VIGIL), "-p", "hi", "--script", str(script), "--output-format", "stream-json",
                    "--no-claude-settings", "--cwd", str(project)]
        tui = [str(VIGIL), "--script", str(script), "--no-claude-settings", "--cwd", str(project)]
        contenders = {
            "python -c pass": lambda: until_exit([python, "-c", "pass"], env),
            "import textual.app": lambda: until_exit([python, "-c", "import textual.app"], env),
            "vigil --version": lambda: until_exit([str(VIGIL), "--version"], env),
            "first stream-json line": lambda: until_first_line(headless, env),
            "first TUI frame": lambda: until_first_frame(tui, env, b"startup-bench-model"),
        }
        for run in contenders.values():  # warm: bytecode caches and the page cache
            run()
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(args.repeat):
            for name, run in contenders.items():
                times[name].append(run())
    base, textual = (statistics.median(times[n]) for n in ("python -c pass", "import textual.app"))
    print(f"start-up: fresh processes, median (min–max) of {args.repeat} runs, seconds")
    print(f"{'':24} {'median':>8} {'spread':>15} {'× python':>9} {'× textual':>10}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:24} {median:8.3f} {min(values):7.3f}–{max(values):<7.3f} {median / base:9.1f} "
              f"{median / textual:10.2f}")
    for name, goal in GOALS.items():
        median = statistics.median(times[name])
        print(f"goal ({name} ≤ {goal} s): {'met' if median <= goal else 'NOT met'} ({median:.3f} s)")


if __name__ == "__main__":
    main()
