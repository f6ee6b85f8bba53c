"""Session events: every fact of a session, in order. Everything else is a projection of these.

Each event is a small frozen pydantic model discriminated by `type`. `seq`, `session_id` and `ts`
are stamped by the session when the event is emitted. Events marked `ephemeral` (text deltas)
are delivered to live subscribers but never written to the log; the log keeps their coalesced
form (AssistantText).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from tui_app.runtime.contract import ToolFlags
from tui_app.runtime.display import Display
from tui_app.runtime.messages import ObservationContent, ToolDefinition

ErrorPhase = Literal[
    "lookup", "validate", "precondition", "hook", "permission", "execute", "timeout", "cancel",
    "output", "post_hook",
]
SideEffects = Literal["none", "unknown", "applied"]
#: who decided a permission question; "agent": an external agent decided by itself (docs/architecture.md §11);
#: "expired": the process that asked died before anyone answered (never an allow)
Decider = Literal["rule", "mode", "hook", "user", "tool", "no_client", "guard", "turn", "timeout", "agent",
                  "expired"]


def _is_none(value: Any) -> bool:
    return value is None


class _Event(BaseModel):
    # built on first use, not at import: a run uses a third of the event types, and building
    # every one was most of the start-up of a headless run
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)
    ephemeral: ClassVar[bool] = False

    seq: int = 0
    session_id: str = ""
    ts: float = 0.0
    turn_id: str | None = None
    call_id: str | None = None
    #: the subagent an event belongs to (None: the session's own agent); not written when None,
    #: so the events of a session without subagents are stored exactly as before
    agent_id: str | None = Field(default=None, exclude_if=_is_none)
    #: the client whose command made this happen ("tui", "cli", "sdk", "acp", "host:3" …; None: the
    #: session itself, a hook or the agent); not written when None
    client: str | None = Field(default=None, exclude_if=_is_none)


class AgentCapabilities(BaseModel):
    """What an agent can do, as data: clients read it from AgentConnected (and facts()) instead of
    probing the agent object. Every flag defaults to what an agent that offers nothing has."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    #: the agent shows its model its own tools (Vigil's tool menu is not sent anywhere)
    own_tools: bool = False
    #: it connects its own MCP servers
    own_mcp: bool = False
    #: it runs the hooks of Claude Code's settings files itself (Vigil then runs only its own)
    runs_claude_hooks: bool = False
    #: its slash commands are its own (Vigil's built-in commands that are the agent's: /compact …)
    own_commands: bool = False
    #: modes of its own beside Vigil's permission modes (ACP's session modes)
    agent_modes: bool = False
    #: `SetModel` works (and from when: the next request, or a restart)
    set_model: bool = False
    #: `Compact` and `Clear` work on its conversation
    compact: bool = False
    clear: bool = False
    #: `AddMemoryNote` reaches its system prompt
    memory_notes: bool = False
    #: `RunShell`'s output reaches its next request
    shell: bool = False
    #: `ReconnectMcp` works
    mcp_reconnect: bool = False
    #: `SetSystemPrompt` works
    system_prompt: bool = False
    #: subagents of Vigil's own (the Agent tool)
    subagents: bool = False


# ---- session ---------------------------------------------------------------------------------

class SessionStarted(_Event):
    type: Literal["SessionStarted"] = "SessionStarted"
    cwd: str
    provider: str
    model: str
    permission_mode: str
    vigil_version: str = ""
    resumed_from: str | None = None
    title: str | None = None
    #: the external agent this session supervises ("claude-code"); None for Vigil's own agent
    agent: str | None = None
    #: the working directories beside the cwd it starts with (--add-dir, additionalDirectories)
    directories: list[str] = Field(default_factory=list)


class SettingsLoaded(_Event):
    """Which settings files were read, and which could not be (file, line, reason)."""

    type: Literal["SettingsLoaded"] = "SettingsLoaded"
    files: list[str] = Field(default_factory=list)
    errors: list[dict[str, Any]] = Field(default_factory=list)


class ToolMenu(_Event):
    """A snapshot of the tools the model is shown; a new one only when the menu changes (MCP)."""

    type: Literal["ToolMenu"] = "ToolMenu"
    tools: list[ToolDefinition]
    sha256: str = ""


class McpServerStatus(_Event):
    type: Literal["McpServerStatus"] = "McpServerStatus"
    server: str
    #: needs-trust: a project's server, not started until the user trusts the project
    status: Literal["connecting", "connected", "failed", "disconnected", "needs-trust"]
    tools: int = 0
    message: str = ""
    log_path: str | None = None


class Warning(_Event):
    """Something the user should know that did not fail the session (a hook that timed out, an
    artifact write that fell back to truncation, a settings file that did not parse)."""

    type: Literal["Warning"] = "Warning"
    code: str
    message: str
    detail: dict[str, Any] = Field(default_factory=dict)


class PermissionModeChanged(_Event):
    """The user switched the permission mode mid-session (later decisions follow the new one)."""

    type: Literal["PermissionModeChanged"] = "PermissionModeChanged"
    mode: str
    previous: str = ""


class AgentConnected(_Event):
    """The session's agent reported itself: its name, version, model, what it can do, tools, and
    an external agent's own session id (what `--resume` hands back to it). A new one whenever any
    of that changes."""

    type: Literal["AgentConnected"] = "AgentConnected"
    agent: str
    #: its name in sentences ("Claude Code")
    label: str = ""
    version: str = ""
    agent_session_id: str = ""
    model: str = ""
    provider: str = ""
    tools: list[str] = Field(default_factory=list)
    pid: int | None = None
    capabilities: AgentCapabilities | None = None


class ModelChanged(_Event):
    """The session's model changed (`/model`, the settings screen, an SDK's set_model)."""

    type: Literal["ModelChanged"] = "ModelChanged"
    model: str
    previous: str = ""


class RulesChanged(_Event):
    """Permission rules were added or removed (always allow, the settings screen, a hook's
    updatedPermissions, a client's EditRule): what changed and where it was saved."""

    type: Literal["RulesChanged"] = "RulesChanged"
    behavior: str
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    #: the destination the change went to: session, localSettings, … or a settings file's path
    destination: str = "session"
    #: the file it was saved to (None: this session only)
    path: str | None = None


class LocalCommandRan(_Event):
    """A slash command Vigil ran itself, without a model call (`/cost`, `/model`, `/mode` …, and
    headless `/compact` around its ConversationCompacted): what it printed."""

    type: Literal["LocalCommandRan"] = "LocalCommandRan"
    command: str
    args: str = ""
    output: str = ""
    stream: Literal["stdout", "stderr"] = "stdout"
    #: "ok"; "unavailable_headless": a command of the screen asked for without one; "failed"
    outcome: Literal["ok", "unavailable_headless", "failed"] = "ok"


class AgentMode(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    name: str = ""
    description: str = ""


class AgentModeChanged(_Event):
    """An external agent's own mode (ACP session modes): the one it is in now and the ones it
    offers (shift+tab walks them). Vigil's permission mode is PermissionModeChanged."""

    type: Literal["AgentModeChanged"] = "AgentModeChanged"
    agent: str
    mode: str
    modes: list[AgentMode] = Field(default_factory=list)


class AgentCommand(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    #: what to type after the name, when the command takes input
    hint: str = ""


class AgentCommandsChanged(_Event):
    """The slash commands an external agent offers now (the prompt box completes them; the
    text goes to the agent as typed)."""

    type: Literal["AgentCommandsChanged"] = "AgentCommandsChanged"
    agent: str
    commands: list[AgentCommand] = Field(default_factory=list)


class SandboxStatus(_Event):
    """Whether Bash commands run in a sandbox in this session ("off": settings turned it off;
    "unavailable": bubblewrap cannot run here). The header says so when they do not."""

    type: Literal["SandboxStatus"] = "SandboxStatus"
    status: Literal["on", "off", "unavailable"]
    reason: str = ""
    #: sandboxed commands can reach allowed hosts through the proxy (socat is there)
    network: bool = True


class WorkingDirectoriesChanged(_Event):
    """The working directories now (the cwd first), and what changed: `--add-dir`, "Add directory",
    a hook's addDirectories / removeDirectories."""

    type: Literal["WorkingDirectoriesChanged"] = "WorkingDirectoriesChanged"
    directories: list[str]
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)


class SessionEnded(_Event):
    type: Literal["SessionEnded"] = "SessionEnded"
    reason: str = "exit"


# ---- turns and model steps -------------------------------------------------------------------

class TurnStarted(_Event):
    type: Literal["TurnStarted"] = "TurnStarted"
    prompt: str


class UserMessage(_Event):
    type: Literal["UserMessage"] = "UserMessage"
    text: str
    #: hook context or feedback added to the prompt (UserPromptSubmit, Stop-hook instructions), a file
    #: the prompt @-mentioned (attachment), a `!` command the user ran and its output (shell)
    source: Literal["user", "hook", "stop_hook", "attachment", "shell"] = "user"


class ModelStepStarted(_Event):
    type: Literal["ModelStepStarted"] = "ModelStepStarted"
    step: int
    model: str = ""


class AssistantTextDelta(_Event):
    ephemeral: ClassVar[bool] = True
    type: Literal["AssistantTextDelta"] = "AssistantTextDelta"
    step: int
    index: int
    text: str


class AssistantText(_Event):
    """One complete text block of the assistant (the coalesced deltas)."""

    type: Literal["AssistantText"] = "AssistantText"
    step: int
    index: int
    text: str


class AssistantThinkingDelta(_Event):
    """A piece of thinking as it streams; not logged (AssistantThinking has the whole block)."""

    ephemeral: ClassVar[bool] = True
    type: Literal["AssistantThinkingDelta"] = "AssistantThinkingDelta"
    step: int
    index: int
    text: str


class AssistantThinking(_Event):
    type: Literal["AssistantThinking"] = "AssistantThinking"
    step: int
    index: int
    raw: dict[str, Any]


class ModelRetry(_Event):
    type: Literal["ModelRetry"] = "ModelRetry"
    attempt: int
    max_attempts: int
    status: int | None = None
    reason: str
    wait_ms: int


class ModelStepEnded(_Event):
    type: Literal["ModelStepEnded"] = "ModelStepEnded"
    step: int
    stop_reason: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    error: str | None = None


class TurnEnded(_Event):
    type: Literal["TurnEnded"] = "TurnEnded"
    reason: Literal["completed", "max_turns", "interrupted", "error", "stopped", "rejected"]
    steps: int = 0
    message: str = ""
    usage: dict[str, int] = Field(default_factory=dict)
    duration_ms: int = 0


# ---- tool calls ------------------------------------------------------------------------------

class ToolCallRequested(_Event):
    type: Literal["ToolCallRequested"] = "ToolCallRequested"
    step: int
    index: int
    name: str
    input: Any


class ToolCallScheduled(_Event):
    type: Literal["ToolCallScheduled"] = "ToolCallScheduled"
    batch: int
    group: int
    groups: list[list[str]]


class PermissionRequested(_Event):
    type: Literal["PermissionRequested"] = "PermissionRequested"
    request_id: str
    tool: str
    input: dict[str, Any]
    input_sha256: str
    summary: str
    reason: str = ""
    decided_by: Decider = "mode"
    risk: str = "medium"
    side_effect_scope: str = "workspace"
    preview_kind: str = "text"
    preview: str = ""
    preview_display: Display | None = None
    suggested_rules: list[str] = Field(default_factory=list)
    #: what the "interactive" half of the race is (False → nobody but hooks can answer)
    interactive: bool = True
    #: Bash: the command will run in the sandbox (None: not a sandboxable call, or no sandbox known)
    sandboxed: bool | None = None


class PermissionResolved(_Event):
    type: Literal["PermissionResolved"] = "PermissionResolved"
    request_id: str | None = None
    decision: Literal["allow", "deny"]
    decided_by: Decider
    reason: str = ""
    rule: str | None = None
    saved_rules: list[str] = Field(default_factory=list)
    feedback: str | None = None
    wait_ms: int = 0


class HookRun(_Event):
    """One hook command: `started`, then how it ended (a hook that fails decides nothing, visibly)."""

    type: Literal["HookRun"] = "HookRun"
    event: str
    command: str
    status: Literal["started", "ok", "blocked", "error", "timeout", "spawn_failed", "cancelled"]
    exit_code: int | None = None
    duration_ms: int = 0
    decision: str | None = None
    message: str = ""


class ToolCallStarted(_Event):
    type: Literal["ToolCallStarted"] = "ToolCallStarted"
    tool: str
    input: dict[str, Any]
    target: str = ""
    flags: ToolFlags
    timeout_ms: int | None = None
    group: int = 0
    #: Bash: it runs in the sandbox (None: not a sandboxable call, or no sandbox known)
    sandboxed: bool | None = None


class ToolCallProgress(_Event):
    type: Literal["ToolCallProgress"] = "ToolCallProgress"
    kind: Literal["output", "progress", "message"]
    stream: Literal["stdout", "stderr"] | None = None
    text: str = ""
    progress: float | None = None
    total: float | None = None


class CallMetrics(BaseModel):
    model_config = ConfigDict(frozen=True)

    total_ms: int = 0
    permission_wait_ms: int = 0
    exec_ms: int = 0
    bytes_out: int = 0


class ArtifactRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    artifact_id: str
    uri: str
    path: str
    bytes: int
    lines: int | None = None


class _Outcome(_Event):
    """What every outcome of a call carries: the model's content and how it was made to fit, the
    screen's projection, the metrics."""

    tool: str
    model_content: ObservationContent
    #: tool output is data, never instructions
    untrusted: bool = True
    display: Display | None = None
    truncated: bool = False
    original_bytes: int = 0
    sent_bytes: int = 0
    strategy: Literal["inline", "truncate", "artifact"] = "inline"
    artifacts: list[ArtifactRef] = Field(default_factory=list)
    metrics: CallMetrics = CallMetrics()
    stop_turn: bool = False
    #: the tool's structured output (Claude Code's `tool_use_result`), for live subscribers only:
    #: the log keeps the model's content and the display, not a second copy of the output
    tool_response: Any = Field(default=None, exclude=True)


class ToolCallResult(_Outcome):
    type: Literal["ToolCallResult"] = "ToolCallResult"


class ToolCallError(_Outcome):
    type: Literal["ToolCallError"] = "ToolCallError"
    phase: ErrorPhase
    code: str
    message: str
    side_effects: SideEffects = "none"
    retryable: bool = False


class ToolBatchComplete(_Event):
    type: Literal["ToolBatchComplete"] = "ToolBatchComplete"
    batch: int
    ok: int
    failed: int


class ArtifactPersisted(_Event):
    type: Literal["ArtifactPersisted"] = "ArtifactPersisted"
    artifact: ArtifactRef
    tool: str = ""


class FileChangedExternally(_Event):
    type: Literal["FileChangedExternally"] = "FileChangedExternally"
    path: str
    change: Literal["modified", "deleted", "added"] = "modified"


class TodoUpdated(_Event):
    type: Literal["TodoUpdated"] = "TodoUpdated"
    todos: list[dict[str, Any]]


class UserQuestionAsked(_Event):
    """AskUserQuestion is waiting for the user (registered with the broker before this is sent)."""

    type: Literal["UserQuestionAsked"] = "UserQuestionAsked"
    request_id: str
    #: as the model sent them: {question, header, options: [{label, description}], multiSelect}
    questions: list[dict[str, Any]]


class UserQuestionAnswered(_Event):
    type: Literal["UserQuestionAnswered"] = "UserQuestionAnswered"
    request_id: str
    outcome: Literal["answered", "declined", "cancelled"] = "answered"
    #: question text → the chosen label(s), several joined by ", ", or the user's own words
    answers: dict[str, str] = Field(default_factory=dict)


# ---- the built-in agent: compaction, memory files, subagents, plan approval --------------------

class CompactionStarted(_Event):
    """The model was asked for a summary of the conversation (ConversationCompacted follows, or a
    `compaction_failed` warning)."""

    type: Literal["CompactionStarted"] = "CompactionStarted"
    trigger: Literal["auto", "manual"] = "manual"
    instructions: str = ""


class ConversationCompacted(_Event):
    """The conversation up to `boundary_seq` is replaced by `summary` from here on (for the model,
    for `--resume`); the log keeps every event, so the screen and replay still show them all. An
    empty summary with trigger `clear` starts the conversation afresh (/clear)."""

    type: Literal["ConversationCompacted"] = "ConversationCompacted"
    summary: str
    #: seq of the last event the summary stands for
    boundary_seq: int
    trigger: Literal["auto", "manual", "clear"] = "manual"
    instructions: str = ""
    tokens_before: int = 0
    tokens_after: int = 0
    #: what the summary request cost
    usage: dict[str, int] = Field(default_factory=dict)
    duration_ms: int = 0


class MemoryLoaded(_Event):
    """The memory files (CLAUDE.md, AGENTS.md, their @imports) that went into the system prompt."""

    type: Literal["MemoryLoaded"] = "MemoryLoaded"
    #: {path, scope, bytes, imported_from}
    files: list[dict[str, Any]] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    #: {path, reason, imported_from}: files left out (a Read deny rule, outside the working directories)
    skipped: list[dict[str, Any]] = Field(default_factory=list)


class SubagentStarted(_Event):
    """An Agent call (`call_id`) started subagent `agent_id`; the subagent's own events carry its id."""

    type: Literal["SubagentStarted"] = "SubagentStarted"
    description: str
    subagent_type: str
    prompt: str
    model: str = ""
    tools: list[str] = Field(default_factory=list)


class SubagentEnded(_Event):
    type: Literal["SubagentEnded"] = "SubagentEnded"
    reason: str
    steps: int = 0
    calls: int = 0
    usage: dict[str, int] = Field(default_factory=dict)
    result: str = ""
    duration_ms: int = 0
    transcript: ArtifactRef | None = None


class PlanApprovalAsked(_Event):
    """ExitPlanMode waits for the user (registered with the broker before this is sent); the
    answer comes back as UserQuestionAnswered with answers {"decision", "feedback"}."""

    type: Literal["PlanApprovalAsked"] = "PlanApprovalAsked"
    request_id: str
    plan: str


SessionEvent = Annotated[
    SessionStarted | SettingsLoaded | ToolMenu | McpServerStatus | Warning | SessionEnded | PermissionModeChanged
    | AgentConnected | AgentModeChanged | AgentCommandsChanged | SandboxStatus | WorkingDirectoriesChanged
    | ModelChanged | RulesChanged | LocalCommandRan
    | TurnStarted | UserMessage | ModelStepStarted | AssistantTextDelta | AssistantText
    | AssistantThinkingDelta | AssistantThinking | ModelRetry | ModelStepEnded | TurnEnded
    | ToolCallRequested | ToolCallScheduled | PermissionRequested | PermissionResolved | HookRun
    | ToolCallStarted | ToolCallProgress | ToolCallResult | ToolCallError | ToolBatchComplete
    | ArtifactPersisted | FileChangedExternally | TodoUpdated | UserQuestionAsked | UserQuestionAnswered
    | CompactionStarted | ConversationCompacted | MemoryLoaded | SubagentStarted | SubagentEnded | PlanApprovalAsked,
    Field(discriminator="type"),
]

ToolOutcomeEvent = ToolCallResult | ToolCallError


def __getattr__(name: str) -> Any:
    # the union's validator is built on first use (it builds every event type)
    if name == "EVENT_ADAPTER":
        adapter = globals()["EVENT_ADAPTER"] = TypeAdapter(SessionEvent)
        return adapter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def event_class(type_name: Any) -> type[_Event]:
    """The event class a `type` names; ValueError for one this version does not know."""
    cls = _BY_TYPE.get(type_name) if isinstance(type_name, str) else None
    if cls is None:
        raise ValueError(f"unknown event type {str(type_name)[:60]!r}")
    return cls


def parse_event(line: str | bytes) -> Any:
    """One event from its own JSON. Only the named type is validated (and built), not the union."""
    data = pydantic_core.from_json(line)
    if not isinstance(data, dict):
        raise ValueError("an event must be a JSON object")
    return event_class(data.get("type")).model_validate(data)


def event_types() -> list[type[_Event]]:
    """Every concrete event class (tests round-trip each of them)."""
    found, todo = [], list(_Event.__subclasses__())
    while todo:
        cls = todo.pop(0)
        todo.extend(cls.__subclasses__())
        if "type" in cls.model_fields:
            found.append(cls)
    return found


_BY_TYPE: dict[str, type[_Event]] = {cls.model_fields["type"].default: cls for cls in event_types()}
