"""The composition root: builds a Session from options and settings.

The only module that knows every floor: runtime core, tools, providers (and later MCP). The CLI
and the TUI both come through here, so a session behaves the same whoever drives it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_app.agents.builtin import run_turn
from tui_app.agents.setup import equip_builtin_agent
from tui_app.agents.system_prompt import build_system_prompt
from tui_app.config import LoadedSettings, SettingsError, load_settings, settings_events
from tui_app.runtime.events import Warning
from tui_app.runtime.hooks.command import CommandHooks
from tui_app.runtime.hooks.runner import HookRunner, NoHooks
from tui_app.runtime.log.eventlog import read_events
from tui_app.runtime.model import ModelClient
from tui_app.runtime.permissions.broker import ApprovalBroker
from tui_app.runtime.permissions.decision import PermissionMode, PermissionPolicy
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.session import Session
from tui_app.tools.agent import agent_tool


class SetupError(Exception):
    """A problem with the options or the environment, told to the user in one line."""


class SessionBusy(SetupError):
    """The session to resume is being written by another Vigil (`pid`): it can only be read."""

    def __init__(self, message: str, session_id: str, pid: int | None) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.pid = pid


@dataclass
class SessionOptions:
    cwd: str = field(default_factory=os.getcwd)
    script: str | None = None
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    permission_mode: PermissionMode | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    settings_file: str | None = None
    no_claude_settings: bool = False
    mcp_config: list[str] = field(default_factory=list)
    strict_mcp_config: bool = False
    max_turns: int | None = None
    resume: str | None = None
    #: the id of a new session (`--session-id`); None: a fresh one
    session_id: str | None = None
    #: more working directories (`--add-dir`), beside `permissions.additionalDirectories`
    add_dirs: list[str] = field(default_factory=list)
    #: a client (the TUI) will answer approvals; headless runs have none
    interactive: bool = False
    persist: bool = True
    #: the agent Vigil supervises: its own ("vigil") or an external one ("claude-code", DESIGN §11)
    agent: str | None = None
    #: the external agent's executable (default: found on PATH)
    agent_command: str | None = None


def check_cwd(cwd: str) -> str:
    path = Path(cwd).expanduser()
    if not path.is_dir():
        raise SetupError(f"working directory {cwd} does not exist or is not a directory")
    if not os.access(path, os.R_OK | os.X_OK):
        raise SetupError(f"working directory {cwd} is not readable")
    return str(path.resolve())


def build_model(options: SessionOptions, settings: dict[str, Any] | None = None) -> ModelClient:
    """Scripted with `--script` or `--provider scripted`; Anthropic or an OpenAI-compatible server
    when flags, settings or the environment ask for one; the bundled demo when nothing does."""
    from tui_app.providers.scripted import ScriptedModel, ScriptError, load_script
    from tui_app.providers.select import ProviderSetupError, build_client, resolve_config

    script = options.script
    if script is None and options.provider != "scripted":
        try:
            config = resolve_config(provider=options.provider, model=options.model, base_url=options.base_url,
                                    settings=settings)
        except ProviderSetupError as exc:
            raise SetupError(str(exc)) from None
        if config is not None:
            return build_client(config)
    if script is None:
        from tui_app.demo import demo_script_path

        script = str(demo_script_path())
    try:
        return ScriptedModel(load_script(script))
    except ScriptError as exc:
        raise SetupError(str(exc)) from None


class EventRelay:
    """The policy and the hooks are built before the session whose `emit` they report to."""

    def __init__(self) -> None:
        self.target: Callable[[Any], Any] | None = None

    def __call__(self, event: Any) -> Any:
        return self.target(event) if self.target is not None else event


def load_options_settings(options: SessionOptions) -> LoadedSettings:
    try:
        loaded = load_settings(
            cwd=check_cwd(options.cwd), settings_file=options.settings_file,
            no_claude_settings=options.no_claude_settings, allowed_tools=options.allowed_tools,
            disallowed_tools=options.disallowed_tools, permission_mode=options.permission_mode,
        )
    except SettingsError as exc:
        raise SetupError(str(exc)) from None
    for directory in options.add_dirs:
        path = os.path.realpath(os.path.join(loaded.project_dir, os.path.expanduser(directory)))
        if not os.path.isdir(path):
            raise SetupError(f"--add-dir {directory}: no such directory")
        if path not in loaded.additional_dirs:
            loaded.additional_dirs.append(path)
    return loaded


def build_policy(options: SessionOptions, settings: LoadedSettings | None = None,
                 emit: Callable[[Any], Any] | None = None) -> RulePolicy:
    settings = settings or load_options_settings(options)

    def warn(code: str, message: str) -> None:
        if emit is not None:
            emit(Warning(code=code, message=message))

    policy = RulePolicy(
        cwd=settings.project_dir, mode=settings.default_mode, project_dir=settings.project_dir,
        rules=settings.rules, additional_dirs=settings.additional_dirs, guards=settings.guards,
        destinations=settings.destinations, on_warning=warn,
    )
    protect_settings(policy, options, settings)
    return policy


def protect_settings(policy: RulePolicy, options: SessionOptions, settings: LoadedSettings) -> None:
    """Settings files and the hook scripts they name: writing them always asks (self-protection)."""
    from tui_app.config import user_config_dir
    from tui_app.runtime.permissions.self_protection import hook_scripts, settings_files

    extra = [options.settings_file] if options.settings_file and not options.settings_file.lstrip().startswith("{") \
        else []
    handlers = [(h.command, h.args) for groups in settings.hooks.groups.values() for g in groups for h in g.handlers]
    policy.protect(settings_files(settings.project_dir, policy.home, str(user_config_dir()), extra))
    policy.protect(hook_scripts(handlers, settings.project_dir, policy.home))


def build_sandbox(policy: RulePolicy, settings: LoadedSettings) -> Any:
    """The Bash sandbox: Claude Code's `sandbox` settings, on wherever bubblewrap works unless
    `enabled: false` (DESIGN §12). Problems with the settings or the platform are announced."""
    from tui_app.runtime.permissions.sandbox_policy import SandboxPolicy, parse_sandbox
    from tui_app.tools.bash.sandbox import probe

    values, errors = parse_sandbox(settings.sandbox_layers, policy.home)
    settings.errors.extend(errors)
    sandbox = SandboxPolicy(values, dirs=policy.dirs, home=policy.home, read_denials=policy.read_patterns,
                            protected=lambda: policy.protected_paths, web_domains=policy.web_domains)
    if sandbox.enabled:
        found = probe()
        sandbox.available, sandbox.unavailable_reason = found.available, found.reason
        sandbox.network_available = found.network

    def remember(host: str, rules: list[str], destination: str) -> None:
        sandbox.session_domains.add(host)
        policy.add_rules("allow", rules, destination)

    sandbox.remember = remember
    policy.sandbox = sandbox
    return sandbox


def sandbox_events(sandbox: Any) -> list[Any]:
    from tui_app.runtime.events import SandboxStatus
    from tui_app.runtime.permissions.sandbox_policy import unavailable_message

    events: list[Any] = [SandboxStatus(status=sandbox.status, reason=sandbox.unavailable_reason,
                                       network=sandbox.network_available)]
    message = unavailable_message(sandbox)
    if message:
        events.append(Warning(code="sandbox_unavailable", message=message))
    return events


def build_hooks(options: SessionOptions, settings: LoadedSettings | None = None,
                emit: Callable[[Any], Any] | None = None, registry: ToolRegistry | None = None) -> HookRunner:
    settings = settings or load_options_settings(options)
    if settings.hooks.empty:
        return NoHooks()

    def aliases_of(name: str) -> tuple[str, ...]:
        spec = registry.resolve(name) if registry is not None else None
        return spec.aliases if spec is not None else ()

    return CommandHooks(settings.hooks, project_dir=settings.project_dir, cwd=settings.project_dir,
                        emit=emit or (lambda event: event), aliases_of=aliases_of)


def build_registry(policy: PermissionPolicy) -> ToolRegistry:
    from tui_app.tools import builtin_tools

    registry = ToolRegistry()
    for spec in builtin_tools():
        registry.register(spec)
    for spec in registry.specs():
        if policy.hides_tool(spec.name):
            registry.hide(spec.name)
    return registry


def build_services(options: SessionOptions, session_id: str) -> dict[str, Any]:
    from tui_app.runtime.files.state import FileState
    from tui_app.runtime.log.paths import session_dir
    from tui_app.runtime.results.artifacts import ArtifactStore
    from tui_app.tools.bash.tasks import BackgroundTasks
    from tui_app.tools.todo import TodoList

    return {"artifacts": ArtifactStore(session_id, session_dir(session_id) / "artifacts"),
            "file_state": FileState(check_cwd(options.cwd)), "todos": TodoList(),
            "background_tasks": BackgroundTasks()}


def readable_artifacts(policy: RulePolicy, session: Session) -> None:
    """The session's own persisted outputs may be read back without a question about where they are."""
    from tui_app.runtime.log.paths import session_dir

    policy.dirs.add_readable([str(session_dir(session.id) / "artifacts")])


def connect_services(session: Session) -> None:
    """Services that talk back to the session: outside file changes become its events, and
    AskUserQuestion asks through its broker."""
    session.services.setdefault("approval_broker", session.broker)
    read_denial = getattr(session.policy, "read_denial", None)
    if read_denial is not None:  # Grep and Glob leave out the files Read deny rules keep from the model
        session.services.setdefault("read_denial", read_denial)
    file_state = session.services.get("file_state")
    if file_state is not None:
        file_state.bind(session.emit)


def build_mcp(options: SessionOptions, session: Session) -> Any | None:
    """The MCP service when any server is configured (or misconfigured); None otherwise, and then
    the MCP SDK is never imported."""
    from tui_app.mcp.config import config_sources, load_mcp_config

    sources = config_sources(session.cwd, settings_file=options.settings_file,
                             no_claude_settings=options.no_claude_settings, mcp_config=options.mcp_config,
                             strict=options.strict_mcp_config)
    config = load_mcp_config(sources, project_dir=session.cwd)
    problems = config.cli_problems()
    if problems:
        raise SetupError(f"invalid MCP config {problems[0]}")
    if config.empty:
        return None
    from tui_app.mcp.manager import McpManager
    from tui_app.runtime.log.paths import session_dir

    return McpManager(config, session.registry, log_dir=session_dir(session.id) / "mcp",
                      hides_tool=session.policy.hides_tool)


def resume_target(options: SessionOptions, settings: dict[str, Any] | None) -> SessionOptions:
    """A resumed session keeps its recorded provider and model unless flags or settings name one."""
    from dataclasses import replace

    from tui_app.runtime.log.catalog import summarize, valid_session_id
    from tui_app.runtime.log.paths import events_path, sessions_dir

    session_id = options.resume or ""
    log = events_path(session_id)
    if not valid_session_id(session_id) or not log.is_file():
        raise SetupError(f"no recorded session {session_id!r} in {sessions_dir()} (see `vigil sessions`)")
    chosen = options.script or options.provider or options.model or (settings or {}).get("provider")
    recorded = summarize(session_id, log)
    if options.agent is None and (recorded.provider in EXTERNAL_AGENTS or is_acp_agent(recorded.provider, settings)):
        return replace(options, agent=recorded.provider)  # an external agent's session goes on with it
    if chosen or recorded.provider not in ("anthropic", "openai"):
        return options
    return replace(options, provider=recorded.provider, model=recorded.model or None)


#: the external agents Vigil can drive (`--agent`), besides its own ("vigil")
EXTERNAL_AGENTS = ("claude-code",)


def build_driver(options: SessionOptions, settings: dict[str, Any]) -> Any | None:
    """The external agent the session runs (DESIGN §11), or None for Vigil's own."""
    name = options.agent or settings.get("agent") or "vigil"
    if options.agent is None and (options.script or options.provider):
        name = "vigil"  # a model named on the command line is for Vigil's own agent
    if name == "vigil":
        return None
    if name not in EXTERNAL_AGENTS:  # an ACP agent: a preset on PATH or an `agents` entry of the settings
        from tui_app.agents.acp.start import UnknownAgent, acp_driver

        try:
            return acp_driver(name, settings, command=options.agent_command, model=options.model or "",
                              resume_id=recorded_agent_session(options.resume) if options.resume else None)
        except UnknownAgent as exc:
            raise SetupError(str(exc)) from None
    from tui_app.agents.claude_code.agent import ClaudeCodeAgent
    from tui_app.agents.claude_code.command import ClaudeCodeUnusable, check_claude

    command = options.agent_command or settings.get("agentCommand")
    try:
        path, version = check_claude(command if isinstance(command, str) else None)
    except ClaudeCodeUnusable as exc:
        raise SetupError(str(exc)) from None
    return ClaudeCodeAgent(command=path, model=options.model or "", version=version, max_turns=options.max_turns,
                           resume_id=recorded_agent_session(options.resume) if options.resume else None)


def agent_names(settings: dict[str, Any]) -> list[str]:
    """Every agent `--agent` takes here: Vigil's own, Claude Code's, and the ACP agents."""
    from tui_app.agents.acp.setup import known_agents

    return ["vigil", *EXTERNAL_AGENTS, *known_agents(settings)]


def is_acp_agent(name: str, settings: dict[str, Any] | None) -> bool:
    from tui_app.agents.acp.setup import catalog

    return name in catalog(settings or {}).agents


def recorded_agent_session(session_id: str) -> str | None:
    """The external agent's own session id, as the log last recorded it (for its --resume)."""
    from tui_app.runtime.log.eventlog import read_events
    from tui_app.runtime.log.paths import events_path

    found = None
    for event in read_events(events_path(session_id)).events:
        if event.type == "AgentConnected" and event.agent_session_id:
            found = event.agent_session_id
    return found


def build_session(options: SessionOptions, settings: dict[str, Any] | None = None) -> Session:
    cwd = check_cwd(options.cwd)
    loaded = load_options_settings(options)
    values = {**loaded.values, **(settings or {})}
    if options.resume:
        options = resume_target(options, values)
    driver = build_driver(options, values)
    model = build_model(options, values) if driver is None else None
    if driver is not None and getattr(driver, "runs_claude_hooks", True):
        from dataclasses import replace

        from tui_app.agents.claude_code.settings import vigil_only_hooks

        loaded = replace(loaded, hooks=vigil_only_hooks(loaded.hooks))  # Claude Code runs its own
    relay = EventRelay()
    policy = build_policy(options, loaded, relay)
    sandbox = build_sandbox(policy, loaded)  # type: ignore[arg-type]
    registry = build_registry(policy)
    session = Session(
        agent=driver or run_turn, cwd=cwd, model=model, registry=registry, policy=policy,
        hooks=build_hooks(options, loaded, relay, registry),
        broker=ApprovalBroker(interactive=options.interactive, timeout_s=loaded.approval_timeout_s),
        session_id=options.resume or options.session_id, persist=options.persist, max_steps=options.max_turns,
        system_prompt=build_system_prompt(cwd, [s.name for s in registry.specs()]),
    )
    relay.target = session.emit
    session.startup_events.extend(settings_events(loaded))
    session.startup_events.extend(sandbox_events(sandbox))
    session.services.update(build_services(options, session.id))
    # the settings screen shows where each setting comes from, and saves to these files
    session.services.update({"settings": loaded, "session_options": options})
    session.services["agent_names"] = agent_names(values)  # the palette offers a new session with each
    session.services["sandbox"] = sandbox
    readable_artifacts(policy, session)
    recorded = None
    if options.resume:
        from tui_app.runtime.processes.session_lock import SessionInUse

        try:
            session.resume_from_log()  # the conversation is rebuilt from the log; nothing is run again
        except SessionInUse as exc:
            raise SessionBusy(str(exc), exc.session_id, exc.pid) from None
        recorded = read_events(session.log_path).events if session.log_path else None
    if driver is None:  # memory, compaction, subagents, slash commands: an external agent has its own
        equip_builtin_agent(session, values, agent_tool=agent_tool, recorded=recorded)
    connect_services(session)
    mcp = build_mcp(options, session) if driver is None else None  # Claude Code connects its own
    if mcp is not None:
        session.services["mcp"] = mcp
    return session
