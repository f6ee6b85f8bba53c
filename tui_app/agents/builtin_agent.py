"""Vigil's own agent, as an `Agent` like any other: the turn loop over a provider's model, with
what that loop needs beyond the session — the model client, the memory files in the system
prompt, the context account that triggers compaction, subagents, slash commands, MCP servers.

The session holds the log, the conversation, the tools and the permission state; this agent holds
the rest and runs its turns on a `BuiltinHost`, the session seen with the agent's model, prompt and
context (a subagent runs on a host of its own, `agents.subagents.SubagentHost`). See
docs/architecture.md, "One kind of agent".
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tui_app.agents import local_commands
from tui_app.agents.builtin import agent_loop, run_turn
from tui_app.agents.compaction import ContextAccount, clear, compact, compaction_settings
from tui_app.agents.memory import MemoryService, append_note, note_targets
from tui_app.agents.prompt_router import command_facts, route
from tui_app.agents.slash_commands import CommandSet, load_commands
from tui_app.agents.subagents import AgentTypes, SubagentRunner, load_agent_types
from tui_app.agents.system_prompt import build_system_prompt, context_prompt
from tui_app.agents.user_shell import run_user_command
from tui_app.runtime.agent import Agent, AgentSetup, Intent, TurnResult, Unsupported
from tui_app.runtime.commands import AgentTypeFact, CommandFact, ContextFact, McpServerFact, MemoryFileFact
from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.events import AgentCapabilities, Warning
from tui_app.runtime.executor import TurnControl
from tui_app.runtime.model import ModelClient

#: the model names Claude Code's subagent files use, for the Anthropic provider
MODEL_ALIASES = {"sonnet": "claude-sonnet-4-6", "opus": "claude-opus-4-6", "haiku": "claude-haiku-4-5"}


def subagent_model(base: ModelClient, description: str, wanted: str | None) -> ModelClient:
    """The model a subagent talks to: the scripted model's steps for this description; else the
    session's model, under another name when the subagent's type names one."""
    for_agent = getattr(base, "for_agent", None)
    if for_agent is not None:
        return for_agent(description)
    if not wanted or wanted == "inherit":
        return base
    name = MODEL_ALIASES.get(wanted) if wanted in MODEL_ALIASES else wanted
    if wanted in MODEL_ALIASES and base.provider != "anthropic":
        return base  # an alias names a Claude model: another provider's model stays
    other = copy.copy(base)  # the same connection, another model name
    other.model = name  # type: ignore[misc]
    return other


class BuiltinHost:
    """The session as the built-in agent's turn loop sees it: the session's log, conversation,
    tools, hooks and permission state, with the agent's model, system prompt and context account."""

    def __init__(self, session: Any, agent: BuiltinAgent) -> None:
        self.session = session
        self.agent = agent

    # the agent's part
    @property
    def model(self) -> ModelClient:
        return self.agent.client

    @property
    def system_prompt(self) -> str:
        return self.agent.system_prompt

    @property
    def context(self) -> ContextAccount:
        return self.agent.context

    # the session's part
    @property
    def id(self) -> str:
        return self.session.id

    @property
    def cwd(self) -> str:
        return self.session.cwd

    @property
    def conversation(self) -> Any:
        return self.session.conversation

    @property
    def tool_menu(self) -> Any:
        return self.session.tool_menu

    @property
    def registry(self) -> Any:
        return self.session.registry

    @property
    def policy(self) -> Any:
        return self.session.policy

    @property
    def hooks(self) -> Any:
        return self.session.hooks

    @property
    def services(self) -> dict[str, Any]:
        return self.session.services

    @property
    def max_steps(self) -> int | None:
        return self.session.max_steps

    @property
    def max_concurrency(self) -> int:
        return self.session.max_concurrency

    @property
    def early_execution(self) -> bool:
        return self.session.early_execution

    @property
    def turn_client(self) -> str | None:
        return self.session.turn_client

    def emit(self, event: Any) -> Any:
        return self.session.emit(event)

    def subscribe(self, subscriber: Callable[[Any], None]) -> Callable[[], None]:
        return self.session.subscribe(subscriber)

    def call_env(self, turn_id: str | None) -> Any:
        return self.session.call_env(turn_id)

    def next_step(self) -> int:
        return self.session.next_step()

    def hook_session_info(self) -> dict[str, Any]:
        return self.session.hook_session_info()

    def refresh_tool_menu(self) -> bool:
        return self.session.refresh_tool_menu()


class BuiltinAgent(Agent):
    name = "vigil"
    label = "Vigil"
    capabilities = AgentCapabilities(set_model=True, compact=True, clear=True, memory_notes=True, shell=True,
                                     mcp_reconnect=True, system_prompt=True, subagents=True)

    def __init__(self, client: ModelClient, *, settings: Mapping[str, Any] | None = None,
                 home: str | None = None, mcp: Any = None, system_prompt: str = "") -> None:
        self.client = client
        super().__init__(model=client.model)
        self.initial_model = client.model
        self.settings = dict(settings or {})
        self.home = home
        #: the MCP servers of the session (None: none configured; the MCP SDK is then never imported)
        self.mcp = mcp
        #: what the model is told first (memory files join it when the session is prepared)
        self.system_prompt = system_prompt
        self.context = ContextAccount()
        self.commands_set = CommandSet()
        self.types: AgentTypes | None = None
        self.memory: MemoryService | None = None
        self.subagents: SubagentRunner | None = None
        self.host: BuiltinHost | None = None

    # the model's name is the client's (what `/model` changes)
    @property  # type: ignore[override]
    def model(self) -> str:
        return self.client.model

    @model.setter
    def model(self, name: str) -> None:
        self.client.model = name  # type: ignore[misc]

    @property
    def provider(self) -> str:
        return getattr(self.client, "provider", "")

    @property
    def base_url(self) -> str | None:
        return getattr(self.client, "base_url", None)

    # ---- set-up ---------------------------------------------------------------------------------

    def prepare(self, session: Any, setup: AgentSetup) -> None:
        self.mcp = setup.mcp(session) if setup.mcp is not None else None
        if setup.agent_tool is not None:
            self.attach(session, agent_tool=setup.agent_tool, recorded=list(setup.recorded))

    def attach(self, session: Any, *, agent_tool: Callable[[str], ToolSpec], recorded: list[Any] | None = None) -> None:
        """Equip the session before it starts: the Agent tool's menu of subagent types, the memory
        files in the system prompt, the context account, the slash commands."""
        self.host = host = BuiltinHost(session, self)
        cwd, startup = session.cwd, session.startup_events
        self.types = types = load_agent_types(cwd, self.home)
        if session.registry.resolve("Agent") is not None:  # the menu lists this session's subagent types
            spec = agent_tool(types.menu_text())
            session.registry.unregister(spec.name)
            session.registry.register(spec)
            if session.policy.hides_tool("Task"):
                session.registry.hide(spec.name)
        names = [s.name for s in session.registry.specs() if session.registry.is_visible(s.name)]
        self.memory = memory = MemoryService(cwd, build_system_prompt(cwd, names), self.home,
                                             policy=session.policy)
        memory.reload()
        self.system_prompt = memory.system_prompt()
        startup.append(memory.memory.event())
        compaction, problems = compaction_settings(self.settings)
        self.context = ContextAccount(compaction)
        self.commands_set = commands = load_commands(cwd, self.home)

        def prompt_for(tool_names: list[str]) -> str:
            section = memory.memory.prompt_section()
            base = context_prompt(cwd, tool_names)
            return f"{base}\n\n{section}" if section else base

        self.subagents = runner = SubagentRunner(
            host, types, loop=agent_loop, prompt_for=prompt_for,
            model_for=lambda description, wanted: subagent_model(self.client, description, wanted))
        if recorded:
            runner.resumed_from(recorded)
        session.services["subagents"] = runner  # the Agent tool's
        for problem in problems:
            startup.append(Warning(code="settings_invalid", message=f"Settings: {problem}"))
        for problem in types.problems:
            startup.append(Warning(code="subagent_invalid", message=problem))
        for problem in commands.problems:
            startup.append(Warning(code="command_invalid", message=problem))
        for problem in memory.memory.problems:
            startup.append(Warning(code="memory_import", message=problem))

    def _host(self, session: Any) -> BuiltinHost:
        if self.host is None or self.host.session is not session:
            self.host = BuiltinHost(session, self)
        return self.host

    # ---- lifecycle ------------------------------------------------------------------------------

    async def astart(self, session: Any) -> None:
        host = self._host(session)
        if self.mcp is not None:  # what the servers bring is on the first menu
            try:
                await self.mcp.astart(host)
            except Exception as exc:
                session.emit(Warning(code="service_start_failed", message=str(exc)))
        session.refresh_tool_menu()
        session.emit(self.connected_event())  # what it is and can do, for every client

    async def run_turn(self, session: Any, prompt: str, control: TurnControl, turn_id: str) -> TurnResult:
        return await run_turn(self._host(session), prompt, control, turn_id)

    async def aclose(self) -> None:
        for service in (self.mcp, self.client):
            close = getattr(service, "aclose", None)
            if close is not None:
                await close()

    # ---- prompts and commands -------------------------------------------------------------------

    def route(self, text: str) -> Intent:
        return route(text, self.commands_set)

    def commands(self) -> list[CommandFact]:
        return command_facts(self.commands_set)

    def local_output(self, name: str, args: str, facts: Any) -> str:
        return local_commands.render(name, args, facts)

    def agent_facts(self) -> dict[str, Any]:
        facts: dict[str, Any] = {}
        host = self.host
        if host is not None:
            account = self.context
            facts["context"] = ContextFact(
                window=account.window(host), used=account.tokens(host), compaction_enabled=account.settings.enabled,
                threshold=account.settings.threshold)
        if self.types is not None:
            facts["agent_types"] = [AgentTypeFact(name=t.name, description=t.description, tools=list(t.tools or ()),
                                                  model=t.model, source=t.source) for t in self.types.types.values()]
        if self.memory is not None:
            facts["memory_files"] = [MemoryFileFact(path=str(f.get("path", "")), scope=str(f.get("scope", "")),
                                                    bytes=int(f.get("bytes", 0) or 0),
                                                    imported_from=f.get("imported_from"))
                                     for f in self.memory.summary()]
        facts["mcp_servers"] = mcp_facts(self.mcp)
        from tui_app.providers.pricing import cost_usd, price_of

        usage = host.session.controller.usage if host is not None else {}
        facts["cost_usd"] = cost_usd(price_of(self.provider, self.model, self.base_url), usage)
        return facts

    # ---- changes --------------------------------------------------------------------------------

    async def set_model(self, model: str | None) -> str:
        self.client.model = model or self.initial_model  # type: ignore[misc]
        return self.client.model

    async def compact(self, session: Any, control: TurnControl, instructions: str) -> Any:
        return await compact(self._host(session), control, trigger="manual", instructions=instructions)

    async def clear(self, session: Any) -> Any:
        return clear(self._host(session))

    async def run_shell(self, session: Any, command: str, control: TurnControl) -> int | None:
        return await run_user_command(session, command, control)

    def note_targets(self, session: Any) -> list[tuple[str, Path]]:
        return note_targets(session.cwd, self.home)

    async def add_memory_note(self, path: Path, note: str) -> Path:
        written = append_note(path, note)
        if self.memory is not None:
            self.memory.reload()
            self.system_prompt = self.memory.system_prompt()
            if self.host is not None:
                self.host.emit(self.memory.memory.event())
        return written

    async def reconnect_mcp(self, server: str) -> None:
        if self.mcp is None:
            raise Unsupported("This session has no MCP servers.")
        try:
            await self.mcp.reconnect(server)
        except KeyError as exc:
            raise Unsupported(str(exc.args[0]) if exc.args else f"no MCP server {server!r}") from None

    def set_system_prompt(self, text: str | None, append: str) -> None:
        if text is not None:
            self.system_prompt = text
        if append:
            self.system_prompt = f"{self.system_prompt}\n\n{append}".strip()


def mcp_facts(manager: Any) -> list[McpServerFact]:
    if manager is None:
        return []
    servers = getattr(getattr(manager, "config", None), "servers", {}) or {}
    found = []
    for info in manager.servers():
        server = servers.get(info.name)
        target = (server.url or " ".join([server.command, *server.args])) if server is not None else ""
        found.append(McpServerFact(name=info.name, transport=info.transport, target=target, source=info.source,
                                   status=info.status, tools=len(info.tools), message=info.message,
                                   log_path=info.log_path))
    return found
