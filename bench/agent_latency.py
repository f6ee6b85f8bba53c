"""Claude Code under Vigil: from Claude Code's permission question to Vigil's dialog on screen, and
from the user's answer to the tool starting; and what supervision adds between the model's reply
and the tool starting, next to the same calls in Claude Code's own headless run (`claude -p`,
allowed by its own rules), measured in the same run against the same loopback model server.

Each call is a Bash `date +%s.%N > start_N.txt`: the command itself says when the tool started.
The Vigil side is the real app (headless Textual pilot) with the real CLI; the user answers `y` as
soon as the dialog is on screen, and the time the dialog waited for that key is taken out of the
comparison (it is the user's, not Vigil's).

    .venv/bin/python bench/agent_latency.py [--runs 5] [--calls 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.wire_server import LoopbackServer, Piece, Reply, anthropic_events  # noqa: E402
from tui_app.agents.claude_code.agent import ClaudeCodeAgent  # noqa: E402
from tui_app.app.screens.approval import ApprovalScreen  # noqa: E402
from tui_app.app.vigil_app import VigilApp  # noqa: E402
from tui_app.assemble import SessionOptions, build_session  # noqa: E402

CLAUDE = ROOT / "tests" / "agents" / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
DEADLINE_S = 60.0


def replies(run: str, calls: int) -> list[Reply]:
    """One Bash call per reply (each with its own message id), then a closing text. The server
    notes when it sends each reply's message_stop: the model's reply is complete then."""
    out = []
    for i in range(calls):
        events = anthropic_events(tool_calls=[{"id": f"toolu_{run}_{i}", "name": "Bash", "input": {
            "command": f"date +%s.%N > start_{i}.txt", "description": "note the time"}}])
        events[0]["message"]["id"] = f"msg_{run}_{i}"
        out.append(Reply(pieces=[Piece(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode(),
                                       label=f"{run}_{i}" if e["type"] == "message_stop" else None)
                                 for e in events]))
    closing = anthropic_events(text="done")
    closing[0]["message"]["id"] = f"msg_{run}_end"
    out.append(Reply(pieces=[Piece(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()) for e in closing]))
    return out


def fresh_place(base: Path, name: str) -> tuple[Path, Path]:
    home, project = base / name / "home", base / name / "project"
    home.mkdir(parents=True)
    project.mkdir()
    (home / ".claude.json").write_text(json.dumps({"projects": {str(project): {"hasTrustDialogAccepted": True}}}))
    return home, project


def started_at(project: Path, i: int) -> float:
    return float((project / f"start_{i}.txt").read_text().strip())


# ---- Claude Code alone ------------------------------------------------------------------------------

def claude_alone(base: Path, run: str, calls: int) -> list[float]:
    """reply complete → tool started, per call, with Claude Code deciding by itself."""
    home, project = fresh_place(base, run)
    with LoopbackServer() as server:
        server.queue(*replies(run, calls))
        env = {**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-test",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}
        done = subprocess.run([str(CLAUDE), "-p", "note the time", "--output-format", "stream-json", "--verbose",
                               "--allowedTools", "Bash"], cwd=project, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return [started_at(project, i) - server.sent_at[f"{run}_{i}"] for i in range(calls)]


# ---- Claude Code under Vigil ------------------------------------------------------------------------

class Stamps:
    def __init__(self) -> None:
        self.asked: dict[str, float] = {}      # call id → Claude Code's can_use_tool read by the driver
        self.announced: dict[str, float] = {}  # call id → PermissionRequested emitted (Vigil's policy done)
        self.shown: dict[str, float] = {}      # call id → its dialog painted
        self.answered: dict[str, float] = {}   # call id → the user's allow


def instrument(stamps: Stamps) -> None:
    answer = ClaudeCodeAgent._answer

    def timed_answer(self: ClaudeCodeAgent, line: dict[str, Any]) -> None:
        request = line.get("request") or {}
        if request.get("subtype") == "can_use_tool":
            stamps.asked[str(request.get("tool_use_id"))] = time.time()
        answer(self, line)

    mount, allow = ApprovalScreen.on_mount, ApprovalScreen.action_allow

    def timed_mount(self: ApprovalScreen) -> None:
        mount(self)
        self.call_after_refresh(lambda: stamps.shown.setdefault(str(self.request.call_id), time.time()))

    def timed_allow(self: ApprovalScreen) -> None:
        stamps.answered.setdefault(str(self.request.call_id), time.time())
        allow(self)

    ClaudeCodeAgent._answer = timed_answer  # type: ignore[method-assign]
    ApprovalScreen.on_mount = timed_mount  # type: ignore[method-assign]
    ApprovalScreen.action_allow = timed_allow  # type: ignore[method-assign]


async def under_vigil(base: Path, run: str, calls: int, stamps: Stamps) -> dict[str, list[float]]:
    home, project = fresh_place(base, run)
    os.environ.update({"HOME": str(home), "VIGIL_HOME": str(base / run / "vigil"), "ANTHROPIC_API_KEY": "sk-test",
                       "XDG_CONFIG_HOME": str(home / ".config"), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                       "DISABLE_TELEMETRY": "1"})
    with LoopbackServer() as server:
        server.queue(*replies(run, calls))
        os.environ["ANTHROPIC_BASE_URL"] = server.url
        session = build_session(SessionOptions(cwd=str(project), agent="claude-code", agent_command=str(CLAUDE),
                                               interactive=True))
        session.subscribe(lambda e: stamps.announced.setdefault(str(e.call_id), time.time())
                          if e.type == "PermissionRequested" else None)
        app = VigilApp(session, key_guard_s=0.0, freeze_gc=False)
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: app.ready, "the session to start")
            app.controls.submit("note the time")  # type: ignore[union-attr]
            for i in range(calls):
                call_id = f"toolu_{run}_{i}"
                await until(pilot, lambda call_id=call_id: call_id in stamps.shown, "the dialog")
                await pilot.press("y")
                await until(pilot, lambda i=i: (project / f"start_{i}.txt").exists(), "the tool to start")
            await until(pilot, lambda: not app.controls.busy, "the turn to end")  # type: ignore[union-attr]
        app.close_runtime()
    out: dict[str, list[float]] = {"request_to_dialog": [], "request_to_event": [], "event_to_dialog": [],
                                   "answer_to_start": [], "reply_to_start": []}
    for i in range(calls):
        call_id, start = f"toolu_{run}_{i}", started_at(project, i)
        out["request_to_dialog"].append(stamps.shown[call_id] - stamps.asked[call_id])
        out["request_to_event"].append(stamps.announced[call_id] - stamps.asked[call_id])
        out["event_to_dialog"].append(stamps.shown[call_id] - stamps.announced[call_id])
        out["answer_to_start"].append(start - stamps.answered[call_id])
        users_time = stamps.answered[call_id] - stamps.shown[call_id]
        out["reply_to_start"].append(start - server.sent_at[f"{run}_{i}"] - users_time)
    return out


async def until(pilot: Any, condition: Any, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await pilot.pause(0.002)


# ---- report -------------------------------------------------------------------------------------------

def summary(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    q = statistics.quantiles(ms, n=10) if len(ms) >= 2 else [ms[0]] * 9
    return f"median {statistics.median(ms):7.1f} ms  (p10 {q[0]:.1f}, p90 {q[-1]:.1f}, min {ms[0]:.1f}, " \
           f"max {ms[-1]:.1f}, n={len(ms)})"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=5)
    options = parser.parse_args()
    if not CLAUDE.exists():
        raise SystemExit("Claude Code is not installed: npm ci --ignore-scripts --prefix tests/agents")
    stamps = Stamps()
    instrument(stamps)
    alone: list[float] = []
    vigil: dict[str, list[float]] = {"request_to_dialog": [], "request_to_event": [], "event_to_dialog": [],
                                     "answer_to_start": [], "reply_to_start": []}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for run in range(options.runs):  # the two sides take turns, so load on the machine hits both
            alone += claude_alone(base, f"alone{run}", options.calls)
            for key, values in (await under_vigil(base, f"vigil{run}", options.calls, stamps)).items():
                vigil[key] += values
    print(f"Claude Code under Vigil vs alone · {options.runs} runs × {options.calls} Bash calls per side · "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"permission request → dialog on screen (Vigil)                   {summary(vigil['request_to_dialog'])}")
    print(f"  of which: request → Vigil's policy and preview done (driver)  {summary(vigil['request_to_event'])}")
    print(f"            → the dialog painted (screen: pump, mount, render)  {summary(vigil['event_to_dialog'])}")
    print(f"decision → tool started: the user's answer (Vigil)              {summary(vigil['answer_to_start'])}")
    print(f"decision → tool started: Claude Code alone (reply → start)      {summary(alone)}")
    added = statistics.median(vigil["answer_to_start"]) - statistics.median(alone)
    ratio = statistics.median(vigil["answer_to_start"]) / statistics.median(alone)
    print(f"  answer path adds {added * 1000:.1f} ms median (ratio {ratio:.2f}); goal ≤ 20 ms")
    print(f"reply complete → tool started, under Vigil, user's time taken out {summary(vigil['reply_to_start'])}")
    whole = statistics.median(vigil["reply_to_start"]) - statistics.median(alone)
    print(f"  supervision adds {whole * 1000:.1f} ms median in all (the hook round trip, Claude Code's question, "
          f"the dialog, the answer)")

if __name__ == "__main__":
    asyncio.run(main())
