"""How long Vigil takes to clean up after the hostile cases of issue 15, each run REPEAT times
(median and spread), with a peer measured in the same run where one exists.

  reap      kill -9 of a headless Vigil running `sleep`: until no process of the run is left
            (the reaper's work). Peer: none can exist without it (the `sleep` would live on).
  sigterm   SIGTERM to a headless Vigil whose command ignores TERM: until the process is gone.
  search    ReadArtifact with a pattern that backtracks for ever, timed out after 1 s: how long
            until its worker is gone, and the CPU seconds burnt in the 2 s after the timeout.
            Peer: the same scan on a thread (how it ran before), which cannot be stopped.
  edit      peak RSS of a headless Edit of a 50 MB file, minus a run that only reads it, as a
            multiple of the file's size.

    .venv/bin/python bench/faults.py [--repeat 5] [--only reap,sigterm,search,edit]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes import make_env  # noqa: E402
from tests.faults_kit import marked_processes, new_mark, start_vigil, wait_for, write_script  # noqa: E402
from tui_app.runtime.contract import TimeoutPolicy  # noqa: E402
from tui_app.runtime.pipeline import ToolCall, run_call  # noqa: E402
from tui_app.runtime.results.artifacts import ArtifactStore  # noqa: E402
from tui_app.tools.read_artifact import PAGE_BYTES, READ_ARTIFACT  # noqa: E402

PATTERN = "(a+)+$"
BAD = "a" * 40 + "!"


def summary(name: str, values: list[float], unit: str) -> str:
    return (f"{name:<44} median {statistics.median(values):8.3f} {unit}  "
            f"spread {min(values):.3f}–{max(values):.3f} (n={len(values)})")


def headless(work: Path, steps: list[dict]) -> list[str]:
    project = work / "project"
    project.mkdir(exist_ok=True)
    script = write_script(work / "script.json", steps)
    return ["-p", "Go.", "--script", str(script), "--cwd", str(project), "--allowedTools", "Bash",
            "--no-claude-settings", "--permission-mode", "acceptEdits"]


def has_sleep(mark: str, seconds: str) -> bool:
    for pid in marked_processes(mark):
        try:
            if f"sleep\0{seconds}".encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
        except OSError:
            pass
    return False


def bench_reap(repeat: int) -> None:
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            work, mark = Path(tmp), new_mark()
            process = start_vigil(headless(work, [{"text": "x", "tool_calls": [
                {"id": "b", "name": "Bash", "input": {"command": "sleep 300; echo never"}}]}]), work / "home", mark)
            wait_for(lambda mark=mark: has_sleep(mark, "300"), 60, "the command", process)
            process.send_signal(signal.SIGKILL)
            process.wait()
            began = time.monotonic()
            while marked_processes(mark):
                time.sleep(0.002)
            times.append(time.monotonic() - began)
    print(summary("reap: kill -9 → no process of the run left", times, "s"))


def bench_sigterm(repeat: int) -> None:
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            work, mark = Path(tmp), new_mark()
            process = start_vigil(headless(work, [{"text": "x", "tool_calls": [
                {"id": "b", "name": "Bash", "input": {"command": "trap '' TERM; sleep 300; echo never"}}]}]),
                work / "home", mark)
            wait_for(lambda mark=mark: has_sleep(mark, "300"), 60, "the command", process)
            began = time.monotonic()
            process.send_signal(signal.SIGTERM)
            process.wait()
            times.append(time.monotonic() - began)
            assert process.returncode == 143, process.returncode
    print(summary("sigterm: TERM-ignoring command, TERM → exit", times, "s"))


def cpu_of(pid: int) -> float:
    data = Path(f"/proc/{pid}/stat").read_bytes()
    fields = data[data.rfind(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def workers() -> set[int]:
    out = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if b"artifact_scan.py" in Path(f"/proc/{name}/cmdline").read_bytes():
                    out.add(int(name))
            except OSError:
                pass
    return out


async def one_search(tmp: Path) -> tuple[float, float]:
    store = ArtifactStore("s", tmp / "artifacts")
    ref = store.persist_text("c", "Bash", f"x\n{BAD}\n" * 3)
    env, _ = make_env(replace(READ_ARTIFACT, timeout=TimeoutPolicy(default_ms=1000)), cwd=str(tmp))
    env.services["artifacts"] = store
    outcome = await run_call(ToolCall("r", "ReadArtifact", {"artifact": ref.uri, "pattern": PATTERN}), env)
    assert outcome.code == "timeout"
    began = time.monotonic()
    while workers():
        await asyncio.sleep(0.002)
    gone = time.monotonic() - began
    before = cpu_of(os.getpid())
    await asyncio.sleep(2.0)
    return gone, cpu_of(os.getpid()) - before


def one_thread_search(tmp: Path) -> float:
    """The peer: the same scan on a thread under the same 1 s timeout, in a process of its own
    (a thread in a backtracking regex holds the interpreter lock: it would stall this one)."""
    path = tmp / "a.txt"
    path.write_text(f"x\n{BAD}\n" * 3)
    request = {"path": str(path), "start": 1, "limit": 200, "total": None, "page_bytes": PAGE_BYTES,
               "pattern": PATTERN, "context": 0}
    code = ("import sys, threading, time; sys.path.insert(0, sys.argv[1]); from tui_app.tools import artifact_scan; "
            f"threading.Thread(target=artifact_scan.scan, args=({request!r},), daemon=True).start(); time.sleep(600)")
    child = subprocess.Popen([sys.executable, "-c", code, str(ROOT)])
    try:
        time.sleep(1.0)  # the call's timeout: the caller stops waiting, the thread does not stop
        before = cpu_of(child.pid)
        time.sleep(2.0)
        return cpu_of(child.pid) - before
    finally:
        child.kill()
        child.wait()


def bench_search(repeat: int) -> None:
    gone, burnt, peer = [], [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            g, b = asyncio.run(one_search(Path(tmp)))
            gone.append(g)
            burnt.append(b)
    print(summary("search: timeout → worker gone", gone, "s"))
    print(summary("search: CPU in the 2 s after the timeout", burnt, "s"))
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            peer.append(one_thread_search(Path(tmp)))
    print(summary("search peer (thread): CPU in the 2 s after", peer, "s"))


def peak_rss_kb(args: list[str], home: Path) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VIGIL_HOME": str(home)}
    out = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "tui_app", *args], env=env,
                         capture_output=True, text=True)
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr)
    assert found and out.returncode == 0, out.stderr[-2000:]
    return int(found.group(1))


def bench_edit(repeat: int) -> None:
    ratios = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            (work / "project").mkdir()
            big = work / "project" / "big.txt"
            text = "".join(f"line {i} " + "abcdefghij" * 5000 + "\n" for i in range(1000))
            big.write_text(text)
            size = len(text)
            read = {"id": "r", "name": "Read", "input": {"file_path": str(big)}}
            only_read = peak_rss_kb(headless(work, [{"text": "x", "tool_calls": [read]}]), work / "h1")
            edit = {"id": "e", "name": "Edit", "input": {"file_path": str(big), "old_string": "line 500 ",
                                                         "new_string": "LINE 500 "}}
            with_edit = peak_rss_kb(headless(work, [{"text": "x", "tool_calls": [read]},
                                                    {"text": "y", "tool_calls": [edit]}]), work / "h2")
            assert "LINE 500 " in big.read_text()
            ratios.append((with_edit - only_read) * 1024 / size)
    print(summary(f"edit: peak RSS over a read-only run ({size / 1e6:.0f} MB file)", ratios, "× the file"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="reap,sigterm,search,edit")
    args = parser.parse_args()
    chosen = args.only.split(",")
    for name, run in (("reap", bench_reap), ("sigterm", bench_sigterm), ("search", bench_search),
                      ("edit", bench_edit)):
        if name in chosen:
            run(args.repeat)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
