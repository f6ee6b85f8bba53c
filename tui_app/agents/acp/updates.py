"""ACP `session/update` notifications → Vigil's SessionEvents, through the driver's CallBook.

ACP has no model steps; a step here is one stretch of the agent's reply: it opens with the first
text, thought or call of a turn and a new one opens when the agent's message id changes or when it
speaks again after calls (it has seen their results). Text and thoughts stream as deltas and are
closed into one AssistantText / AssistantThinking when something else comes. `tool_call` and
`tool_call_update` are merged per call (tool_calls.AcpCall) and become the call's row when it is
asked about or when the agent says it is in progress, in that order: an agent's first word on a
call is often a placeholder (OpenCode's `{}`), and some report a call in_progress just before they
ask about it (Codex, OpenCode). So in_progress neither starts the row nor says "allowed by the
agent": the next
message from the agent decides (`observe`, which sees every message in the order it arrived) —
the call's permission request makes it Vigil's to decide, anything else means the agent runs it
unasked, and it started when the agent said so. Settled on completed / failed. A `plan` is shown
like TodoWrite (a row with the list). Modes and commands go to the driver, which tells the session.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Protocol

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from tui_app.agents.acp.results import result_display, snapshot
from tui_app.agents.acp.tool_calls import AcpCall
from tui_app.agents.calls import CallBook
from tui_app.runtime.display import TodoItem, TodoListDisplay
from tui_app.runtime.events import (
    AssistantText,
    AssistantTextDelta,
    AssistantThinking,
    AssistantThinkingDelta,
    TodoUpdated,
)


class UpdatesLink(Protocol):
    """What the translator needs of the agent it serves: the session to report to, the turn's call
    book, and the agent's own reports of modes and commands (docs/architecture.md §11)."""

    session: Any
    calls: CallBook | None
    label: str
    model: str
    aborting: bool

    def mode_reported(self, mode_id: str) -> None: ...

    def commands_reported(self, commands: list[Any]) -> None: ...

    def terminal_display(self, terminal_id: str) -> Any: ...


#: how a failed call's text says the user (Vigil) refused it
REFUSED_WORDS = ("refused permission", "rejected", "denied", "not allowed", "cancelled", "canceled")
PLAN_STATUSES = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}


class UpdateTranslator:
    def __init__(self, agent: UpdatesLink) -> None:
        self.agent = agent
        self.calls: dict[str, AcpCall] = {}
        self.step: int | None = None
        self.step_message: str | None = None
        self.step_has_calls = False
        self.next_index = 0
        #: the open text or thinking block: (kind, index, parts)
        self.block: tuple[str, int, list[str]] | None = None
        self.last_text = ""
        self.plans = 0
        self.interrupted = False
        #: calls the agent said are in progress before Vigil was asked about them: id → since when
        self.announced: dict[str, float] = {}
        #: calls whose permission request arrived this turn
        self.asked: set[str] = set()
        #: calls the agent runs unasked (seen by `observe` before their update was handled): id → since
        self.unasked: dict[str, float] = {}
        #: session/load replays the agent's history: Vigil's log has it already
        self.loading = False

    @property
    def book(self) -> CallBook:
        assert self.agent.calls is not None
        return self.agent.calls

    # ---- turns and steps ----------------------------------------------------------------------

    def begin_turn(self) -> None:
        self.step = None
        self.step_message = None
        self.step_has_calls = False
        self.block = None
        self.last_text = ""
        self.interrupted = False
        self.announced.clear()
        self.asked.clear()
        self.unasked.clear()

    def end_turn(self, usage: dict[str, int] | None = None, stop_reason: str | None = None) -> None:
        self._close_block()
        if self.step is None and usage:
            self._open_step(None)  # the usage has a step to be counted in
        if self.step is not None:
            self.book.close_step(self.step, stop_reason, usage)
        self.step = None

    def _open_step(self, message_id: str | None) -> int:
        self._close_block()
        if self.step is not None:
            self.book.close_step(self.step, "tool_use" if self.step_has_calls else None)
        self.step = self.book.open_step(self.agent.model)
        self.step_message = message_id
        self.step_has_calls = False
        self.next_index = 0
        return self.step

    def _step_for_text(self, message_id: str | None) -> int:
        if (self.step is None or self.step_has_calls
                or (message_id is not None and self.step_message is not None and message_id != self.step_message)):
            return self._open_step(message_id)
        if self.step_message is None:
            self.step_message = message_id
        return self.step

    def _step_for_call(self) -> int:
        return self.step if self.step is not None else self._open_step(None)

    def place(self) -> tuple[int, int]:
        """(step, index) for a call Vigil runs for the agent (a write, a terminal) in this step."""
        step = self._step_for_call()
        self._close_block()
        self.step_has_calls = True
        index = self.next_index
        self.next_index += 1
        return step, index

    # ---- text and thoughts --------------------------------------------------------------------

    def _chunk(self, kind: str, update: Any) -> None:
        content = update.content
        text = content.text if isinstance(content, TextContentBlock) else f"[{getattr(content, 'type', 'content')}]"
        if not text or self.book.turn_id is None:
            return
        step = self._step_for_text(update.message_id)
        if self.block is None or self.block[0] != kind:
            self._close_block()
            self.block = (kind, self.next_index, [])
            self.next_index += 1
        _, index, parts = self.block
        parts.append(text)
        delta = AssistantTextDelta if kind == "text" else AssistantThinkingDelta
        self.agent.session.emit(delta(turn_id=self.book.turn_id, step=step, index=index, text=text))

    def _close_block(self) -> None:
        if self.block is None or self.step is None:
            self.block = None
            return
        kind, index, parts = self.block
        self.block = None
        text = "".join(parts)
        if kind == "text":
            self.last_text = text
            self.agent.session.emit(AssistantText(turn_id=self.book.turn_id, step=self.step, index=index, text=text))
        else:
            self.agent.session.emit(AssistantThinking(turn_id=self.book.turn_id, step=self.step, index=index,
                                                      raw={"type": "thinking", "thinking": text, "signature": ""}))

    # ---- calls ------------------------------------------------------------------------------

    def track(self, update: ToolCallStart | ToolCallProgress | ToolCallUpdate, *, row: bool = True) -> AcpCall:
        """Merge what the agent says about a call; with `row`, its row is requested (once)."""
        call = self.calls.get(update.tool_call_id)
        if call is None:
            call = self.calls[update.tool_call_id] = AcpCall(update.tool_call_id)
        call.merge(update)
        snapshot(call)
        if row:
            self._row(call)
        return call

    def _row(self, call: AcpCall) -> None:
        if self.book.turn_id is not None and self.book.get(call.call_id) is None:
            step = self._step_for_call()
            self._close_block()
            self.step_has_calls = True
            self.book.request(call.call_id, call.tool_name, call.row_input, step, self.next_index)
            self.next_index += 1

    def _tool_call(self, update: ToolCallStart | ToolCallProgress) -> None:
        status = update.status
        entry = self.book.get(update.tool_call_id)
        known = entry is not None and (entry.decided_by_vigil or entry.started_at is not None)
        runs_unasked = update.tool_call_id in self.unasked
        # a pending call is not a row yet (its input is often a placeholder); in_progress is one,
        # not yet started (it may still be asked about)
        call = self.track(update, row=known or runs_unasked or status in ("in_progress", "completed", "failed"))
        book = self.book
        label = self.agent.label
        if status == "in_progress":
            if known:
                book.start(call.call_id, call.row_input, target=call.target)
            elif runs_unasked:
                self._ran_unasked(call.call_id)
        elif status == "completed":
            book.start(call.call_id, call.row_input, agent_decision=f"allowed by {label}", target=call.target,
                       at=self.unasked.pop(call.call_id, None))
            book.finish(call.call_id, call.text(), is_error=False,
                        display=result_display(call, self.agent.terminal_display))
        elif status == "failed":
            self._failed(call)

    # ---- the order of what the agent says ------------------------------------------------------

    def observe(self, event: Any) -> None:
        """Every message, as it arrives (before it is handled): a call announced in_progress and
        followed by anything but its own permission request runs without Vigil being asked."""
        if getattr(getattr(event, "direction", None), "value", None) != "incoming" or self.loading:
            return
        message = event.message
        method = message.get("method")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        asked = None
        if method == "session/request_permission":
            tool_call = params.get("toolCall") if isinstance(params.get("toolCall"), dict) else {}
            asked = tool_call.get("toolCallId")
            self.asked.add(asked)
            self.announced.pop(asked, None)
        if self.announced:
            loop = asyncio.get_running_loop()
            for call_id, since in self.announced.items():
                self.unasked[call_id] = since
                loop.call_soon(self._ran_unasked, call_id)  # after the update before it is handled
            self.announced.clear()
        if method == "session/update":
            update = params.get("update") if isinstance(params.get("update"), dict) else {}
            call_id = update.get("toolCallId")
            kind = update.get("sessionUpdate")
            if (kind in ("tool_call", "tool_call_update") and update.get("status") == "in_progress"
                    and call_id not in self.asked and call_id not in self.unasked):
                self.announced[call_id] = time.perf_counter()

    def _ran_unasked(self, call_id: str) -> None:
        call = self.calls.get(call_id)
        if call is None or self.agent.calls is None or self.book.turn_id is None or call_id not in self.unasked:
            return  # its update is not handled yet (it starts then), or the turn is over
        entry = self.book.get(call_id)
        if entry is not None and (entry.decided_by_vigil or entry.settled):
            return
        self._row(call)
        self.book.start(call_id, call.row_input, agent_decision=f"allowed by {self.agent.label}", target=call.target,
                        at=self.unasked.pop(call_id))

    def _failed(self, call: AcpCall) -> None:
        book = self.book
        text = call.text() or f"{self.agent.label} reports that the call failed."
        entry = book.get(call.call_id)
        error = None
        if entry is not None and entry.denial is None and entry.started_at is None:
            lowered = text.lower()
            if self.interrupted or self.agent.aborting:
                error = ("cancel", "cancelled", "Tool call cancelled: the user interrupted the turn.")
            elif any(word in lowered for word in REFUSED_WORDS):
                book.denied_by_agent(call.call_id, f"denied by {self.agent.label}: {text}")
                error = ("permission", "permission_denied", text)
        if error is None and entry is not None and entry.started_at is None and not entry.decided_by_vigil:
            book.start(call.call_id, call.row_input, agent_decision=f"allowed by {self.agent.label}",
                       target=call.target, at=self.unasked.pop(call.call_id, None))
        book.finish(call.call_id, text, is_error=True, display=result_display(call, self.agent.terminal_display),
                    error=error, agent_decision=f"allowed by {self.agent.label}")

    # ---- plans ------------------------------------------------------------------------------

    def _plan(self, update: AgentPlanUpdate) -> None:
        book = self.book
        if book.turn_id is None:
            return
        self.plans += 1
        call_id = f"plan-{book.turn_id}-{self.plans}"
        todos = [{"content": e.content, "status": PLAN_STATUSES.get(e.status, "pending"), "activeForm": e.content,
                  "priority": e.priority} for e in update.entries]
        step = self._step_for_call()
        self._close_block()
        self.step_has_calls = True
        book.request(call_id, "TodoWrite", {"todos": todos}, step, self.next_index)
        self.next_index += 1
        book.decided_by_vigil(call_id)  # a plan is news, not an action anyone allowed
        book.start(call_id, {"todos": todos}, target=f"{len(todos)} items")
        self.agent.session.emit(TodoUpdated(turn_id=book.turn_id, call_id=call_id, todos=todos))  # the plan panel
        done = sum(1 for t in todos if t["status"] == "completed")
        display = TodoListDisplay(todos=[TodoItem(content=t["content"], status=t["status"],  # type: ignore[arg-type]
                                                  active_form=t["content"]) for t in todos])
        book.finish(call_id, f"Plan updated: {done} of {len(todos)} done", is_error=False, display=display)

    # ---- the notification ---------------------------------------------------------------------

    def update(self, update: Any) -> None:
        if isinstance(update, AgentMessageChunk):
            self._chunk("text", update)
        elif isinstance(update, AgentThoughtChunk):
            self._chunk("thinking", update)
        elif isinstance(update, ToolCallStart | ToolCallProgress):
            if self.book.turn_id is not None:
                self._tool_call(update)
        elif isinstance(update, AgentPlanUpdate):
            self._plan(update)
        elif isinstance(update, CurrentModeUpdate):
            self.agent.mode_reported(update.current_mode_id)
        elif isinstance(update, AvailableCommandsUpdate):
            self.agent.commands_reported(update.available_commands)
        elif isinstance(update, ConfigOptionUpdate):
            for option in update.config_options:
                inner = getattr(option, "root", option)
                if getattr(inner, "category", None) == "mode" or getattr(inner, "id", None) == "mode":
                    value = getattr(inner, "current_value", None)
                    if isinstance(value, str):
                        self.agent.mode_reported(value)
        # user message chunks (a replayed history), usage and session info are not news for the log
