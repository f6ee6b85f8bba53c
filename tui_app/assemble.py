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

from tui_app.config import LoadedSettings, SettingsError, load_settings, settings_events
from tui_app.runtime.agent import Agent, AgentSetup
from tui_app.runtime.commands import HookFact
from tui_app.runtime.controller import SessionProfile
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
    #: the agent Vigil supervises: its own ("vigil") or an external one ("claude-code", docs/architecture.md §11)
    agent: str | None = None
    #: the external agent's executable (default: found on PATH)
    agent_command: str | None = None
    #: the built-in agent's system prompt instead of Vigil's (`--system-prompt`), and text after it
    system_prompt: str | None = None
    append_system_prompt: str = ""
    #: the only tools the model is shown (`--tools`); None: all of them
    tools: list[str] | None = None
    #: the effort level hooks are told (`--effort`)
    effort: str | None = None
    #: run the project's own hooks and MCP servers without asking (`--trust-project`)
    trust_project: bool = False
    #: a client (the TUI) answers ProjectTrustAsked: the start waits for it
    ask_trust: bool = False


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
    """Settings files, the hook scripts they name and the git directories a worktree's `.git` file
    points to: writing them always asks (self-protection)."""
    from tui_app.config import user_config_dir
    from tui_app.runtime.permissions.sandbox_policy import git_pointers
    from tui_app.runtime.permissions.self_protection import hook_scripts, settings_files

    extra = [options.settings_file] if options.settings_file and not options.settings_file.lstrip().startswith("{") \
        else []
    handlers = [(h.command, h.args) for groups in settings.hooks.groups.values() for g in groups for h in g.handlers]
    policy.protect(settings_files(settings.project_dir, policy.home, str(user_config_dir()), extra))
    policy.protect(hook_scripts(handlers, settings.project_dir, policy.home))
    policy.protect(p for root in [settings.project_dir, *settings.additional_dirs] for p in git_pointers(root))


def build_sandbox(policy: RulePolicy, settings: LoadedSettings) -> Any:
    """The Bash sandbox: Claude Code's `sandbox` settings, on wherever bubblewrap works unless
    `enabled: false` (docs/architecture.md §12). Problems with the settings or the platform are announced."""
    from tui_app.runtime.permissions.sandbox_policy import SandboxPolicy, parse_sandbox
    from tui_app.tools.bash.sandbox import probe

    values, errors = parse_sandbox(settings.sandbox_layers, policy.home)
    settings.errors.extend(errors)
    from tui_app.config import user_config_dir
    from tui_app.runtime.log.paths import vigil_home

    sandbox = SandboxPolicy(values, dirs=policy.dirs, home=policy.home, read_denials=policy.read_patterns,
                            protected=lambda: policy.protected_paths, web_domains=policy.web_domains,
                            state_dirs=(str(vigil_home()), str(user_config_dir())))
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
                        emit=emit or (lambda event: event), aliases_of=aliases_of,
                        seals=hook_seals(settings.hooks, settings.project_dir))


def hook_seals(hooks: Any, project_dir: str) -> dict[tuple[str, tuple[str, ...] | None], dict[str, str]]:
    """Each hook's scripts as they are now: a hook whose script changes later is not run."""
    from tui_app.runtime.hooks.seal import seal
    from tui_app.runtime.permissions.self_protection import sealed_scripts

    home = os.path.expanduser("~")
    return {h.key: seal(sealed_scripts(h.command, h.args, project_dir, home))
            for groups in hooks.groups.values() for g in groups for h in g.handlers}


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
    path_guard = getattr(session.policy, "opened_refusal", None)
    if path_guard is not None:  # the file tools check what they opened, not only the path they were given
        session.services.setdefault("path_guard", path_guard)
    file_state = session.services.get("file_state")
    if file_state is not None:
        file_state.bind(session.emit)


def load_mcp(options: SessionOptions, cwd: str) -> Any:
    from tui_app.mcp.config import config_sources, load_mcp_config

    sources = config_sources(cwd, settings_file=options.settings_file,
                             no_claude_settings=options.no_claude_settings, mcp_config=options.mcp_config,
                             strict=options.strict_mcp_config)
    return load_mcp_config(sources, project_dir=cwd)


def build_trust(options: SessionOptions, loaded: LoadedSettings, mcp: Any) -> Any:
    """Whether the project's own hooks and MCP servers may run (see `project_trust`); until they
    may, the project's hooks are held back."""
    from tui_app.project_trust import Runnable, decide_trust, project_files
    from tui_app.runtime.log.paths import vigil_home
    from tui_app.runtime.permissions.self_protection import hook_scripts

    own = set(project_files(loaded.project_dir))
    handlers = [(event, h) for event, groups in loaded.hooks.groups.items() for g in groups for h in g.handlers
                if h.source in own]
    runnables = [Runnable("hook", event, h.label, h.source) for event, h in handlers]
    servers = mcp.servers.items() if mcp is not None else ()
    runnables += [Runnable("mcp", name, s.url or " ".join([s.command, *s.args]), s.source)
                  for name, s in servers if s.source in own]
    scripts = hook_scripts([(h.command, h.args) for _e, h in handlers], loaded.project_dir,
                           os.path.expanduser("~"))
    trust = decide_trust(loaded.project_dir, runnables, scripts, flag=options.trust_project,
                         source_values=loaded.source_values, home=vigil_home())
    trust.ask = options.ask_trust
    if not trust.trusted:
        loaded.hooks.held.update(own)
        trust.on_grant.append(loaded.hooks.held.clear)
    return trust


def build_mcp(options: SessionOptions, session: Session, config: Any = None) -> Any | None:
    """The MCP service when any server is configured (or misconfigured); None otherwise, and then
    the MCP SDK is never imported. `config`: the one the project's trust was decided on."""
    config = config if config is not None else load_mcp(options, session.cwd)
    problems = config.cli_problems()
    if problems:
        raise SetupError(f"invalid MCP config {problems[0]}")
    if config.empty:
        return None
    from tui_app.mcp.manager import McpManager
    from tui_app.runtime.log.paths import session_dir

    trust = session.services.get("project_trust")
    return McpManager(config, session.registry, log_dir=session_dir(session.id) / "mcp",
                      hides_tool=session.policy.hides_tool,
                      may_start=trust.server_allowed if trust is not None else None)


def resume_target(options: SessionOptions, settings: dict[str, Any] | None) -> SessionOptions:
    """A resumed session keeps its recorded provider and model unless flags or settings name one."""
    from dataclasses import replace

    from tui_app.agents.registry import is_external
    from tui_app.runtime.log.catalog import summarize
    from tui_app.runtime.log.paths import events_path

    session_id = options.resume or ""  # resolved already (resume_where_it_ran): its log exists
    log = events_path(session_id)
    chosen = options.script or options.provider or options.model or (settings or {}).get("provider")
    recorded = summarize(session_id, log)
    if options.agent is None and is_external(recorded.provider, settings or {}):
        return replace(options, agent=recorded.provider)  # an external agent's session goes on with it
    if chosen or recorded.provider not in ("anthropic", "openai"):
        return options
    return replace(options, provider=recorded.provider, model=recorded.model or None)


def agent_name(options: SessionOptions, settings: dict[str, Any]) -> str:
    """The agent the session runs: `--agent`, else the settings' `agent`, else Vigil's own; a model
    named on the command line is for Vigil's own agent."""
    from tui_app.agents.registry import BUILTIN

    if options.agent is None and (options.script or options.provider):
        return BUILTIN
    return options.agent or settings.get("agent") or BUILTIN


def build_agent(options: SessionOptions, settings: dict[str, Any], resume_id: str | None = None) -> Agent:
    """The session's agent, from the one registry of agents; `resume_id`: an external agent's own
    session to go on with."""
    from tui_app.agents.registry import AgentRequest, AgentSetupError, make_agent

    request = AgentRequest(
        name=agent_name(options, settings), settings=settings, model=options.model or "",
        command=options.agent_command, max_turns=options.max_turns,
        resume_id=resume_id, model_client=lambda: build_model(options, settings))
    try:
        return make_agent(request)
    except AgentSetupError as exc:
        raise SetupError(str(exc)) from None


def session_profile(options: SessionOptions, loaded: LoadedSettings, values: dict[str, Any]) -> SessionProfile:
    """How the session was set up, as the settings screen and facts() show it."""
    from tui_app.agents.registry import agent_names
    from tui_app.config import settings_locations, user_config_dir

    home = Path(os.path.expanduser("~"))
    locations = [str(loc.path) for loc in settings_locations(Path(loaded.project_dir), home, user_config_dir(),
                                                              options.no_claude_settings)]
    if options.settings_file and not options.settings_file.lstrip().startswith("{"):
        locations.append(str(Path(options.settings_file).expanduser()))
    hooks = tuple(HookFact(event=event, matcher=group.matcher, label=handler.label, source=handler.source)
                  for event, groups in loaded.hooks.groups.items() for group in groups for handler in group.handlers)
    return SessionProfile(
        project_dir=loaded.project_dir, settings_files=tuple(loaded.files), settings_locations=tuple(locations),
        no_claude_settings=options.no_claude_settings, settings_file=options.settings_file, hooks=hooks,
        notifications=notifications_enabled(values), agent_names=tuple(agent_names(values)))


def notifications_enabled(values: dict[str, Any]) -> bool:
    """Desktop notifications: off with `"desktopNotifications": false` or Claude Code's
    `"preferredNotifChannel": "notifications_disabled"`."""
    if values.get("desktopNotifications") is False:
        return False
    return values.get("preferredNotifChannel") != "notifications_disabled"


def resume_where_it_ran(options: SessionOptions) -> tuple[SessionOptions, list[Any], str | None]:
    """A resumed session goes on where it ran — its cwd (so its project's settings and rules), its
    working directories, its permission mode unless a flag names one — and says so when that is
    not where the user is. bypassPermissions is never restored unasked. Also returns the external
    agent's own session id the log recorded."""
    from dataclasses import replace

    from tui_app.runtime.events import Warning
    from tui_app.runtime.log.catalog import UnknownSession, resolve_session_id
    from tui_app.runtime.log.paths import events_path
    from tui_app.runtime.log.resume_point import resume_point

    try:
        session_id = resolve_session_id(options.resume or "")
    except UnknownSession as exc:
        raise SetupError(str(exc)) from None
    options = replace(options, resume=session_id)
    point = resume_point(events_path(session_id))
    if not point.cwd:
        return options, [], point.agent_session_id
    notes: list[Any] = []
    if not Path(point.cwd).is_dir():
        raise SetupError(f"session {session_id} ran in {point.cwd}, which is gone: it cannot go on there "
                         "(`vigil replay` still shows it)")
    here = os.path.realpath(os.path.expanduser(options.cwd))
    if here != os.path.realpath(point.cwd):
        notes.append(Warning(code="resumed_where_it_ran", message=(
            f"Session {session_id} goes on in {point.cwd}, where it ran (you are in {options.cwd}).")))
    mode = options.permission_mode
    if mode is None and point.permission_mode != "default":
        if point.permission_mode == "bypassPermissions":
            notes.append(Warning(code="resumed_mode", message=(
                "The session was in bypassPermissions when it stopped; it goes on in default "
                "(pass --permission-mode bypassPermissions to skip every question again).")))
        else:
            mode = point.permission_mode  # type: ignore[assignment]
    add_dirs = [*options.add_dirs, *(d for d in point.directories if d not in options.add_dirs and Path(d).is_dir())]
    return replace(options, cwd=point.cwd, permission_mode=mode, add_dirs=add_dirs), notes, point.agent_session_id


def build_session(options: SessionOptions, settings: dict[str, Any] | None = None) -> Session:
    resumed_notes: list[Any] = []
    agent_session_id = None
    if options.resume:
        options, resumed_notes, agent_session_id = resume_where_it_ran(options)
    cwd = check_cwd(options.cwd)
    loaded = load_options_settings(options)
    values = {**loaded.values, **(settings or {})}
    if options.resume:
        options = resume_target(options, values)
    agent = build_agent(options, values, resume_id=agent_session_id)
    if agent.capabilities.runs_claude_hooks:
        from dataclasses import replace

        from tui_app.agents.claude_code.settings import vigil_only_hooks

        loaded = replace(loaded, hooks=vigil_only_hooks(loaded.hooks))  # the agent runs its own
    mcp_config = load_mcp(options, cwd) if not agent.capabilities.own_mcp else None
    trust = build_trust(options, loaded, mcp_config)
    relay = EventRelay()
    policy = build_policy(options, loaded, relay)
    sandbox = build_sandbox(policy, loaded)  # type: ignore[arg-type]
    registry = build_registry(policy)
    session = Session(
        agent=agent, cwd=cwd, registry=registry, policy=policy,
        hooks=build_hooks(options, loaded, relay, registry),
        broker=ApprovalBroker(interactive=options.interactive, timeout_s=loaded.approval_timeout_s),
        session_id=options.resume or options.session_id, persist=options.persist, max_steps=options.max_turns,
        profile=session_profile(options, loaded, values),
    )
    relay.target = session.emit
    session.startup_events.extend(resumed_notes)
    session.startup_events.extend(settings_events(loaded))
    session.startup_events.extend(sandbox_events(sandbox))
    session.services.update(build_services(options, session.id))
    session.services["sandbox"] = sandbox
    session.services["project_trust"] = trust
    readable_artifacts(policy, session)
    recorded: tuple[Any, ...] = ()
    if options.resume:
        from tui_app.runtime.processes.session_lock import SessionInUse

        try:
            session.resume_from_log()  # the conversation is rebuilt from the log; nothing is run again
        except SessionInUse as exc:
            raise SessionBusy(str(exc), exc.session_id, exc.pid) from None
        recorded = tuple(read_events(session.log_path).events) if session.log_path else ()
    # memory, compaction, subagents, slash commands, MCP: what the agent needs of the session
    agent.prepare(session, AgentSetup(agent_tool=agent_tool, recorded=recorded,
                                      mcp=lambda s: build_mcp(options, s, mcp_config)))
    apply_flags(options, session)
    connect_services(session)
    return session


def apply_flags(options: SessionOptions, session: Session) -> None:
    """The Agent SDK's flags that shape the session: the system prompt, the tools shown, the effort."""
    if options.system_prompt is not None or options.append_system_prompt:
        from tui_app.runtime.agent import Unsupported

        try:
            session.agent.set_system_prompt(options.system_prompt, options.append_system_prompt)
        except Unsupported as exc:
            session.startup_events.append(Warning(code="flag_ignored", message=f"--system-prompt: {exc}"))
    if options.tools is not None:
        wanted = set(options.tools)
        for spec in session.registry.specs():
            if spec.name not in wanted and not wanted & set(spec.aliases):
                session.registry.hide(spec.name)
    if options.effort and hasattr(session.hooks, "effort"):
        session.hooks.effort = options.effort
