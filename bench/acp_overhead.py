"""What supervising an ACP agent costs: the same scripted agent (tests/acp_fixture_agent.py, the
SDK's agent side) driven by Vigil's ACP driver and by a bare client of the official SDK (the peer:
it answers every question at once and keeps nothing), in the same run.

Two turns are timed, each from session/prompt to its response:
  * `asks`: the agent asks permission for N edits of a file; Vigil answers each with its policy (an
    allow rule for Edit, so no dialog: the preview is computed, the rules and the hooks run, the
    rows are told and logged); the peer answers allow-once.
  * `stream`: the agent streams M message chunks and K tool calls; Vigil turns them into events,
    deltas, rows and the log.

    .venv/bin/python bench/acp_overhead.py [--runs 5] [--asks 50] [--chunks 2000] [--calls 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import acp  # noqa: E402
from acp.schema import AllowedOutcome, RequestPermissionResponse  # noqa: E402

from tests.acp_kit import FIXTURE  # noqa: E402
from tui_app.assemble import SessionOptions, build_session  # noqa: E402


def scripts(project: Path, asks: int, chunks: int, calls: int) -> dict[str, list[dict[str, Any]]]:
    notes = project / "notes.txt"
    ask_turn = [{"ask": {"id": f"e{i}", "title": f"Edit notes.txt #{i}", "kind": "edit",
                         "diffs": [{"path": str(notes), "old": "hello", "new": f"hello {i}"}]}}
                for i in range(asks)]
    stream_turn: list[dict[str, Any]] = [{"say": "x" * 7 * chunks}]
    for i in range(calls):
        stream_turn += [{"tool_call": {"id": f"c{i}", "title": f"Read notes.txt #{i}", "kind": "read",
                                       "locations": [str(notes)], "status": "in_progress"}},
                        {"update": {"id": f"c{i}", "status": "completed", "text": "hello world"}}]
    return {"asks": ask_turn, "stream": stream_turn}


class BareClient:
    """The peer: an ACP client that allows everything and records nothing."""

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        pass

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kw: Any) -> Any:
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow-once"))


async def time_bare(script_path: Path, project: Path, turns: int) -> list[float]:
    times = []
    async with acp.spawn_agent_process(BareClient(), sys.executable, str(FIXTURE), str(script_path),
                                       cwd=str(project), transport_kwargs={"stderr": None}) as (conn, _proc):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        for _ in range(turns):
            began = time.perf_counter()
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("go")])
            times.append(time.perf_counter() - began)
    return times


async def time_vigil(script_path: Path, project: Path, turns: int, work: Path) -> list[float]:
    settings = work / "settings.json"
    settings.write_text(json.dumps({
        "agents": {"bench": {"protocol": "acp", "command": sys.executable, "args": [str(FIXTURE), str(script_path)]}},
        "permissions": {"allow": ["Edit"]}}))
    session = build_session(SessionOptions(cwd=str(project), agent="bench", settings_file=str(settings),
                                           no_claude_settings=True, interactive=True))
    await session.start()
    times = []
    try:
        for _ in range(turns):
            began = time.perf_counter()
            result = await session.run_turn("go")
            times.append(time.perf_counter() - began)
            assert result.reason == "completed", result
    finally:
        await session.close()
    return times


def summary(label: str, values: list[float]) -> str:
    median = statistics.median(values)
    spread = (max(values) - min(values)) / 2
    return f"{label:<28} median {median * 1000:8.1f} ms  ± {spread * 1000:6.1f} ms  (n={len(values)})"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--asks", type=int, default=50)
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["VIGIL_HOME"] = str(work / "vigil-home")
        project = work / "project"
        project.mkdir()
        (project / "notes.txt").write_text("hello world\n")
        turns = scripts(project, args.asks, args.chunks, args.calls)
        for name, turn in turns.items():
            path = work / f"{name}.json"
            path.write_text(json.dumps({"turns": [turn] * args.runs}))
            vigil = await time_vigil(path, project, args.runs, work)
            bare = await time_bare(path, project, args.runs)
            print(summary(f"{name}: Vigil's ACP driver", vigil))
            print(summary(f"{name}: bare SDK client", bare))
            per = {"asks": args.asks, "stream": args.chunks + 2 * args.calls}[name]
            extra = (statistics.median(vigil) - statistics.median(bare)) / per * 1000
            print(f"{name}: ratio {statistics.median(vigil) / statistics.median(bare):.2f}x, "
                  f"{extra:.2f} ms more per {'question' if name == 'asks' else 'update'}\n")


if __name__ == "__main__":
    asyncio.run(main())
