"""MCP latencies: server start → connected (handshake + tool listing), and one tool call through
Vigil's whole pipeline next to the same call made straight on the SDK's ClientSession, measured
in the same run against the same server process (the ratio is what the pipeline adds).

Servers: server-everything and server-filesystem (npm, tests/mcp_servers; skipped when not
installed) and the Python MCPServer fixture of the tests.

    .venv/bin/python bench/mcp_latency.py [--calls 20] [--starts 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_app.mcp.config import ServerConfig
from tui_app.mcp.connection import McpConnection
from tui_app.mcp.projection import make_tool_spec
from tui_app.runtime.hooks.runner import NoHooks
from tui_app.runtime.permissions.broker import ApprovalBroker
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.runtime.pipeline import CallEnv, ToolCall, run_call
from tui_app.runtime.registry import ToolRegistry

ROOT = Path(__file__).resolve().parent.parent
MODULES = ROOT / "tests" / "mcp_servers" / "node_modules" / "@modelcontextprotocol"


def servers(work: Path) -> list[tuple[ServerConfig, str, dict]]:
    (work / "note.txt").write_text("hello\n" * 10)
    out = []
    everything = MODULES / "server-everything" / "dist" / "index.js"
    filesystem = MODULES / "server-filesystem" / "dist" / "index.js"
    if everything.exists():
        out.append((ServerConfig("everything", "stdio", "bench", command="node", args=(str(everything), "stdio")),
                    "echo", {"message": "hi"}))
    if filesystem.exists():
        out.append((ServerConfig("fs", "stdio", "bench", command="node", args=(str(filesystem), str(work))),
                    "read_text_file", {"path": str(work / "note.txt")}))
    fixture = ROOT / "tests" / "mcp_servers" / "fixture_server.py"
    out.append((ServerConfig("python", "stdio", "bench", command=sys.executable, args=(str(fixture),),
                             env={"FIXTURE_STATE_DIR": str(work)}), "echo", {"text": "hi"}))
    return out


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


async def measure(config: ServerConfig, tool: str, args: dict, work: Path, calls: int, starts: int) -> None:
    start_times = []
    for _ in range(starts):
        connection = McpConnection(config, work / f"{config.name}.log", startup_timeout_s=30)
        began = time.perf_counter()
        await connection.connect()
        start_times.append(time.perf_counter() - began)
        assert connection.status == "connected", connection.message
        await connection.close()

    connection = McpConnection(config, work / f"{config.name}.log", startup_timeout_s=30)
    await connection.connect()
    [listed] = [t for t in connection.tools if t.name == tool]
    spec = make_tool_spec(config.name, listed, connection, timeout_ms=30_000, supports_images=lambda: False)
    registry = ToolRegistry()
    registry.register(spec)
    env = CallEnv(session_id="bench", cwd=str(work), registry=registry, policy=ModePolicy(allow={spec.name}),
                  hooks=NoHooks(), broker=ApprovalBroker(), emit=lambda event: event)
    session = connection._session  # the peer: the SDK call with nothing of Vigil around it

    sdk, pipeline = [], []
    for i in range(calls + 3):  # the first three warm both paths up
        began = time.perf_counter()
        result = await session.call_tool(tool, args)
        mid = time.perf_counter()
        outcome = await run_call(ToolCall(f"c{i}", spec.name, args), env)
        end = time.perf_counter()
        assert not result.is_error and outcome.type == "ToolCallResult", outcome
        if i >= 3:
            sdk.append(mid - began)
            pipeline.append(end - mid)
    began = time.perf_counter()
    outcomes = await asyncio.gather(*(run_call(ToolCall(f"p{i}", spec.name, args), env) for i in range(20)))
    concurrent = time.perf_counter() - began
    assert all(o.type == "ToolCallResult" for o in outcomes)
    await connection.close()

    sdk_median, pipe_median = statistics.median(sdk), statistics.median(pipeline)
    print(f"{config.name:<11} start→connected median {ms(statistics.median(start_times))} "
          f"(min {ms(min(start_times))}, max {ms(max(start_times))}, n={starts})")
    print(f"{'':<11} {tool}: SDK call median {ms(sdk_median)} · through the pipeline {ms(pipe_median)} "
          f"· ratio {pipe_median / sdk_median:.2f} (n={calls}) · 20 concurrent through the pipeline {ms(concurrent)}")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--starts", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        found = servers(work)
        if len(found) < 3:
            print("(npm servers not installed: npm ci --ignore-scripts --prefix tests/mcp_servers)")
        for config, tool, args in found:
            await measure(config, tool, args, work, options.calls, options.starts)


if __name__ == "__main__":
    asyncio.run(main())
