"""What every external agent driver shares: the turn as the session tells it, the calls, the gate
to Vigil's policy and dialog, the permission mode kept in step with the agent.

A driver is the session's agent (a `runtime.agent.Agent`, see docs/architecture.md). It
subclasses `ExternalAgent` and supplies the protocol: `connect` (start the agent, its process in its own group in the
session's cwd), `run_prompt` (one prompt until the agent ends its turn, or the user interrupts
it), `set_agent_mode` and `disconnect`. Everything the agent reports becomes SessionEvents through
`self.calls`; every permission question goes through `self.gate`. The base class frames the turn
exactly like the built-in agent (TurnStarted, UserMessage, …, TurnEnded, a result for every
call), runs Vigil's UserPromptSubmit hooks, and restarts an agent that exited before the next
turn, so a crash costs the turn it happened in and nothing of the session.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from tui_app.agents.calls import CallBook
from tui_app.agents.gate import Gate
from tui_app.agents.process import AgentStartError
from tui_app.agents.prompt_router import route
from tui_app.agents.user_shell import run_user_command
from tui_app.runtime.agent import Agent, Intent, TurnResult
from tui_app.runtime.commands import CommandFact
from tui_app.runtime.events import (
    AgentCapabilities,
    AgentCommand,
    PermissionModeChanged,
    TurnEnded,
    TurnStarted,
    UserMessage,
    Warning,
)
from tui_app.runtime.executor import TurnControl

INTERRUPTED_MESSAGE = "Interrupted by the user."


@dataclass
class TurnOutcome:
    """How the agent ended a turn, in Vigil's words (TurnEnded.reason)."""

    reason: str = "completed"
    text: str = ""
    error: str | None = None
    usage: dict[str, int] = field(default_factory=dict)


class ExternalAgent(Agent):
    #: the agent's name in events and on the command line ("claude-code")
    name = "external"
    #: its name in sentences ("Claude Code")
    label = "The agent"
    #: it shows its model its own tools, connects its own MCP servers and has commands of its own;
    #: the user's `!` commands reach it with the next prompt
    capabilities = AgentCapabilities(own_tools=True, own_mcp=True, own_commands=True, shell=True)

    def __init__(self, *, model: str = "") -> None:
        super().__init__(model=model)
        self.session: Any = None
        self.calls: CallBook | None = None
        self.gate: Gate | None = None
        #: the permission mode the agent was last told or reported (Vigil's words)
        self.agent_mode: str | None = None
        #: the output of the user's own `!` commands since the last prompt: it goes with the next one
        self.shell_context: list[str] = []
        #: the slash commands the agent reported (they complete in the prompt box)
        self.agent_commands: list[AgentCommand] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    # ---- what a protocol supplies -------------------------------------------------------------

    async def connect(self) -> None:
        """Start the agent (raise AgentStartError with one line for the user)."""
        raise NotImplementedError

    @property
    def connected(self) -> bool:
        raise NotImplementedError

    async def run_prompt(self, prompt: str, context: list[str], control: TurnControl) -> TurnOutcome:
        raise NotImplementedError

    async def set_agent_mode(self, mode: str) -> None:
        """Tell the agent the session's permission mode changed (Vigil's name of the mode)."""

    async def disconnect(self) -> None:
        """Stop the agent and everything it started."""

    # ---- the Agent interface -------------------------------------------------------------------

    async def astart(self, session: Any) -> None:
        self.session = session
        self.calls = CallBook(session, self.label)
        self.gate = Gate(session, self.label)
        self.agent_mode = session.permission_mode
        session.subscribe(self._watch)
        try:
            await self.connect()
        except AgentStartError as exc:  # said now; each turn tries again and says it again
            session.emit(Warning(code="agent_start_failed", message=str(exc)))

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await self.disconnect()

    def commands(self) -> list[CommandFact]:
        return [CommandFact(name=c.name, description=c.description, hint=c.hint, kind="agent")
                for c in self.agent_commands]

    def route(self, text: str) -> Intent:
        return route(text, None)  # its slash commands are its own: the text goes to it as typed

    async def run_shell(self, session: Any, command: str, control: TurnControl) -> int | None:
        return await run_user_command(session, command, control)

    async def run_turn(self, session: Any, prompt: str, control: TurnControl, turn_id: str) -> TurnResult:
        started = time.perf_counter()
        emit = session.emit
        assert self.calls is not None, "the session starts its agent before the first turn"
        emit(TurnStarted(turn_id=turn_id, prompt=prompt, client=session.turn_client))
        self.calls.begin_turn(turn_id)
        submitted = await session.hooks.user_prompt_submit(session.hook_session_info(), prompt)
        if submitted.blocked:
            message = submitted.reason or "Prompt blocked by UserPromptSubmit hook"
            emit(TurnEnded(turn_id=turn_id, reason="rejected", message=message))
            return TurnResult(turn_id=turn_id, reason="rejected", error=message)
        emit(UserMessage(turn_id=turn_id, text=prompt))
        for extra in submitted.context:
            emit(UserMessage(turn_id=turn_id, text=extra, source="hook"))
        context = [*self.shell_context, *submitted.context]
        self.shell_context = []
        try:
            if not self.connected:
                await self.connect()
            outcome = await self.run_prompt(prompt, context, control)
        except AgentStartError as exc:
            outcome = TurnOutcome("error", error=str(exc))
        if control.is_aborted and outcome.reason == "completed":
            outcome.reason = "interrupted"
        if self.gate is not None:
            self.gate.forget()
        if outcome.reason == "interrupted":
            self.calls.settle_open("cancel", "cancelled", "Tool call cancelled: the user interrupted the turn.")
        else:
            self.calls.settle_open("execute", "execution_failed",
                                   outcome.error or f"{self.label} ended its turn without reporting this call.")
        steps = self.calls.steps_in_turn
        emit(TurnEnded(turn_id=turn_id, reason=outcome.reason, steps=steps,  # type: ignore[arg-type]
                       message=outcome.error or "", usage=outcome.usage,
                       duration_ms=int((time.perf_counter() - started) * 1000)))
        return TurnResult(turn_id=turn_id, reason=outcome.reason, text=outcome.text, steps=steps,
                          usage=outcome.usage, error=outcome.error)

    # ---- the permission mode, both ways -------------------------------------------------------

    def _watch(self, event: Any) -> None:
        if isinstance(event, PermissionModeChanged) and event.mode != self.agent_mode:
            self.agent_mode = event.mode
            self.spawn(self.set_agent_mode(event.mode))
        elif isinstance(event, UserMessage) and event.source == "shell" and event.turn_id is None:
            self.shell_context.append(event.text)

    def agent_changed_mode(self, mode: str) -> None:
        """The agent switched its mode by itself (a plan approved): the session follows."""
        self.agent_mode = mode
        self.session.controller.writes.set_mode(mode)

    # ---- helpers ------------------------------------------------------------------------------

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        """A task the driver owns (cancelled when the session closes)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None and self.session is not None:
            self.session.emit(Warning(code="agent_driver_error",
                                      message=f"{self.label} driver: {task.exception()!r}"))
