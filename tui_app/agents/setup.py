"""Equips a session with what the built-in agent needs beyond the turn loop: memory files in the
system prompt, the context account that triggers compaction, subagents (the Agent tool and the
service it runs), the plan-mode switch, and the slash commands. The composition root calls
`equip_builtin_agent` once, after the session is built; the tools it needs are handed in."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from tui_app.agents.builtin import agent_loop
from tui_app.agents.compaction import ContextAccount, compaction_settings
from tui_app.agents.memory import MemoryService
from tui_app.agents.plan_mode import ModeSwitch
from tui_app.agents.slash_commands import load_commands
from tui_app.agents.subagents import SubagentRunner, load_agent_types
from tui_app.agents.system_prompt import build_system_prompt, context_prompt
from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.events import Warning
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


def equip_builtin_agent(session: Any, settings: Mapping[str, Any], *,
                        agent_tool: Callable[[str], ToolSpec], home: str | None = None,
                        recorded: list[Any] | None = None) -> None:
    cwd = session.cwd
    startup = session.startup_events
    types = load_agent_types(cwd, home)
    if session.registry.resolve("Agent") is not None:  # the menu lists this session's subagent types
        spec = agent_tool(types.menu_text())
        session.registry.unregister(spec.name)
        session.registry.register(spec)
        if session.policy.hides_tool("Task"):
            session.registry.hide(spec.name)
    names = [s.name for s in session.registry.specs() if session.registry.is_visible(s.name)]
    memory = MemoryService(cwd, build_system_prompt(cwd, names), home)
    memory.reload()
    session.system_prompt = memory.system_prompt()
    startup.append(memory.memory.event())
    compaction, problems = compaction_settings(settings)
    account = ContextAccount(compaction)
    commands = load_commands(cwd, home)

    def prompt_for(tool_names: list[str]) -> str:
        section = memory.memory.prompt_section()
        base = context_prompt(cwd, tool_names)
        return f"{base}\n\n{section}" if section else base

    runner = SubagentRunner(session, types, loop=agent_loop,
                            model_for=lambda description, wanted: subagent_model(session.model, description, wanted),
                            prompt_for=prompt_for)
    if recorded:
        runner.resumed_from(recorded)
    session.services.update({"context": account, "memory": memory, "subagents": runner,
                             "permission_mode": ModeSwitch(session), "slash_commands": commands,
                             "agent_types": types})
    for problem in problems:
        startup.append(Warning(code="settings_invalid", message=f"Settings: {problem}"))
    for problem in types.problems:
        startup.append(Warning(code="subagent_invalid", message=problem))
    for problem in commands.problems:
        startup.append(Warning(code="command_invalid", message=problem))
    for problem in memory.memory.problems:
        startup.append(Warning(code="memory_import", message=problem))
