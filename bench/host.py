"""The host's figures (issue 28), each over several runs (median and spread):

  * attach: a client attaches to a session of N events (default 50,000) and has every one decoded
    (what the TUI needs to draw the session's current screen): cold (the host reads the log) and
    warm (the host holds it). Goal ≤ 300 ms.
  * latency: host → client, at R events/s (default 2,000) for S seconds, with 1 and with 10
    clients, each a process of its own; latency = arrival − the event's own timestamp (one clock).
    Goal p99 ≤ 20 ms.
  * rss: the host process with 20 idle sessions (the built-in agent, scripted). Goal ≤ 150 MB.

    .venv/bin/python bench/host.py [--runs 5] [--events 50000] [--rate 2000] [--seconds 3] [--sessions 20]

No peer is measured: tmux attaching to a pane redraws a screen of text, not a log of events.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pydantic_core import from_json  # noqa: E402

from tui_app.host.client import HostClient  # noqa: E402
from tui_app.runtime.events import (  # noqa: E402
    AssistantText,
    SessionEnded,
    SessionStarted,
    ToolCallProgress,
    ToolCallRequested,
    ToolCallResult,
    TurnEnded,
    TurnStarted,
    parse_event,
)


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.1f} (min {min(values):.1f}, max {max(values):.1f})"


def home() -> Path:
    return Path(tempfile.mkdtemp(prefix="vb", dir="/tmp"))


def env_for(vigil_home: Path) -> dict[str, str]:
    return {**os.environ, "VIGIL_HOME": str(vigil_home), "HOME": str(vigil_home), "PYTHONPATH": str(ROOT)}


def vigil(env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "tui_app", *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=env["HOME"],
    ).stdout


# ---- attach ---------------------------------------------------------------------------------------


def write_log(vigil_home: Path, count: int) -> str:
    """A finished session of `count` events, as a host would have left it."""
    from tui_app.runtime.log.eventlog import EventLogWriter

    session_id = "20260101-000000-bench1"
    folder = vigil_home / "sessions" / session_id
    folder.mkdir(parents=True)
    writer = EventLogWriter(folder / "events.jsonl")
    seq = 0

    def put(event: Any) -> None:
        nonlocal seq
        seq += 1
        event.__dict__.update(seq=seq, session_id=session_id, ts=time.time())
        writer.write(event)

    put(SessionStarted(cwd=str(vigil_home), provider="scripted", model="bench", permission_mode="default"))
    turn = 0
    while seq < count - 1:
        turn += 1
        tid = f"turn-{turn}"
        put(TurnStarted(prompt=f"prompt {turn}", turn_id=tid))
        for call in range(4):
            cid = f"c{turn}-{call}"
            put(
                ToolCallRequested(
                    step=1, index=call, name="Bash", input={"command": f"echo {call}"}, turn_id=tid, call_id=cid
                )
            )
            put(ToolCallProgress(kind="output", stream="stdout", text=f"line {call}\n" * 3, turn_id=tid, call_id=cid))
            put(ToolCallResult(tool="Bash", model_content=f"line {call}\n" * 3, turn_id=tid, call_id=cid))
        put(AssistantText(step=2, index=0, text="Done with this turn. " * 4, turn_id=tid))
        put(TurnEnded(reason="completed", turn_id=tid))
    put(SessionEnded(reason="exit"))
    writer.close()
    (folder / "hosted.json").write_text(
        json.dumps({"id": session_id, "options": {"cwd": str(vigil_home)}, "started": time.time(), "ended": True})
    )
    return session_id


async def attach_once(session_id: str, socket_path: Path) -> tuple[float, int]:
    done = asyncio.get_running_loop().create_future()
    decoded: list[Any] = []

    def on_event(_session: str, data: bytes) -> None:
        decoded.append(parse_event(data))

    def on_notify(method: str, params: dict[str, Any]) -> None:
        if method == "ended" and not done.done():
            done.set_result(None)

    began = time.perf_counter()
    client = await HostClient.connect(socket_path=socket_path, start=False, on_notify=on_notify, on_event=on_event)
    await client.call("attach", session=session_id, after_seq=0)
    await done
    took = (time.perf_counter() - began) * 1000
    await client.close()
    return took, len(decoded)


def bench_attach(runs: int, count: int) -> None:
    cold, warm = [], []
    for _ in range(runs):
        vigil_home = home()
        try:
            env = env_for(vigil_home)
            session_id = write_log(vigil_home, count)
            vigil(env, "host", "path")  # the host, started
            socket_path = vigil_home / "host.sock"
            took, n = asyncio.run(attach_once(session_id, socket_path))
            assert n >= count, (n, count)
            count_seen = n
            cold.append(took)
            warm.append(asyncio.run(attach_once(session_id, socket_path))[0])
            vigil(env, "host", "stop")
        finally:
            shutil.rmtree(vigil_home, ignore_errors=True)
    count = count_seen
    print(f"attach {count} events, cold (host reads the log): {spread(cold)} ms")
    print(f"attach {count} events, warm (host holds them):    {spread(warm)} ms")


# ---- latency --------------------------------------------------------------------------------------


async def serve_and_emit(socket_path: Path, rate: int, seconds: float, clients: int) -> None:
    """A host in this process holding one session whose events come at `rate` a second."""
    from tui_app.host.hosted import HostedSession
    from tui_app.host.server import Host

    host = Host(socket_path)
    hosted = HostedSession("bench-live", {"cwd": "/"})
    hosted.loaded = True
    host.sessions[hosted.id] = hosted
    serving = asyncio.ensure_future(host.serve())
    while not socket_path.exists():
        await asyncio.sleep(0.01)
    ready = socket_path.with_name("ready")
    while len(list(socket_path.parent.glob("client-*.ready"))) < clients:
        await asyncio.sleep(0.01)
    ready.write_text("go")
    seq = 0
    began = time.perf_counter()
    total = int(rate * seconds)
    for n in range(total):
        due = began + n / rate
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        seq += 1
        event = ToolCallProgress(kind="output", stream="stdout", text=f"line {n}\n", call_id="c1")
        event.__dict__.update(seq=seq, session_id=hosted.id, ts=time.time())
        hosted.on_event(event)
    end = SessionEnded(reason="bench")
    end.__dict__.update(seq=seq + 1, session_id=hosted.id, ts=time.time())
    hosted.rest_state = "ended"
    hosted.on_event(end)
    while hosted.subscriptions:
        await asyncio.sleep(0.01)
    host.stopping.set()
    await serving


async def client_main(socket_path: Path, number: int) -> None:
    latencies: list[float] = []
    done = asyncio.get_running_loop().create_future()

    def on_event(_session: str, data: bytes) -> None:
        # the timestamp only: a client that decoded every event into its model would measure itself
        latencies.append((time.time() - from_json(data)["ts"]) * 1000)

    def on_notify(method: str, params: dict[str, Any]) -> None:
        if method == "ended" and not done.done():
            done.set_result(None)

    client = await HostClient.connect(
        socket_path=socket_path, start=False, on_notify=on_notify, on_event=on_event, client="bench"
    )
    await client.call("attach", session="bench-live", after_seq=0)
    socket_path.with_name(f"client-{number}.ready").write_text("ok")
    closed = asyncio.ensure_future(client.peer.closed.wait())
    await asyncio.wait({done, closed}, return_when=asyncio.FIRST_COMPLETED)
    await client.close()
    print(json.dumps(latencies))


def bench_latency(runs: int, rate: int, seconds: float) -> None:
    for clients in (1, 10):
        p50s, p99s = [], []
        for _ in range(runs):
            folder = home()
            socket_path = folder / "host.sock"
            try:
                procs = [
                    subprocess.Popen(
                        [sys.executable, __file__, "--client", str(socket_path), str(i)],
                        stdout=subprocess.PIPE,
                        text=True,
                        env=env_for(folder),
                    )
                    for i in range(clients)
                ]

                os.environ["VIGIL_HOME"] = str(folder)
                asyncio.run(serve_and_emit(socket_path, rate, seconds, clients))
                every: list[float] = []
                for proc in procs:
                    out, _ = proc.communicate(timeout=120)
                    every += json.loads(out.strip().splitlines()[-1])
                every.sort()
                p50s.append(every[len(every) // 2])
                p99s.append(every[int(len(every) * 0.99)])
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        print(f"latency at {rate} ev/s, {clients} client(s): p50 {spread(p50s)} ms; p99 {spread(p99s)} ms")


# ---- memory ---------------------------------------------------------------------------------------


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def bench_rss(runs: int, sessions: int) -> None:
    values = []
    for _ in range(runs):
        vigil_home = home()
        try:
            env = env_for(vigil_home)
            script = vigil_home / "script.json"
            script.write_text(json.dumps({"steps": [{"text": "Hello."}]}))
            for _ in range(sessions):
                vigil(env, "new", "--script", str(script), "--cwd", str(vigil_home), "-p", "hi")
            deadline = time.monotonic() + 60
            while True:
                rows = json.loads(vigil(env, "ls", "--json"))
                if all(r["state"] == "idle" for r in rows) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            pid = int((vigil_home / "host.lock").read_text())
            values.append(rss_mb(pid))
            vigil(env, "host", "stop")
        finally:
            shutil.rmtree(vigil_home, ignore_errors=True)
    print(f"host RSS with {sessions} idle sessions: {spread(values)} MB")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        asyncio.run(client_main(Path(sys.argv[2]), int(sys.argv[3])))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--only", choices=["attach", "latency", "rss"])
    args = parser.parse_args()
    if args.only in (None, "attach"):
        bench_attach(args.runs, args.events)
    if args.only in (None, "latency"):
        bench_latency(args.runs, args.rate, args.seconds)
    if args.only in (None, "rss"):
        bench_rss(args.runs, args.sessions)


if __name__ == "__main__":
    main()
