"""A real MCP server (the official SDK's MCPServer, over stdio) for the behaviours the npm servers
cannot be made to show on demand: a call that outlives its timeout, a server killed mid-call, a
server that fails to start or never answers, a tool list that changes at run time.

    python fixture_server.py [--fail | --hang]

`FIXTURE_STATE_DIR` (env) is where it leaves evidence for the tests: `server-pid` at start,
`pid` when a slow call starts, `cancelled` when the client cancels one.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

STATE = Path(os.environ.get("FIXTURE_STATE_DIR", "."))
if __name__ == "__main__":
    # before the SDK's slow import: a start that fails or hangs says so at once, even on a busy machine
    print(f"fixture server {os.getpid()} starting", file=sys.stderr, flush=True)
    (STATE / "server-pid").write_text(str(os.getpid()))
    if "--fail" in sys.argv:
        print("fixture server: cannot open its database (simulated start failure)", file=sys.stderr, flush=True)
        sys.exit(1)
    if "--hang" in sys.argv:
        time.sleep(3600)

import anyio  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402

server = MCPServer("vigil-fixture")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def echo(text: str) -> str:
    """Returns the text."""
    return text


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Reports progress every 0.1 s for `seconds`, then returns."""
    (STATE / "pid").write_text(str(os.getpid()))
    try:
        step = 0
        while step * 0.1 < seconds:
            await ctx.report_progress(step, None, f"step {step}")
            await anyio.sleep(0.1)
            step += 1
        return f"slept {seconds}s"
    except anyio.get_cancelled_exc_class():
        (STATE / "cancelled").write_text(f"cancelled at step {step}")
        raise


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Adds a tool called `name` and tells the client its tool list changed."""

    def added(text: str) -> str:
        return text.upper()

    server.add_tool(added, name=name, description=f"{name}: added at run time",
                    annotations=ToolAnnotations(read_only_hint=True))
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


@server.tool()
def env_value(name: str) -> str:
    """The value of an environment variable of the server process."""
    return os.environ.get(name, "<unset>")


@server.tool()
def complain(text: str) -> str:
    """Writes `text` to the server's stderr."""
    print(text, file=sys.stderr, flush=True)
    return "complained"


@server.tool()
def refuse(reason: str) -> str:
    """Always fails with `reason` (an is_error result)."""
    raise ToolError(reason)


if __name__ == "__main__":
    server.run()
