"""The session port, upward half: every request a client may make of a session, as data.

Events go down (`events.py`); commands come up. A client — the TUI, `vigil -p`, the Agent SDK
mode, `vigil acp`, the host's socket — never touches a live session object: it sends one of
these to the session's `SessionController` and gets a `Reply` back, `Accepted` or a typed
`Refused` it can show (a command the session cannot honour is refused, never an AttributeError).
Every change a command makes is told as an event, so every client sees it, including the ones that
did not send it. Each command names the client that sent it; the events it causes carry that name.

The shapes are the wire format of the host's socket too (`model_dump_json` / `parse_command`), so
they are plain data: no callables, no live objects. See docs/architecture.md, "The session port".
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from tui_app.runtime.events import AgentCapabilities, AgentCommand, AgentMode


class _Command(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    #: who sent it ("tui", "cli", "sdk", "acp", "host:3" …): recorded with what it causes
    client: str = ""


# ---- turns --------------------------------------------------------------------------------------

class SubmitPrompt(_Command):
    """A prompt as the user typed it: the session decides what it means (a slash command, `!cmd`,
    `#note`, `@file` mentions, or plain text for the model)."""

    type: Literal["SubmitPrompt"] = "SubmitPrompt"
    text: str
    #: send the text to the model as it is, whatever it starts with
    literal: bool = False
    #: a `/word` that names no command: "send" it as text (headless, as Claude Code does: a prompt
    #: may well start with a path) or "refuse" it (the TUI: a typo is not sent)
    unknown_command: Literal["send", "refuse"] = "send"


class Interrupt(_Command):
    """Stop the running turn (or compaction, or `!` command): running calls are cancelled, the rest
    never start."""

    type: Literal["Interrupt"] = "Interrupt"
    reason: str = "interrupted"


class Compact(_Command):
    type: Literal["Compact"] = "Compact"
    instructions: str = ""


class Clear(_Command):
    type: Literal["Clear"] = "Clear"


class RunShell(_Command):
    """The user's own command (a `!` line) in the session's cwd; its output is context for the next
    prompt."""

    type: Literal["RunShell"] = "RunShell"
    command: str


class AddMemoryNote(_Command):
    """A `#` line, appended to a memory file (one of the session's note targets, or a path)."""

    type: Literal["AddMemoryNote"] = "AddMemoryNote"
    note: str
    path: str


class Notify(_Command):
    """The session's Notification hooks are told something (the TUI's idle prompt: Claude Code's
    `idle_prompt`)."""

    type: Literal["Notify"] = "Notify"
    message: str
    title: str = "Vigil"
    kind: str = "idle_prompt"


class EndSession(_Command):
    type: Literal["EndSession"] = "EndSession"
    reason: str = "exit"


# ---- answers ------------------------------------------------------------------------------------

class AnswerApproval(_Command):
    """The answer to a PermissionRequested, bound to the hash of the input that was shown."""

    type: Literal["AnswerApproval"] = "AnswerApproval"
    request_id: str
    decision: Literal["allow", "deny"]
    input_sha256: str
    #: always allow: save `rules` (the suggested ones when empty) to `destination`
    always: bool = False
    rules: list[str] = Field(default_factory=list)
    destination: str = "localSettings"
    #: deny with feedback: the words reach the model
    feedback: str | None = None
    #: why, when no person decided (a client's question that failed)
    reason: str = ""
    #: the user left the dialog with Esc (an ACP agent hears `cancelled`)
    escaped: bool = False
    #: an SDK's permission callback may allow an edited input (checked against the rules again),
    #: add rules or change the mode (Claude Code's updatedPermissions), or end the turn with a deny
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[dict[str, Any]] = Field(default_factory=list)
    interrupt: bool = False


class AnswerQuestion(_Command):
    """The answer to a UserQuestionAsked: question text → answer; None: declined."""

    type: Literal["AnswerQuestion"] = "AnswerQuestion"
    request_id: str
    answers: dict[str, str] | None = None


class AnswerPlan(_Command):
    """The answer to a PlanApprovalAsked: go on in a mode, or keep planning (with feedback)."""

    type: Literal["AnswerPlan"] = "AnswerPlan"
    request_id: str
    decision: Literal["acceptEdits", "default", "keep"] | None = None
    feedback: str = ""


# ---- settings of the session --------------------------------------------------------------------

class SetPermissionMode(_Command):
    type: Literal["SetPermissionMode"] = "SetPermissionMode"
    mode: str


class SetModel(_Command):
    """Later requests use this model; None: the model the session started with."""

    type: Literal["SetModel"] = "SetModel"
    model: str | None = None


class SelectAgentMode(_Command):
    """An external agent's own mode (ACP session modes)."""

    type: Literal["SelectAgentMode"] = "SelectAgentMode"
    mode_id: str


class SetSystemPrompt(_Command):
    """Replace the system prompt (`text`), or add to it (`append`)."""

    type: Literal["SetSystemPrompt"] = "SetSystemPrompt"
    text: str | None = None
    append: str = ""


class AddDirectory(_Command):
    """A working directory for this session (relative paths are the session's cwd's)."""

    type: Literal["AddDirectory"] = "AddDirectory"
    path: str


class EditRule(_Command):
    """Add, remove or replace permission rules, in force at once and saved to `destination`
    (`session`, `localSettings`, `projectSettings`, `userSettings`, or the path of one of the
    session's settings files)."""

    type: Literal["EditRule"] = "EditRule"
    action: Literal["add", "remove", "replace"]
    behavior: Literal["allow", "ask", "deny"]
    rules: list[str]
    destination: str = "localSettings"
    #: replace: the rules that take the place of `rules`
    replace_with: list[str] = Field(default_factory=list)


class ReconnectMcp(_Command):
    type: Literal["ReconnectMcp"] = "ReconnectMcp"
    server: str


class AnswerTrust(_Command):
    """The answer to ProjectTrustAsked: trust the project (remembered for its files) or not."""

    type: Literal["AnswerTrust"] = "AnswerTrust"
    trusted: bool


SessionCommand = Annotated[
    SubmitPrompt | Interrupt | Compact | Clear | RunShell | AddMemoryNote | Notify | EndSession | AnswerApproval
    | AnswerQuestion | AnswerPlan | SetPermissionMode | SetModel | SelectAgentMode | SetSystemPrompt | AddDirectory
    | EditRule | ReconnectMcp | AnswerTrust,
    Field(discriminator="type"),
]

_ADAPTER: TypeAdapter[Any] | None = None


def parse_command(data: str | bytes | dict[str, Any]) -> Any:
    """A command from its JSON (a line of the host's socket); pydantic's ValidationError when it
    is not one."""
    global _ADAPTER
    if _ADAPTER is None:
        _ADAPTER = TypeAdapter(SessionCommand)
    if isinstance(data, str | bytes):
        data = pydantic_core.from_json(data)
    return _ADAPTER.validate_python(data)


# ---- replies ------------------------------------------------------------------------------------

RefusalCode = Literal[
    "busy",            # a turn (or compaction, or `!` command) is running
    "unsupported",     # this session's agent cannot do it
    "invalid",         # an argument is wrong (a mode that does not exist, a directory that is not one)
    "not_found",       # no such request waits (answered already, by a hook or another client)
    "unknown_command",  # a `/word` that names no command (SubmitPrompt with unknown_command="refuse")
    "log_failed",      # the log cannot be written, so nothing more is started
    "ended",           # the session has ended
    "failed",          # it was tried and went wrong (the message says how)
]


class Accepted(BaseModel):
    model_config = ConfigDict(frozen=True)

    ok: Literal[True] = True
    #: for the user, when there is something to say ("Model: x from the next request on")
    message: str = ""
    #: a turn was started: its id (`SessionController.wait_turn()` waits for it)
    turn_id: str | None = None
    #: a local command ran: its canonical name and what it printed (shown or printed as Claude Code does)
    command: str | None = None
    output: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class Refused(BaseModel):
    model_config = ConfigDict(frozen=True)

    ok: Literal[False] = False
    code: RefusalCode
    message: str


Reply = Accepted | Refused


# ---- facts --------------------------------------------------------------------------------------

class RuleFact(BaseModel):
    model_config = ConfigDict(frozen=True)

    behavior: str
    text: str
    #: the file it came from, "session" or the flag that gave it
    source: str


class HookFact(BaseModel):
    model_config = ConfigDict(frozen=True)

    event: str
    matcher: str | None = None
    label: str
    source: str


class McpServerFact(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    transport: str = ""
    #: the command and its arguments, or the URL
    target: str = ""
    source: str = ""
    status: str = "configured"
    tools: int = 0
    message: str = ""
    log_path: str | None = None


class AgentTypeFact(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    tools: list[str] = Field(default_factory=list)
    model: str | None = None
    source: str = ""


class CommandFact(BaseModel):
    """A slash command the session offers."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    hint: str = ""
    #: builtin: Vigil's own; custom: a command file; agent: the external agent's own
    kind: Literal["builtin", "custom", "agent"] = "builtin"
    #: a built-in Vigil runs without a model call (in `-p` too)
    local: bool = False
    #: it can run without a screen (`-p`, the SDK, ACP)
    headless: bool = True
    source: str = ""


class ContextFact(BaseModel):
    model_config = ConfigDict(frozen=True)

    window: int = 0
    #: tokens at the last model step (an estimate before the first)
    used: int = 0
    compaction_enabled: bool = False
    threshold: float = 0.0
    compactions: int = 0


class MemoryFileFact(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    scope: str = ""
    bytes: int = 0
    imported_from: str | None = None


class SessionFacts(BaseModel):
    """What a client may know of a session beyond its events, in one typed answer."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    cwd: str
    project_dir: str
    agent: str
    agent_label: str
    capabilities: AgentCapabilities
    provider: str = ""
    model: str = ""
    permission_mode: str
    permission_modes: list[str] = Field(default_factory=list)
    agent_mode: str | None = None
    agent_modes: list[AgentMode] = Field(default_factory=list)
    working_directories: list[str] = Field(default_factory=list)
    rules: list[RuleFact] = Field(default_factory=list)
    #: the destinations a rule can be saved to: name → file path
    rule_destinations: dict[str, str] = Field(default_factory=dict)
    hooks: list[HookFact] = Field(default_factory=list)
    settings_files: list[str] = Field(default_factory=list)
    #: how the settings were chosen (the settings screen reads the same files)
    no_claude_settings: bool = False
    settings_file: str | None = None
    notifications: bool = True
    slash_commands: list[CommandFact] = Field(default_factory=list)
    agent_commands: list[AgentCommand] = Field(default_factory=list)
    agent_types: list[AgentTypeFact] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    plugins: list[str] = Field(default_factory=list)
    context: ContextFact | None = None
    #: tokens used so far (every model step, subagents included), as the provider counted them
    usage: dict[str, int] = Field(default_factory=dict)
    cost_usd: float = 0.0
    memory_files: list[MemoryFileFact] = Field(default_factory=list)
    #: where a `#` note can go: (label, path)
    note_targets: list[tuple[str, str]] = Field(default_factory=list)
    mcp_servers: list[McpServerFact] = Field(default_factory=list)
    sandbox: str = "off"
    busy: bool = False
    log_failure: str | None = None
    #: the agents a new session can be started with (`--agent`)
    agent_names: list[str] = Field(default_factory=list)
