"""Claude Code's stream-json (and json) for a headless run: a `system/init` line, an `assistant` line
per model step, a `user` line per tool result (in model order), and a final `result` line.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import IO, Any, Literal

from tui_app.runtime.agent import TurnResult
from tui_app.runtime.events import (
    AssistantText,
    AssistantThinking,
    McpServerStatus,
    ModelRetry,
    ModelStepEnded,
    ToolBatchComplete,
    ToolCallError,
    ToolCallRequested,
    ToolCallResult,
)
from tui_app.runtime.messages import thinking_text
from tui_app.runtime.results.sanitize import neutralize
from tui_app.runtime.session import Session

OutputFormat = Literal["text", "json", "stream-json", "events"]
DENIAL_CODES = {"permission_denied", "no_permission_client", "user_denied", "hook_denied"}


def tool_use_result(event: ToolCallResult | ToolCallError) -> dict[str, Any] | None:
    """The structured side of a result, as Claude Code's `tool_use_result` carries it."""
    display = event.display
    if display is None:
        return None
    if display.kind == "bash_output":
        stdout = "".join(s.text for s in display.segments if s.stream == "stdout")
        stderr = "".join(s.text for s in display.segments if s.stream == "stderr")
        return {"stdout": stdout, "stderr": stderr, "interrupted": display.interrupted,
                "exit_code": display.exit_code}
    if display.kind == "file_diff":
        return {"filePath": display.path, "type": display.operation,
                "structuredPatch": [h.model_dump() for h in display.hunks]}
    if display.kind == "todo_list":
        return {"newTodos": [t.model_dump() for t in display.todos]}
    return None



def stream_json_thinking(raw: dict[str, Any]) -> dict[str, Any]:
    """A thinking block as Claude Code's stream-json has them: Anthropic's as they came; the
    reasoning an OpenAI-compatible server streamed as a `thinking` block without a signature."""
    if raw.get("type") in ("thinking", "redacted_thinking"):
        return dict(raw)
    return {"type": "thinking", "thinking": thinking_text(raw) or "", "signature": ""}

@dataclass
class Transcript:
    """Collects what the result line needs, and writes stream-json lines as events arrive."""

    session: Session
    fmt: OutputFormat
    out: IO[str]
    inputs: dict[str, tuple[str, Any]] = field(default_factory=dict)
    denials: list[dict[str, Any]] = field(default_factory=list)
    step_blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    results: dict[str, ToolCallResult | ToolCallError] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    mcp_servers: list[dict[str, str]] = field(default_factory=list)

    def write(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    def init_line(self) -> None:
        if self.fmt != "stream-json":
            return
        self.write({
            "type": "system", "subtype": "init", "session_id": self.session.id, "cwd": self.session.cwd,
            "model": self.session.model_name, "tools": [t.name for t in self.session.tool_menu],
            "mcp_servers": self.mcp_servers, "permissionMode": self.session.permission_mode,
        })

    def on_event(self, event: Any) -> None:
        if self.fmt == "events":
            if not event.ephemeral:
                self.out.write(event.model_dump_json() + "\n")
            return
        if isinstance(event, ModelRetry) and self.fmt == "text":
            # nothing else is printed until the answer: say why the wait is long
            sys.stderr.write(f"vigil: {neutralize(event.reason)}; retrying in {event.wait_ms / 1000:.1f} s "
                             f"(attempt {event.attempt} of {event.max_attempts})\n")
        elif isinstance(event, McpServerStatus):
            self.mcp_servers = [s for s in self.mcp_servers if s["name"] != event.server]
            self.mcp_servers.append({"name": event.server, "status": event.status})
        elif isinstance(event, AssistantText):
            self.step_blocks[event.index] = {"type": "text", "text": event.text}
        elif isinstance(event, AssistantThinking):
            self.step_blocks[event.index] = stream_json_thinking(event.raw)
        elif isinstance(event, ToolCallRequested):
            call_id = event.call_id or ""
            self.inputs[call_id] = (event.name, event.input)
            self.order.append(call_id)
            self.step_blocks[event.index] = {"type": "tool_use", "id": call_id, "name": event.name,
                                             "input": event.input}
        elif isinstance(event, ModelStepEnded):
            self._assistant_line(event)
        elif isinstance(event, ToolCallResult | ToolCallError):
            self.results[event.call_id or ""] = event
            if isinstance(event, ToolCallError) and event.code in DENIAL_CODES:
                name, data = self.inputs.get(event.call_id or "", (event.tool, {}))
                self.denials.append({"tool_name": name, "tool_use_id": event.call_id, "tool_input": data})
        elif isinstance(event, ToolBatchComplete):
            self._user_lines()

    def _assistant_line(self, event: ModelStepEnded) -> None:
        blocks = [self.step_blocks[i] for i in sorted(self.step_blocks)]
        self.step_blocks = {}
        if self.fmt != "stream-json" or not blocks:
            return
        self.write({"type": "assistant", "session_id": self.session.id, "message": {
            "role": "assistant", "model": self.session.model_name, "content": blocks,
            "stop_reason": event.stop_reason, "usage": event.usage}})

    def _user_lines(self) -> None:
        order, self.order = self.order, []
        if self.fmt != "stream-json":
            return
        for call_id in order:
            result = self.results.pop(call_id, None)
            if result is None:
                continue
            content = result.model_content
            line: dict[str, Any] = {"type": "user", "session_id": self.session.id, "message": {
                "role": "user", "content": [{
                    "type": "tool_result", "tool_use_id": call_id,
                    "content": content if isinstance(content, str) else [b.model_dump() for b in content],
                    "is_error": isinstance(result, ToolCallError)}]}}
            structured = tool_use_result(result)
            if structured is not None:
                line["tool_use_result"] = structured
            self.write(line)

    def result_object(self, turn: TurnResult, duration_ms: int) -> dict[str, Any]:
        subtype = {"completed": "success", "stopped": "success", "max_turns": "error_max_turns"}.get(
            turn.reason, "error_during_execution")
        obj: dict[str, Any] = {
            "type": "result", "subtype": subtype, "is_error": subtype != "success",
            "session_id": self.session.id, "result": turn.text, "num_turns": turn.steps,
            "duration_ms": duration_ms, "usage": turn.usage, "permission_denials": self.denials,
        }
        if subtype != "success":
            obj["errors"] = [turn.error or turn.reason]
        return obj
