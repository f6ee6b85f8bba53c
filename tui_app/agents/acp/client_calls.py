"""The agent's requests to Vigil's runtime (fs/write, a read that needs asking, terminal/create),
run as Vigil's own tool calls: the same pipeline as the built-in agent's — Vigil's PreToolUse
hooks, rules, mode, working directories, the dialog with Vigil's preview, the file state, the
process groups and artifacts — and a row of their own in the table.

They use specs of their own (named Write, Read and Bash, so the user's rules and hooks for those
names apply) from a registry of their own, and the session's policy wrapped so that what the
user approved in the agent's permission request is not asked again (approvals.ApprovedFirst).
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from tui_app.agents.acp.approvals import Approvals, ApprovedFirst, command_key, read_key, write_key
from tui_app.runtime.call import CallEnv, ToolCall
from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.events import ToolCallRequested
from tui_app.runtime.outcome import Outcome
from tui_app.runtime.permissions.decision import PermissionQuery
from tui_app.runtime.pipeline import run_call
from tui_app.runtime.registry import ToolRegistry

if TYPE_CHECKING:
    from tui_app.agents.acp.updates import UpdateTranslator
    from tui_app.agents.calls import CallBook


class ClientCallsLink(Protocol):
    """What the client-side calls need of the agent: the session they run in, the turn's call book,
    where a call sits in the turn, and what the user already approved (docs/architecture.md §11)."""

    session: Any
    calls: CallBook | None
    translator: UpdateTranslator
    approvals: Approvals


def approval_key(query: PermissionQuery) -> tuple[str, str] | None:
    data = query.input
    name = query.spec.name
    if name == "Write" and isinstance(data.get("file_path"), str) and isinstance(data.get("content"), str):
        return write_key(data["file_path"], data["content"])
    if name == "Read" and isinstance(data.get("file_path"), str):
        return read_key(data["file_path"])
    if name == "Bash" and isinstance(data.get("command"), str):
        env = data.get("env") if isinstance(data.get("env"), dict) else None
        return command_key(data["command"], data.get("cwd") or query.cwd, env)
    return None


class ClientCalls:
    def __init__(self, agent: ClientCallsLink, specs: list[ToolSpec]) -> None:
        self.agent = agent
        self.registry = ToolRegistry()
        for spec in specs:
            self.registry.register(spec)
        self._ids = itertools.count(1)
        #: calls under way (a dialog may be open for one): each gets its result when the turn ends
        self.running: set[asyncio.Task[Outcome]] = set()

    def env(self, turn_id: str | None) -> CallEnv:
        base = self.agent.session.call_env(turn_id)
        return replace(base, registry=self.registry,
                       policy=ApprovedFirst(base.policy, self.agent.approvals, approval_key))

    def new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    async def run(self, call_id: str, name: str, data: dict[str, Any]) -> Outcome:
        """One call in the current turn: a row (requested in the agent's current step), then the
        pipeline. Only inside a turn (the driver refuses these requests between turns)."""
        agent = self.agent
        book = agent.calls
        assert book is not None and book.turn_id is not None
        step, index = agent.translator.place()
        agent.session.emit(ToolCallRequested(turn_id=book.turn_id, call_id=call_id, step=step, index=index,
                                             name=name, input=data))
        task = asyncio.ensure_future(run_call(ToolCall(call_id, name, data), self.env(book.turn_id)))
        self.running.add(task)
        task.add_done_callback(self.running.discard)
        return await task

    async def end_turn(self) -> None:
        """The turn is over (or cancelled): what is still under way is cancelled (the pipeline gives
        it its result: an open dialog closes, a running command is stopped)."""
        running = list(self.running)
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
