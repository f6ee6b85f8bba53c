"""A session's events as ACP `session/update` notifications, in order.

    AssistantTextDelta / AssistantThinkingDelta   agent_message_chunk / agent_thought_chunk
    ToolCallRequested                             tool_call (pending: title, kind, raw input, locations)
    PermissionRequested                           tool_call_update with the diff Vigil computed
    ToolCallStarted / ToolCallProgress            tool_call_update in_progress (output so far)
    ToolCallResult / ToolCallError                tool_call_update completed / failed (diff or text)
    PermissionModeChanged                         current_mode_update

Session events arrive synchronously; notifications are sent by one task, in arrival order, so a
tool call is never updated before it was announced. `drain()` waits until everything queued is
sent: a prompt's response comes after its last update, as ACP requires.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.helpers import update_current_mode
from acp.schema import ToolCallLocation

from tui_app.runtime.display import FileDiffDisplay
from tui_app.runtime.events import (
    AssistantText,
    AssistantTextDelta,
    AssistantThinking,
    AssistantThinkingDelta,
    ModelStepEnded,
    PermissionModeChanged,
    PermissionRequested,
    ToolCallError,
    ToolCallProgress,
    ToolCallRequested,
    ToolCallResult,
    ToolCallStarted,
    TurnStarted,
)
from tui_app.runtime.messages import content_text, thinking_text

KINDS = {"Read": "read", "ReadArtifact": "read", "Glob": "search", "Grep": "search", "Edit": "edit",
         "MultiEdit": "edit", "Write": "edit", "Bash": "execute", "TaskOutput": "read", "TaskStop": "execute",
         "WebFetch": "fetch", "TodoWrite": "think", "AskUserQuestion": "other"}
#: output of a running command shown in the client, from its end
OUTPUT_TAIL_CHARS = 8000
#: a result's text shown in the client (the model's copy obeys the tool's own budget)
RESULT_TEXT_CHARS = 20000

Send = Callable[[Any], Awaitable[None]]


def tool_kind(name: str) -> str:
    return KINDS.get(name, "other")


def tool_title(name: str, data: Any, cwd: str) -> str:
    if not isinstance(data, dict):
        return name
    if name == "Bash" and isinstance(data.get("command"), str):
        return data["command"].strip().splitlines()[0][:200] if data["command"].strip() else "Bash"
    path = data.get("file_path")
    if isinstance(path, str):
        shown = os.path.relpath(path, cwd) if os.path.isabs(path) and path.startswith(cwd + os.sep) else path
        return f"{name} {shown}"
    for key in ("pattern", "url", "task_id"):
        if isinstance(data.get(key), str):
            return f"{name} {data[key]}"
    return name


def locations_of(data: Any, cwd: str) -> list[ToolCallLocation] | None:
    if isinstance(data, dict) and isinstance(data.get("file_path"), str):
        path = data["file_path"]
        return [ToolCallLocation(path=path if os.path.isabs(path) else os.path.join(cwd, path))]
    return None


def diff_content(display: Any) -> list[Any] | None:
    """ACP's diff content for an edit: the whole old and new text when Vigil kept them."""
    if not isinstance(display, FileDiffDisplay) or display.new_text is None:
        return None
    old = None if display.operation == "create" else display.old_text
    return [tool_diff_content(display.path, display.new_text, old)]


def clip(text: str, limit: int, tail: bool = False) -> str:
    if len(text) <= limit:
        return text
    return "…" + text[-limit:] if tail else text[:limit] + "…"


class AcpUpdates:
    """Subscribed to one session; sends its updates to the client in order."""

    def __init__(self, session_id: str, cwd: str, send: Send) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.send = send
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.output: dict[str, str] = {}
        #: calls whose latest output update is still queued (newer output replaces it in place)
        self._output_queued: set[str] = set()
        self.last_stop_reason: str | None = None
        #: calls that run in the client's terminal (their output is the terminal's)
        self.in_terminal: set[str] = set()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._pump())

    async def close(self) -> None:
        await self.drain()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def drain(self) -> None:
        await self.queue.join()

    def put(self, update: Any) -> None:
        self.queue.put_nowait(update)

    async def _pump(self) -> None:
        while True:
            item = await self.queue.get()
            try:
                update = item() if callable(item) else item
                if update is not None:
                    await self.send(update)
            except Exception:  # a client that cannot take one update still gets the next
                pass
            finally:
                self.queue.task_done()

    # ---- events -------------------------------------------------------------------------------

    def on_event(self, event: Any) -> None:
        if isinstance(event, AssistantTextDelta):
            self.put(update_agent_message_text(event.text))
        elif isinstance(event, AssistantThinkingDelta):
            self.put(update_agent_thought_text(event.text))
        elif isinstance(event, ModelStepEnded):
            self.last_stop_reason = event.stop_reason
        elif isinstance(event, ToolCallRequested):
            self.put(start_tool_call(event.call_id or "", tool_title(event.name, event.input, self.cwd),
                                     kind=tool_kind(event.name), status="pending", raw_input=event.input,
                                     locations=locations_of(event.input, self.cwd)))
        elif isinstance(event, PermissionRequested):
            diff = diff_content(event.preview_display)
            if diff is not None:
                self.put(update_tool_call(event.call_id or "", content=diff))
        elif isinstance(event, ToolCallStarted):
            self.put(update_tool_call(event.call_id or "", status="in_progress", raw_input=event.input,
                                      title=tool_title(event.tool, event.input, self.cwd)))
        elif isinstance(event, ToolCallProgress) and event.kind == "output" and event.text:
            self._output(event.call_id or "", event.text)
        elif isinstance(event, ToolCallResult | ToolCallError):
            self._finished(event)
        elif isinstance(event, PermissionModeChanged):
            self.put(update_current_mode(event.mode))

    def _output(self, call_id: str, text: str) -> None:
        if call_id in self.in_terminal:
            return
        self.output[call_id] = clip(self.output.get(call_id, "") + text, OUTPUT_TAIL_CHARS, tail=True)
        if call_id in self._output_queued:
            return  # the queued update sends the newest output when its turn comes
        self._output_queued.add(call_id)

        def latest() -> Any:
            self._output_queued.discard(call_id)
            return update_tool_call(call_id, content=[tool_content(text_block(self.output.get(call_id, "")))])

        self.put(latest)

    def _finished(self, event: ToolCallResult | ToolCallError) -> None:
        call_id = event.call_id or ""
        self.output.pop(call_id, None)
        content = diff_content(event.display) if isinstance(event, ToolCallResult) else None
        if content is None and call_id not in self.in_terminal:
            content = [tool_content(text_block(clip(content_text(event.model_content), RESULT_TEXT_CHARS)))]
        self.in_terminal.discard(call_id)
        status = "completed" if isinstance(event, ToolCallResult) else "failed"
        raw = event.tool_response if isinstance(event, ToolCallResult) else {"error": event.message,
                                                                            "code": event.code}
        self.put(update_tool_call(call_id, status=status, content=content, raw_output=raw))


def history_updates(events: list[Any], cwd: str) -> list[Any]:
    """A recorded conversation as the updates a client replays on `session/load`."""
    updates: list[Any] = []
    for event in events:
        if isinstance(event, TurnStarted):
            updates.append(update_user_message_text(event.prompt))
        elif isinstance(event, AssistantText):
            updates.append(update_agent_message_text(event.text))
        elif isinstance(event, AssistantThinking):
            text = thinking_text(event.raw)
            if text:
                updates.append(update_agent_thought_text(text))
        elif isinstance(event, ToolCallRequested):
            updates.append(start_tool_call(event.call_id or "", tool_title(event.name, event.input, cwd),
                                           kind=tool_kind(event.name), status="pending", raw_input=event.input,
                                           locations=locations_of(event.input, cwd)))
        elif isinstance(event, ToolCallResult | ToolCallError):
            content = diff_content(event.display) if isinstance(event, ToolCallResult) else None
            if content is None:
                content = [tool_content(text_block(clip(content_text(event.model_content), RESULT_TEXT_CHARS)))]
            updates.append(update_tool_call(event.call_id or "", content=content,
                                            status="completed" if isinstance(event, ToolCallResult) else "failed"))
    return updates
