"""Claude Code's stream-json (and json) for a headless run, line for line as Claude Code 2.1.332
writes it: a `system/init` line; an `assistant` line per content block (the blocks of one model
response share `message.id`); before a call that the permission system refused, a `system`
`permission_denied` line; a `user` line per tool result (in model order) with `tool_use_result`;
and a `result` line per turn. Every line carries `session_id` and a `uuid`. With partial messages
on, `stream_event` lines carry the model's stream as it arrives.

The official Agent SDKs (Python and TypeScript) read these lines; their parsers decide which
fields are required, and tests run the Python SDK's parser over every line.
"""

from __future__ import annotations

import secrets
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any, Literal

from tui_app.headless.partial_events import PartialStream
from tui_app.headless.terminal import json_line, terminal_safe_json
from tui_app.headless.usage_report import UsageReport, anthropic_usage
from tui_app.runtime.agent import TurnResult
from tui_app.runtime.events import (
    AssistantText,
    AssistantThinking,
    CompactionStarted,
    ConversationCompacted,
    HookRun,
    LocalCommandRan,
    McpServerStatus,
    ModelRetry,
    ModelStepEnded,
    ModelStepStarted,
    PermissionRequested,
    PermissionResolved,
    ToolBatchComplete,
    ToolCallError,
    ToolCallRequested,
    ToolCallResult,
    Warning,
)
from tui_app.runtime.log.conversation import continuation_text
from tui_app.runtime.messages import content_text, thinking_text
from tui_app.runtime.results.sanitize import neutralize

OutputFormat = Literal["text", "json", "stream-json", "events"]
DENIAL_CODES = {"permission_denied", "no_permission_client", "user_denied", "hook_denied"}
#: refusals of the permission system itself; Claude Code announces these with a `permission_denied`
#: line (a PreToolUse hook's deny and an answer from the SDK's callback are not announced)
ANNOUNCED_DENIALS = {"permission_denied", "no_permission_client"}
#: the Claude Code version whose formats (stream-json, control protocol, hook input) Vigil writes;
#: tests/test_differential_claude.py runs this version side by side with Vigil
CLAUDE_CODE_COMPAT_VERSION = "2.1.332"
TERMINAL_REASONS = {"completed": "completed", "max_turns": "max_turns", "stopped": "hook_stopped",
                    "rejected": "hook_stopped", "error": "model_error"}


def vigil_version() -> str:
    try:
        from importlib.metadata import version

        return version("vigil")
    except Exception:
        return "0.1.0"


def new_uuid() -> str:
    return str(uuid.uuid4())


def timestamp(ts: float | None = None) -> str:
    moment = time.gmtime(ts if ts else time.time())
    millis = int(((ts or time.time()) % 1) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", moment) + f".{millis:03d}Z"


def tool_use_result(event: ToolCallResult | ToolCallError) -> Any:
    """The structured side of a result, as Claude Code's `tool_use_result` carries it: the tool's
    own output for a success (a live run has it), `"Error: <text>"` for a failure."""
    if isinstance(event, ToolCallError):
        return f"Error: {content_text(event.model_content)}"
    if event.tool_response is not None:
        return event.tool_response
    display = event.display  # a replayed log keeps the display, not the output
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
    if display.kind == "file_diffs":
        return {"files": [{"filePath": f.path, "type": f.operation,
                           "structuredPatch": [h.model_dump() for h in f.hunks]} for f in display.files]}
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

    session: Any
    fmt: OutputFormat
    out: IO[str]
    #: `stream_event` lines with the model's stream (`--include-partial-messages`)
    partial: bool = False
    #: `system` `hook_started` / `hook_response` lines (`--include-hook-events`)
    hook_events: bool = False
    inputs: dict[str, tuple[str, Any]] = field(default_factory=dict)
    denials: list[dict[str, Any]] = field(default_factory=list)
    step_blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    results: dict[str, ToolCallResult | ToolCallError] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    mcp_servers: list[dict[str, str]] = field(default_factory=list)
    #: who made each call an ask (`PermissionRequested.decided_by`), for the denial's reason type
    asked_by: dict[str, str] = field(default_factory=dict)
    last_stop_reason: str | None = None
    #: model step → (model, start time, message id)
    _steps: dict[int, tuple[str, float, str]] = field(default_factory=dict)
    _usage: UsageReport | None = None
    _stream: PartialStream | None = None
    #: a subagent's lines name the Agent call they belong to, as Claude Code's do
    parent_tool_use_id: str | None = None
    subagents: dict[str, Transcript] = field(default_factory=dict)

    #: the reader closed our output (`| head -1`): nothing more is written, `on_closed` is told once
    closed: bool = False
    on_closed: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        self._usage = UsageReport(self.session.provider_name, self.session.base_url)
        if self.partial:
            self._stream = PartialStream(self._stream_line)

    def write(self, obj: dict[str, Any]) -> None:
        self._put(json_line(obj) + "\n")

    def _put(self, line: str) -> None:
        if self.closed:
            return
        try:
            self.out.write(line)
            self.out.flush()
        except BrokenPipeError:
            self.closed = True
            if self.on_closed is not None:
                self.on_closed()

    def line(self, obj: dict[str, Any]) -> None:
        """A stream-json line (nothing in the other formats), stamped like Claude Code's."""
        if self.fmt == "stream-json":
            if self.parent_tool_use_id is not None:
                obj = {**obj, "parent_tool_use_id": self.parent_tool_use_id}
            self.write({**obj, "session_id": self.session.id, "uuid": new_uuid()})

    def init_line(self, facts: Any = None) -> None:
        """`system/init`; `facts` (the session's SessionFacts) name its commands, agents, skills and
        plugins (a replay, which has none, lists none)."""
        self.line({
            "type": "system", "subtype": "init", "cwd": self.session.cwd,
            "tools": [t.name for t in self.session.tool_menu], "mcp_servers": self.mcp_servers,
            "model": self.session.model_name, "permissionMode": self.session.permission_mode,
            # what a prompt of this run may start with: Claude Code lists the commands it runs headless
            "slash_commands": [c.name for c in facts.slash_commands if c.headless] if facts else [],
            "apiKeySource": "ANTHROPIC_API_KEY" if self.session.provider_name == "anthropic" else "none",
            "claude_code_version": CLAUDE_CODE_COMPAT_VERSION, "vigil_version": vigil_version(),
            "output_style": "default", "agents": [t.name for t in facts.agent_types] if facts else [],
            "skills": list(facts.skills) if facts else [], "plugins": list(facts.plugins) if facts else [],
        })

    def on_event(self, event: Any) -> None:
        if self.fmt == "events":
            if not event.ephemeral:
                self._put(terminal_safe_json(event.model_dump_json()) + "\n")
            return
        agent_id = getattr(event, "agent_id", None)
        if agent_id is not None and self.parent_tool_use_id is None:
            self._subagent_event(agent_id, event)
            return
        if isinstance(event, ModelStepStarted):
            model = event.model or self.session.model_name
            self._steps[event.step] = (model, event.ts or time.time(), f"msg_vigil_{secrets.token_hex(12)}")
        if self._stream is not None and self.fmt == "stream-json":
            step = self._steps.get(getattr(event, "step", -1))
            self._stream.on_event(event, *(step[0], step[2]) if step else (self.session.model_name, ""))
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
            self._step_ended(event)
        elif isinstance(event, PermissionRequested):
            self.asked_by[event.call_id or ""] = event.decided_by
        elif isinstance(event, PermissionResolved) and event.decision == "deny" and event.request_id is None:
            self.asked_by.setdefault(event.call_id or "", event.decided_by)
        elif isinstance(event, ToolCallResult | ToolCallError):
            self.results[event.call_id or ""] = event
            if isinstance(event, ToolCallError) and event.code in DENIAL_CODES:
                name, data = self.inputs.get(event.call_id or "", (event.tool, {}))
                self.denials.append({"tool_name": name, "tool_use_id": event.call_id, "tool_input": data})
        elif isinstance(event, ToolBatchComplete):
            self._user_lines()
        elif isinstance(event, HookRun) and self.hook_events:
            self._hook_line(event)
        elif isinstance(event, CompactionStarted):
            self.line({"type": "system", "subtype": "status", "status": "compacting"})
        elif isinstance(event, ConversationCompacted) and event.trigger != "clear":
            self._compacted(event)
        elif isinstance(event, ConversationCompacted):
            self.line({"type": "conversation_reset", "new_conversation_id": new_uuid(), "trigger": "clear",
                       "user_message_uuid": new_uuid()})
        elif isinstance(event, Warning) and event.code == "compaction_failed":
            self.line({"type": "system", "subtype": "status", "status": None, "compact_result": "failed",
                       "compact_error": event.message})
        elif isinstance(event, LocalCommandRan):
            self._local_command(event)

    def _compacted(self, event: ConversationCompacted) -> None:
        """Claude Code's lines for a compaction: the status, the boundary, the continuation the model
        reads from here on, and (asked for with /compact) the command's stdout."""
        self.line({"type": "system", "subtype": "status", "status": None, "compact_result": "success"})
        self.line({"type": "system", "subtype": "compact_boundary", "compact_metadata": {
            "trigger": event.trigger, "pre_tokens": event.tokens_before, "post_tokens": event.tokens_after,
            "duration_ms": event.duration_ms}})
        self.line({"type": "user", "message": {"role": "user", "content": continuation_text(event.summary)},
                   "parent_tool_use_id": None, "isSynthetic": True, "isReplay": False,
                   "timestamp": timestamp(event.ts)})
        if event.trigger == "manual":
            self.line({"type": "user", "message": {"role": "user", "content": (
                "<local-command-stdout>Compacted </local-command-stdout>")}, "parent_tool_use_id": None,
                "isReplay": True, "timestamp": timestamp(event.ts)})

    def _local_command(self, event: LocalCommandRan) -> None:
        """A command Vigil ran itself, as Claude Code writes one of its local commands' output."""
        tag = "local-command-stderr" if event.stream == "stderr" else "local-command-stdout"
        line: dict[str, Any] = {
            "type": "assistant", "message": {
                "id": f"msg_vigil_{secrets.token_hex(12)}", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": event.output}], "model": "<synthetic>", "stop_reason": None,
                "stop_sequence": None, "usage": anthropic_usage({})},
            "parent_tool_use_id": None, "local_command_source": f"<{tag}>{event.output}</{tag}>",
            "local_command_run": {"command": event.command, "args": event.args}, "timestamp": timestamp(event.ts)}
        if event.outcome != "ok":
            line["local_command_outcome"] = {"kind": event.outcome}
        self.line(line)

    def _subagent_event(self, agent_id: str, event: Any) -> None:
        child = self.subagents.get(agent_id)
        if child is None:
            child = self.subagents[agent_id] = Transcript(self.session, self.fmt, self.out, denials=self.denials,
                                                          parent_tool_use_id=event.call_id or "")
        if event.type != "SubagentStarted":
            child.on_event(event)

    # ---- lines --------------------------------------------------------------------------------

    def _step_ended(self, event: ModelStepEnded) -> None:
        model, started, message_id = self._steps.pop(
            event.step, (self.session.model_name, event.ts or time.time(), f"msg_vigil_{secrets.token_hex(12)}"))
        assert self._usage is not None
        self._usage.step(model, event.usage, int(((event.ts or time.time()) - started) * 1000))
        if event.stop_reason is not None:
            self.last_stop_reason = event.stop_reason
        blocks = [self.step_blocks[i] for i in sorted(self.step_blocks)]
        self.step_blocks = {}
        for block in blocks:  # one line per block; the blocks of one response share its id
            self.line({"type": "assistant", "message": {
                "id": message_id, "type": "message", "role": "assistant", "content": [block], "model": model,
                "stop_reason": None, "stop_sequence": None, "stop_details": None, "usage": anthropic_usage(event.usage),
                "container": None, "context_management": None, "diagnostics": None},
                "parent_tool_use_id": None, "timestamp": timestamp(event.ts)})

    def _user_lines(self) -> None:
        order, self.order = self.order, []
        for call_id in order:
            result = self.results.pop(call_id, None)
            if result is None:
                continue
            if isinstance(result, ToolCallError) and result.code in ANNOUNCED_DENIALS:
                self._denied_line(call_id, result)
            content = result.model_content
            block: dict[str, Any] = {
                "tool_use_id": call_id, "type": "tool_result",
                "content": content if isinstance(content, str) else [b.model_dump() for b in content]}
            if isinstance(result, ToolCallError):
                block["is_error"] = True
            line: dict[str, Any] = {"type": "user", "message": {"role": "user", "content": [block]},
                                    "parent_tool_use_id": None, "timestamp": timestamp(result.ts)}
            structured = tool_use_result(result)
            if structured is not None:
                line["tool_use_result"] = structured
            self.line(line)

    def _denied_line(self, call_id: str, result: ToolCallError) -> None:
        name, _ = self.inputs.get(call_id, (result.tool, {}))
        reason_type = self.asked_by.get(call_id, "other")
        line: dict[str, Any] = {"type": "system", "subtype": "permission_denied", "tool_name": name,
                                "tool_use_id": call_id, "decision_reason_type": reason_type}
        if reason_type == "hook":
            line["decision_reason"] = result.message
        self.line({**line, "message": content_text(result.model_content)})

    def _hook_line(self, event: HookRun) -> None:
        hook_id = f"{event.event}:{event.command}:{event.call_id or ''}"
        base = {"type": "system", "hook_id": hook_id, "hook_name": f"{event.event}:{event.command}",
                "hook_event": event.event}
        if event.status == "started":
            self.line({**base, "subtype": "hook_started"})
            return
        outcome = {"ok": "success", "blocked": "success", "cancelled": "cancelled"}.get(event.status, "error")
        self.line({**base, "subtype": "hook_response", "output": event.message, "stdout": "", "stderr": "",
                   **({"exit_code": event.exit_code} if event.exit_code is not None else {}), "outcome": outcome})

    def _stream_line(self, event: dict[str, Any]) -> None:
        self.line({"type": "stream_event", "event": event, "parent_tool_use_id": None})

    def local_result(self, text: str, duration_ms: int, failed: bool = False) -> dict[str, Any]:
        """The result of a run whose prompt was a local command (no model was asked)."""
        return self.result_object(TurnResult(turn_id="", reason="error" if failed else "completed", text=text,
                                             error=text if failed else None), duration_ms)

    def result_object(self, turn: TurnResult, duration_ms: int) -> dict[str, Any]:
        subtype = {"completed": "success", "stopped": "success", "max_turns": "error_max_turns"}.get(
            turn.reason, "error_during_execution")
        assert self._usage is not None
        cancelled = any(getattr(o, "phase", None) == "cancel" for o in turn.outcomes)
        interrupted = "aborted_tools" if cancelled else "aborted_streaming"
        obj: dict[str, Any] = {
            "type": "result", "subtype": subtype, "is_error": subtype != "success",
            "duration_ms": duration_ms, **self._usage.end_turn(), "num_turns": turn.steps,
            "result": turn.text, "stop_reason": self.last_stop_reason, "session_id": self.session.id,
            "permission_denials": self.denials,
            "terminal_reason": TERMINAL_REASONS.get(turn.reason, interrupted),
            "uuid": new_uuid(),
        }
        if subtype != "success":
            obj["errors"] = [turn.error or turn.reason]
        self.denials = []
        self.last_stop_reason = None
        return obj
