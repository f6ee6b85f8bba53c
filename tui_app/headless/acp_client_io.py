"""What an ACP client may lend the agent: its file system and its terminals.

* `fs/read_text_file` and `fs/write_text_file` (when the client offers them): Read, Edit and Write
  read the editor's buffers (unsaved changes included) and write through the editor, which keeps
  buffers, undo history and disk in step. The file tools call `ClientFiles` from worker threads;
  it hands each request to the event loop and waits. A request that fails, or a file that is not
  UTF-8 text, falls back to the local disk.
* `terminal/*` (when the client offers it): a foreground Bash command runs in a terminal the client
  creates and shows live; Vigil waits for its exit (under the call's timeout, killing it on timeout
  or interrupt), reads its output and releases it. Which calls run, and after whose approval, is
  decided by Vigil's pipeline before the handler is reached, exactly as for a local run. Background
  commands stay local (Vigil manages their lifetime).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tui_app.runtime.contract import RawResult, ToolContext, ToolFailure, ToolSpec, ToolTimedOut
from tui_app.runtime.display import BashOutputDisplay, OutputSegment
from tui_app.tools.bash.exit_codes import is_failure

CLIENT_CALL_TIMEOUT_S = 60.0
#: how much output the client's terminal keeps for Vigil (the model's copy is budgeted again)
TERMINAL_OUTPUT_BYTES = 1_000_000


class ClientFiles:
    """A `FileAccess` that asks the ACP client."""

    def __init__(self, client: Any, session_id: str, loop: asyncio.AbstractEventLoop, *, can_read: bool,
                 can_write: bool) -> None:
        self.client = client
        self.session_id = session_id
        self.loop = loop
        self.can_read = can_read
        self.can_write = can_write

    def _call(self, coro: Any) -> Any:
        if self._on_loop():
            coro.close()  # never block the loop that must answer
            raise RuntimeError("a client file request from the event loop itself")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(CLIENT_CALL_TIMEOUT_S)

    def _on_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    def read(self, path: str) -> bytes | None:
        if not self.can_read:
            return None
        try:
            response = self._call(self.client.read_text_file(session_id=self.session_id, path=path))
        except Exception:
            return None  # the disk decides (a missing file is reported as missing there)
        return response.content.encode("utf-8")

    def write(self, path: str, data: bytes) -> bool:
        if not self.can_write:
            return False
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return False  # bytes that are not UTF-8 cannot travel as ACP text: Vigil writes them itself
        try:
            self._call(self.client.write_text_file(session_id=self.session_id, path=path, content=text))
        except Exception:
            return False
        return True


def terminal_bash(spec: ToolSpec, client: Any, session_id: str, on_terminal: Callable[[str, str], None]) -> ToolSpec:
    """Bash whose foreground commands run in the client's terminal."""
    local = spec.handler

    async def handler(args: Any, ctx: ToolContext) -> RawResult:
        if getattr(args, "run_in_background", False):
            return await local(args, ctx)
        return await run_in_client_terminal(client, session_id, args.command, ctx, on_terminal)

    return replace(spec, handler=handler)


async def run_in_client_terminal(client: Any, session_id: str, command: str, ctx: ToolContext,
                                 on_terminal: Callable[[str, str], None]) -> RawResult:
    began = time.monotonic()
    try:
        created = await client.create_terminal(session_id=session_id, command="bash", args=["-c", command],
                                               cwd=ctx.cwd, output_byte_limit=TERMINAL_OUTPUT_BYTES)
    except Exception as exc:
        raise ToolFailure(f"The editor could not start a terminal for this command: {exc}") from None
    terminal_id = created.terminal_id
    on_terminal(ctx.call_id, terminal_id)
    limit_ms = ctx.timeout_ms
    try:
        try:
            exited = await asyncio.wait_for(client.wait_for_terminal_exit(session_id=session_id,
                                                                          terminal_id=terminal_id),
                                            limit_ms / 1000 if limit_ms else None)
        except TimeoutError:
            await _kill(client, session_id, terminal_id)
            output = await client.terminal_output(session_id=session_id, terminal_id=terminal_id)
            raise ToolTimedOut(limit_ms or 0, partial=BashOutputDisplay(
                command=command, segments=[OutputSegment(stream="stdout", text=output.output)],
                duration_ms=int((time.monotonic() - began) * 1000))) from None
        except asyncio.CancelledError:
            await asyncio.shield(_kill(client, session_id, terminal_id))
            raise
        output = await client.terminal_output(session_id=session_id, terminal_id=terminal_id)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.shield(client.release_terminal(session_id=session_id, terminal_id=terminal_id))
    exit_code = exited.exit_code if exited.exit_code is not None else -1
    text = output.output
    if output.truncated:
        text = "[… the start of the output was cut by the terminal …]\n" + text
    failed = is_failure(command, exit_code)
    signal_note = f" (signal {exited.signal})" if exited.signal else ""
    body = (f"Exit code {exit_code}{signal_note}\n" + text).rstrip("\n") if failed else text
    display = BashOutputDisplay(command=command, segments=[OutputSegment(stream="stdout", text=output.output)],
                                exit_code=exit_code, duration_ms=int((time.monotonic() - began) * 1000))
    return RawResult(output={"stdout": output.output, "stderr": "", "interrupted": False, "exit_code": exit_code,
                             "terminalId": terminal_id},
                     text=body or "", display=display, is_error=failed, error_code="execution_failed")


async def _kill(client: Any, session_id: str, terminal_id: str) -> None:
    with contextlib.suppress(Exception):
        await client.kill_terminal(session_id=session_id, terminal_id=terminal_id)
