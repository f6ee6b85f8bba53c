"""The declaration of a tool (ToolSpec) and the values that travel with one call.

A ToolSpec says what a tool is; the pipeline decides how one call of it runs. Every optional
hook here is a plain function of the call's input, so a tool can "speak from its input"
(Bash: `git status` is read-only, `rm -rf build` is not) without subclassing anything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from tui_app.runtime.display import Display

SideEffectScope = Literal["none", "workspace", "git", "network", "system", "session", "user_interaction"]
Risk = Literal["low", "medium", "high"]
PreviewEnd = Literal["head", "tail"]
OverBudget = Literal["truncate", "artifact"]
ToolSource = Literal["builtin", "mcp"]


class StrictInput(BaseModel):
    """Base for built-in input models: unknown keys are an error and types are not coerced,
    the way the model's JSON Schema (additionalProperties: false) promises."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ToolFlags(BaseModel):
    """What a tool (or one call of it) may do. Scheduling, permission and early execution read these."""

    model_config = ConfigDict(frozen=True)

    read_only: bool = False
    destructive: bool = False
    concurrency_safe: bool = False
    side_effect_scope: SideEffectScope = "workspace"
    needs_approval: bool = True
    requires_user_interaction: bool = False
    risk: Risk = "medium"

    @property
    def effectively_read_only(self) -> bool:
        # A tool counts as read-only only if it says so *and* touches nothing (TodoWrite says
        # read-only but changes session state).
        return self.read_only and self.side_effect_scope == "none"

    @property
    def runs_in_parallel(self) -> bool:
        if self.destructive:
            return False
        return self.concurrency_safe


class PermissionSpec(BaseModel):
    """How the permission stage sees a tool."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["read", "edit", "bash", "web", "mcp", "interaction", "other"] = "other"
    reason: str = ""
    always_ask: bool = False
    #: the input key that names the target of a rule specifier (file_path, command, url …)
    rule_key: str | None = None


class ResultBudget(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_model_bytes: int = 100_000
    max_inline_bytes: int = 100_000
    over_budget: OverBudget = "truncate"
    preview_end: PreviewEnd = "head"

    @property
    def limit_bytes(self) -> int:
        return min(self.max_model_bytes, self.max_inline_bytes)


class TimeoutPolicy(BaseModel):
    """`none` = never timed. Otherwise: default, max, whether the call's own `timeout` /
    `timeout_ms` may override, and a cleanup grace added on top of the limit."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["none", "timed"] = "timed"
    default_ms: int | None = None
    max_ms: int | None = None
    allow_call_override: bool = False
    cleanup_grace_ms: int = 0


class ToolFailure(Exception):
    """A business failure a tool reports on purpose (file not read first, old_string not unique…).

    The model sees `<tool_use_error>{message}</tool_use_error>`; the code routes the screen."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "execution_failed",
        side_effects: Literal["none", "unknown", "applied"] = "none",
        retryable: bool = True,
        display: Display | None = None,
        model_content: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.side_effects = side_effects
        self.retryable = retryable
        self.display = display
        self.model_content = model_content


class ToolTimedOut(Exception):
    """Raised by a tool that enforces its own limit (Bash) after it has cleaned up."""

    def __init__(self, limit_ms: int, partial: Any = None) -> None:
        super().__init__(f"Tool execution timed out after {limit_ms}ms")
        self.limit_ms = limit_ms
        self.partial = partial


@dataclass
class RawResult:
    """What a handler returns. `output` is the tool's structured output (also what PostToolUse
    hooks see as `tool_response`); `text` is its model-facing text when the tool already has one."""

    output: Any = None
    text: str | None = None
    display: Display | None = None
    #: the tool already wrote its full output to an artifact (Bash streams into one): its
    #: ArtifactRef, or the OSError that stopped the write (the result then falls back to truncation)
    artifact: Any = None
    stop_turn: bool = False
    is_error: bool = False
    #: for is_error results: the stable code routed by the screen and the log
    error_code: str = "execution_failed"
    #: extra content parts (images) for providers that accept them
    parts: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ApprovalPreview:
    """What the approval dialog shows beside the plain-words summary."""

    summary: str
    kind: Literal["diff", "command", "text", "json"] = "text"
    body: str = ""
    display: Display | None = None
    risk: Risk = "medium"


Input = dict[str, Any]
Handler = Callable[[Any, "ToolContext"], Awaitable[RawResult]]
InputCheck = Callable[[Any, "ToolContext"], Awaitable[None]]
InputResolver = Callable[[Input, "ToolContext"], Awaitable[Input]]
PreviewMaker = Callable[[Input, "ToolContext"], Awaitable[ApprovalPreview | None]]


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """The declaration of one tool."""

    name: str
    description: str
    handler: Handler
    #: a pydantic model for built-ins (its JSON Schema is what the model is shown) …
    input_model: type[BaseModel] | None = None
    #: … or a JSON Schema for tools that come from outside (MCP), validated with jsonschema
    input_schema: Mapping[str, Any] | None = None
    output_model: type[BaseModel] | None = None
    output_schema: Mapping[str, Any] | None = None
    aliases: tuple[str, ...] = ()
    source: ToolSource = "builtin"
    provider_visible: bool = True
    flags: ToolFlags = ToolFlags()
    permission: PermissionSpec = PermissionSpec()
    budget: ResultBudget = ResultBudget()
    timeout: TimeoutPolicy = TimeoutPolicy()
    cancellation_message: str = "The user interrupted this tool call before it finished."
    stop_turn_on_success: bool = False

    # optional per-call hooks, all pure functions of the input
    validate_input: InputCheck | None = None
    resolve_input: InputResolver | None = None
    prepare_approval: PreviewMaker | None = None
    flags_for: Callable[[Input], ToolFlags] | None = None
    timeout_for: Callable[[Input], int | None] | None = None
    format_model_content: Callable[[RawResult], str] | None = None
    #: the tool's own text for an output persisted as an artifact (Bash keeps exit code + tail)
    format_persisted: Callable[[RawResult, str, str], str] | None = None
    #: a one-line target for the screen (path, command, URL)
    target_of: Callable[[Input], str] | None = None
    #: structured output for hooks' `tool_response`
    tool_response: Callable[[Input, RawResult], Any] | None = None

    def parse(self, data: Input) -> Any:
        """The handler's view of a validated input: the pydantic model, or the dict itself."""
        if self.input_model is None:
            return data
        return self.input_model.model_validate(data)

    def flags_of(self, data: Input) -> ToolFlags:
        return self.flags_for(data) if self.flags_for is not None else self.flags

    def target(self, data: Input) -> str:
        if self.target_of is not None:
            return self.target_of(data)
        key = self.permission.rule_key
        if key and isinstance(data.get(key), str):
            return data[key]
        return ""


class ProgressSink:
    """Handed to a running handler; the pipeline turns each report into a ToolCallProgress event."""

    def __init__(self, emit: Callable[..., None]) -> None:
        self._emit = emit
        self.closed = False

    def output(self, text: str, stream: Literal["stdout", "stderr"] = "stdout") -> None:
        if not self.closed:
            self._emit(kind="output", stream=stream, text=text)

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        if not self.closed:
            self._emit(kind="progress", progress=progress, total=total, text=message or "")

    def message(self, text: str) -> None:
        if not self.closed:
            self._emit(kind="message", text=text)


@dataclass
class ToolContext:
    """Everything a handler may use. Services are looked up by name so the core never imports
    the modules that provide them (file state, artifacts, background tasks, MCP …)."""

    session_id: str
    cwd: str
    call_id: str
    tool_name: str
    progress: ProgressSink
    #: milliseconds this call may run before it is timed out (None = not timed)
    timeout_ms: int | None = None
    services: Mapping[str, Any] = field(default_factory=dict)
    emit: Callable[[Any], None] | None = None
    #: Bash: the permission stage decided this call runs in the sandbox (None: no decision made)
    sandboxed: bool | None = None
    #: file tools: the spellings of the path (link, real target) the permission decision was made
    #: on; what the tool opens is compared with them (None: no decision made yet)
    checked_paths: tuple[str, ...] | None = None

    def service(self, name: str) -> Any:
        return self.services.get(name)
