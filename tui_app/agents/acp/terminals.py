"""`terminal/*`: commands the agent runs through Vigil, run by Vigil's Bash runner.

`terminal/create` is a Bash call of its own: Vigil's Bash rules, the classifier and the dialog
(not asked again when the user approved exactly this command in the agent's permission request),
then the command in its own session and process group — in Vigil's sandbox when the permission
stage says so, as for Vigil's own Bash — its output streaming into the row's
Output tab and into an artifact when large. The call lasts as long as the command; the agent reads
the output (`terminal/output`, the last `outputByteLimit` bytes), waits for the exit, kills the
command (the whole group) and releases the terminal. A terminal still running when the turn ends
is stopped, and so is every one when the session closes.

Environment variables the agent sets and a working directory other than the session's are part
of what the dialog shows, and either makes the command one the classifier does not wave through
(`BASH_ENV`, `LD_PRELOAD` or `PATH` can make `ls` run anything).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Protocol

from acp import RequestError
from pydantic import Field

from tui_app.agents.acp.tool_calls import unwrap_command, unwrap_shell
from tui_app.runtime.contract import (
    ApprovalPreview,
    PermissionSpec,
    RawResult,
    StrictInput,
    TimeoutPolicy,
    ToolContext,
    ToolFailure,
    ToolFlags,
    ToolSpec,
)
from tui_app.runtime.display import BashOutputDisplay, OutputSegment
from tui_app.runtime.results import budgets
from tui_app.tools.bash.output import OutputCollector
from tui_app.tools.bash.sandbox_run import Launch, sandbox_launch
from tui_app.tools.bash.shell_run import ShellRun
from tui_app.tools.bash.tool import (
    BASE_FLAGS,
    GRACE_S,
    bash_flags_for,
    display_of,
    format_persisted,
    one_line,
    result_of,
    shell_env,
)

if TYPE_CHECKING:
    from tui_app.agents.acp.client_calls import ClientCalls
    from tui_app.agents.calls import CallBook


class TerminalsLink(Protocol):
    """What the agent's terminals need: the session's cwd, the open turn, the calls that run the
    commands and a place to run tasks that the agent's shutdown cancels (docs/architecture.md §11)."""

    session: Any
    calls: CallBook | None
    client_calls: ClientCalls

    def spawn(self, coro: Any) -> asyncio.Task[Any]: ...


#: what terminal/output keeps when the agent names no limit
DEFAULT_OUTPUT_LIMIT = 1024 * 1024


class TerminalInput(StrictInput):
    command: str = Field(description="The shell command line")
    cwd: str | None = Field(default=None, description="Where it runs (absolute)")
    env: dict[str, str] | None = Field(default=None, description="Variables set for it")


@dataclass
class Terminal:
    terminal_id: str
    call_id: str
    command: str
    cwd: str
    env: dict[str, str]
    limit: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    started: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    run: ShellRun | None = None
    returncode: int | None = None
    display: BashOutputDisplay | None = None
    task: asyncio.Task[Any] | None = None
    began: float = field(default_factory=time.monotonic)
    turn_id: str | None = None

    def feed(self, data: bytes) -> None:
        self.output += data
        if len(self.output) > self.limit:
            cut = len(self.output) - self.limit
            # never cut inside a UTF-8 character: skip continuation bytes
            while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                cut += 1
            del self.output[:cut]
            self.truncated = True

    @property
    def exit_status(self) -> tuple[int | None, str | None] | None:
        if not self.finished.is_set():
            return None
        code = self.returncode
        if code is None:
            return None, None
        if code < 0:
            try:
                return None, signal.Signals(-code).name
            except ValueError:
                return None, f"signal {-code}"
        return code, None


def terminal_flags(data: dict[str, Any]) -> ToolFlags:
    """The classifier's flags for the command, unless variables or another directory come with it."""
    if data.get("env") or data.get("cwd"):
        return BASE_FLAGS
    return bash_flags_for(data)


async def terminal_preview(data: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
    command = data["command"]
    cwd = data.get("cwd") or ctx.cwd
    lines = [f"{k}={v}" for k, v in sorted((data.get("env") or {}).items())]
    body = ("# with these variables set:\n" + "\n".join(lines) + "\n" if lines else "") + command
    sandbox = ctx.service("sandbox")
    sandboxed = sandbox is not None and sandbox.runs_sandboxed(data)
    where = ", in the sandbox" if sandboxed else ", OUTSIDE the sandbox" if sandbox is not None else ""
    return ApprovalPreview(summary=f"Run `{one_line(command)}` in {cwd} (a terminal of the agent's{where})",
                           kind="command", body=body,
                           risk=terminal_flags(data).risk if sandbox is None or sandboxed else "high")


async def check_terminal(args: TerminalInput, ctx: ToolContext) -> None:
    if not args.command.strip():
        raise ToolFailure("The command is empty.")
    if "\x00" in args.command:
        raise ToolFailure("The command contains a NUL byte, which cannot be passed to a shell.")
    if args.cwd is not None and not (os.path.isabs(args.cwd) and os.path.isdir(args.cwd)):
        raise ToolFailure(f"{args.cwd} is not an existing absolute directory.")


class AgentTerminals:
    def __init__(self, agent: TerminalsLink) -> None:
        self.agent = agent
        self.by_id: dict[str, Terminal] = {}
        self.by_call: dict[str, Terminal] = {}
        self.spec = ToolSpec(
            name="Bash", description="A command the agent runs in a terminal of Vigil's (terminal/create)",
            handler=self._run, input_model=TerminalInput, provider_visible=False, flags=BASE_FLAGS,
            permission=PermissionSpec(kind="bash", rule_key="command",
                                      reason="a command runs processes that may change anything"),
            budget=budgets.BASH, timeout=TimeoutPolicy(kind="none"),
            cancellation_message="The command was stopped, with every process it started.",
            validate_input=check_terminal, prepare_approval=terminal_preview, flags_for=terminal_flags,
            format_persisted=format_persisted,
        )

    # ---- the call's handler -----------------------------------------------------------------

    async def _run(self, args: TerminalInput, ctx: ToolContext) -> RawResult:
        # in the sandbox when Vigil's policy said so (the permission stage's decision is final)
        launch = await sandbox_launch(SimpleNamespace(command=args.command, dangerouslyDisableSandbox=False), ctx,
                                      {**shell_env(ctx), **(args.env or {})})
        try:
            return await self._run_in(args, ctx, launch)
        finally:
            if launch is not None:
                await launch.close()

    async def _run_in(self, args: TerminalInput, ctx: ToolContext, launch: Launch | None) -> RawResult:
        terminal = self.by_call[ctx.call_id]
        collector = OutputCollector(artifacts=ctx.service("artifacts"), call_id=ctx.call_id, progress=ctx.progress)

        def feed(stream: Any, data: bytes) -> None:
            collector.feed(stream, data)
            terminal.feed(data)

        env = launch.env if launch is not None else {**shell_env(ctx), **(args.env or {})}
        try:
            run = await ShellRun.start(args.command, args.cwd or ctx.cwd, env, feed, GRACE_S,
                                       wrap=launch.wrap if launch is not None else None)
        except OSError as exc:
            collector.finish()
            raise ToolFailure(f"Could not start bash in {args.cwd or ctx.cwd}: {exc.strerror or exc}") from None
        terminal.run = run
        terminal.started.set()
        strays: set[int] = set()
        try:
            await run.wait_exit(None)
            strays = await run.settle(GRACE_S)
        except BaseException:
            await run.stop(GRACE_S)
            raise
        finally:
            run.release()
            got = collector.finish()
            terminal.returncode = run.returncode
            terminal.display = display_of(args.command, got, terminal.began, exit_code=run.exit_code)
            terminal.finished.set()
        exit_code = run.exit_code
        return result_of(args.command, got, exit_code if exit_code is not None else -1, terminal.began, strays,
                         launch)

    # ---- the requests -------------------------------------------------------------------------

    async def create(self, command: str, args: list[str] | None, env: list[Any] | None, cwd: str | None,
                     output_byte_limit: int | None) -> str:
        agent = self.agent
        if agent.calls is None or agent.calls.turn_id is None:
            raise RequestError.internal_error({"details": "Vigil runs commands only during a turn"})
        # `bash -lc CMD` is CMD (Vigil runs it in its own shell): the rules and the dialog see CMD
        line = unwrap_shell([command, *args]) if args else unwrap_command(command)
        variables = {e.name: e.value for e in env or ()}
        calls = agent.client_calls
        call_id = calls.new_id("terminal")
        terminal_id = call_id
        limit = output_byte_limit if output_byte_limit is not None and output_byte_limit >= 0 else DEFAULT_OUTPUT_LIMIT
        terminal = Terminal(terminal_id, call_id, line, cwd or agent.session.cwd, variables, limit,
                            turn_id=agent.calls.turn_id)
        self.by_id[terminal_id] = terminal
        self.by_call[call_id] = terminal
        data: dict[str, Any] = {"command": line}
        if cwd and cwd != agent.session.cwd:
            data["cwd"] = cwd
        if variables:
            data["env"] = variables
        terminal.task = agent.spawn(calls.run(call_id, "Bash", data))
        started = asyncio.ensure_future(terminal.started.wait())
        try:
            await asyncio.wait({started, terminal.task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            started.cancel()
        if not terminal.started.is_set():
            self.by_id.pop(terminal_id, None)
            outcome = terminal.task.result() if terminal.task.done() and not terminal.task.cancelled() else None
            message = getattr(outcome, "message", "") or "the command did not start"
            raise RequestError.internal_error({"details": message})
        return terminal_id

    def get(self, terminal_id: str) -> Terminal:
        terminal = self.by_id.get(terminal_id)
        if terminal is None:
            raise RequestError.invalid_params({"terminalId": f"no terminal {terminal_id!r}"})
        return terminal

    def output(self, terminal_id: str) -> tuple[str, bool, tuple[int | None, str | None] | None]:
        terminal = self.get(terminal_id)
        return bytes(terminal.output).decode("utf-8", "replace"), terminal.truncated, terminal.exit_status

    async def wait_for_exit(self, terminal_id: str) -> tuple[int | None, str | None]:
        terminal = self.get(terminal_id)
        await terminal.finished.wait()
        return terminal.exit_status or (None, None)

    async def kill(self, terminal_id: str) -> None:
        await self._stop(self.get(terminal_id))

    async def release(self, terminal_id: str) -> None:
        terminal = self.by_id.pop(terminal_id, None)
        if terminal is not None:
            await self._stop(terminal)

    async def _stop(self, terminal: Terminal) -> None:
        """End the command (its group) and wait for its row's result. One still waiting for its
        approval has nothing to stop: the turn's end cancels its call."""
        if terminal.run is None:
            return
        if not terminal.finished.is_set():
            with contextlib.suppress(Exception):
                await terminal.run.stop(GRACE_S)
        if terminal.task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(terminal.task), GRACE_S * 2)

    async def stop_turn(self, turn_id: str | None) -> None:
        """The turn is over: a command of it still running is stopped (its row gets its result)."""
        for terminal in list(self.by_call.values()):
            if terminal.turn_id == turn_id and not terminal.finished.is_set():
                await self._stop(terminal)

    async def close(self) -> None:
        for terminal in list(self.by_call.values()):
            if terminal.task is not None and not terminal.task.done():
                await self._stop(terminal)
                terminal.task.cancel()

    def display(self, terminal_id: str) -> BashOutputDisplay | None:
        terminal = self.by_id.get(terminal_id)
        if terminal is None:
            return None
        if terminal.display is not None:
            return terminal.display
        text = bytes(terminal.output).decode("utf-8", "replace")
        return BashOutputDisplay(command=terminal.command, segments=[OutputSegment(stream="stdout", text=text)],
                                 total_bytes=len(terminal.output))
