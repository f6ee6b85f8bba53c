"""Claude Code's stream-json lines → Vigil's SessionEvents, through the driver's CallBook.

Each API response is a model step: it opens with `stream_event` message_start (or its first
`assistant` line), streams text and thinking deltas, brings each finished content block as an
`assistant` line (blocks of one response share `message.id`), and closes with message_stop.
Tool results come back as `user` lines with `tool_result` blocks and a structured
`tool_use_result`. Lines of a sub-agent (`parent_tool_use_id` set) bring calls, which are shown
and pass Vigil's gate like any other, but not their text.
"""

from __future__ import annotations

from typing import Any

from tui_app.agents.calls import CallBook, observation
from tui_app.agents.claude_code.results import decision_words, display_of, meta_of, refused_by_agent
from tui_app.runtime.events import AssistantText, AssistantTextDelta, AssistantThinking, AssistantThinkingDelta

LABEL = "Claude Code"
#: the note Claude Code adds after an interrupt; not a prompt of the user's
INTERRUPT_NOTE = "[Request interrupted by user"


class StreamTranslator:
    def __init__(self, book: CallBook) -> None:
        self.book = book
        self.session = book.session
        #: message id → step number, and how many of its blocks were seen
        self.step_of: dict[str, int] = {}
        self.blocks_seen: dict[str, int] = {}
        self.usage: dict[int, dict[str, int]] = {}
        self.stop_reason: dict[int, str | None] = {}
        self.open_steps: list[int] = []
        self.last_text = ""
        self.interrupted = False

    def begin_turn(self) -> None:
        self.last_text = ""
        self.interrupted = False

    def end_turn(self) -> None:
        for number in list(self.open_steps):
            self._close(number)

    # ---- steps --------------------------------------------------------------------------------

    def _step(self, message_id: str, model: str = "", starts: bool = False) -> int:
        """The step of a response; `starts`: its message_start, which always opens a new step
        (a proxy or a test server may give every response the same message id)."""
        number = None if starts else self.step_of.get(message_id)
        if number is None:
            for older in list(self.open_steps):  # a new response: the one before it is over
                self._close(older)
            number = self.step_of[message_id] = self.book.open_step(model)
            self.blocks_seen[message_id] = 0
            self.open_steps.append(number)
        return number

    def _close(self, number: int) -> None:
        if number in self.open_steps:
            self.open_steps.remove(number)
            self.book.close_step(number, self.stop_reason.get(number), self.usage.get(number))

    # ---- lines --------------------------------------------------------------------------------

    def stream_event(self, line: dict[str, Any]) -> None:
        event = line.get("event")
        if not isinstance(event, dict) or line.get("parent_tool_use_id"):
            return
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            number = self._step(str(message.get("id") or line.get("uuid") or ""), str(message.get("model") or ""),
                                starts=True)
            self.usage[number] = _ints(message.get("usage"))
            return
        message_id = line.get("api_message_id")
        number = self.step_of.get(str(message_id)) if message_id else (self.open_steps[-1] if self.open_steps else None)
        if number is None:
            return
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            index = int(event.get("index") or 0)
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                self.session.emit(AssistantTextDelta(turn_id=self.book.turn_id, step=number, index=index,
                                                     text=delta["text"]))
            elif delta.get("type") == "thinking_delta" and isinstance(delta.get("thinking"), str):
                self.session.emit(AssistantThinkingDelta(turn_id=self.book.turn_id, step=number, index=index,
                                                         text=delta["thinking"]))
        elif kind == "message_delta":
            self.stop_reason[number] = (event.get("delta") or {}).get("stop_reason")
            usage = self.usage.setdefault(number, {})
            usage.update({k: v for k, v in _ints(event.get("usage")).items() if v or k not in usage})
        elif kind == "message_stop":
            self._close(number)

    def assistant(self, line: dict[str, Any]) -> None:
        message = line.get("message")
        if not isinstance(message, dict):
            return
        sub_agent = bool(line.get("parent_tool_use_id"))
        message_id = str(message.get("id") or line.get("uuid") or "")
        number = 0 if sub_agent else self._step(message_id, str(message.get("model") or ""))
        for block in message.get("content") or ():
            if not isinstance(block, dict):
                continue
            index = self.blocks_seen.get(message_id, 0)
            self.blocks_seen[message_id] = index + 1
            kind = block.get("type")
            if kind == "tool_use":
                self.book.request(str(block.get("id") or f"{message_id}_{index}"), str(block.get("name") or ""),
                                  block.get("input", {}), number, index)
            elif sub_agent:
                continue
            elif kind == "text" and isinstance(block.get("text"), str):
                self.last_text = block["text"]
                self.session.emit(AssistantText(turn_id=self.book.turn_id, step=number, index=index,
                                                text=block["text"]))
            elif kind in ("thinking", "redacted_thinking"):
                self.session.emit(AssistantThinking(turn_id=self.book.turn_id, step=number, index=index,
                                                    raw=dict(block)))

    def user(self, line: dict[str, Any]) -> None:
        message = line.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        structured = line.get("tool_use_result")
        for block in results:
            self.result(str(block.get("tool_use_id") or ""), block, structured if len(results) == 1 else None, line)

    def result(self, call_id: str, block: dict[str, Any], structured: Any, line: dict[str, Any]) -> None:
        call = self.book.get(call_id)
        if call is None:
            return
        content = observation(block.get("content"))
        is_error = bool(block.get("is_error"))
        text = content if isinstance(content, str) else ""
        meta = meta_of(call_id, line)
        error = None
        if is_error and call.denial is None:
            if call.started_at is None and not meta.get("permission_decision") and not self.interrupted:
                # refused by its own checks before any permission was decided (bad input, a string
                # not in the file): it never ran, and nobody allowed it
                error = ("precondition", "precondition_failed", _untagged(text))
            elif refused_by_agent(meta) and call.started_at is None and not self.interrupted:
                reason = decision_words(meta, LABEL, "denied")
                self.book.denied_by_agent(call_id, f"{reason}: {text}" if text else reason)
                error = ("permission", "permission_denied", text or reason)
            elif self.interrupted or (isinstance(structured, dict) and structured.get("interrupted")):
                error = ("cancel", "cancelled", "Tool call cancelled: the user interrupted the turn.")
        display = display_of(call.name, call.input, structured, text, is_error)
        self.book.finish(call_id, content, is_error=is_error, display=display, error=error,
                         agent_decision=decision_words(meta, LABEL, "allowed"))

    def task_started(self, line: dict[str, Any]) -> None:
        """A long-running call reports itself (a Bash past a few seconds): it is running now."""
        call_id = line.get("tool_use_id")
        if isinstance(call_id, str):
            self.book.start(call_id, agent_decision=f"allowed by {LABEL}")


def _untagged(text: str) -> str:
    return text.removeprefix("<tool_use_error>").removesuffix("</tool_use_error>").strip() or "refused"


def _ints(usage: Any) -> dict[str, int]:
    if not isinstance(usage, dict):
        return {}
    return {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
