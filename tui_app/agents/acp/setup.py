"""Which ACP agents a session can run: the settings' `agents` entries and presets for the
well-known agents whose command is on PATH.

    "agents": {"gemini": {"protocol": "acp", "command": "gemini", "args": ["--acp"],
                          "env": {"GEMINI_API_KEY": "…"}}}

An entry may name a preset and change only what differs (`{"env": {…}}` for `claude`). `mode`
picks the mode the agent is put in at the start; without it the first mode of ASKING_MODES the
agent offers (an agent that starts where it asks nothing, like the Claude adapter's `auto`, is
moved to one that asks). A setting that cannot be used is reported and left out, never guessed.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

#: the modes that ask before edits and commands, by the names agents give them, best first
ASKING_MODES = ("default", "read-only", "ask", "manual")
#: OpenCode's permission config (OPENCODE_PERMISSION) that makes it ask before it acts
OPENCODE_ASKS = {"edit": "ask", "bash": "ask", "webfetch": "ask", "external_directory": "ask"}
#: names that mean a driver other than ACP
RESERVED = ("vigil", "claude-code")


@dataclass(frozen=True)
class AcpAgentConfig:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    #: its name in sentences ("Gemini CLI")
    label: str = ""
    #: the mode to start in (None: the first of ASKING_MODES it offers)
    mode: str | None = None
    #: `_meta` for session/new: options an agent takes there
    session_meta: dict[str, Any] = field(default_factory=dict)
    #: the agent is Claude Code inside: it runs the hooks of the .claude settings files itself
    runs_claude_hooks: bool = False
    #: what the agent does without asking Vigil even in the mode Vigil puts it in (said at the start)
    acts_unasked: str = ""
    source: str = "settings"

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]


PRESETS: dict[str, AcpAgentConfig] = {
    "claude": AcpAgentConfig(
        "claude", "claude-agent-acp", label="Claude (ACP)", runs_claude_hooks=True, source="preset",
        # the adapter offers bypassPermissions unless told not to: a supervised session never has it;
        # prompt suggestions are a model call after every turn that Vigil would not show
        session_meta={"claudeCode": {"options": {"allowDangerouslySkipPermissions": False,
                                                 "promptSuggestions": False}}}),
    "codex": AcpAgentConfig("codex", "codex-acp", label="Codex", source="preset", acts_unasked=(
        "Codex runs commands inside its own sandbox without asking Vigil (read-only in its read-only mode: "
        "they can read files but not change them); it asks only when a command needs more. Such calls show "
        "as decided by Codex, when Codex reports them at all.")),
    "gemini": AcpAgentConfig("gemini", "gemini", ("--acp",), label="Gemini CLI", source="preset"),
    # OpenCode asks nothing by default (its edits and commands just run): told to ask about both, and
    # about fetches and files outside the project, so that Vigil decides them
    "opencode": AcpAgentConfig("opencode", "opencode", ("acp",), label="OpenCode", source="preset",
                               env={"OPENCODE_PERMISSION": json.dumps(OPENCODE_ASKS)}),
    "copilot": AcpAgentConfig("copilot", "copilot", ("--acp", "--stdio"), label="GitHub Copilot CLI",
                              source="preset"),
}


@dataclass
class AgentCatalog:
    agents: dict[str, AcpAgentConfig] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def catalog(values: dict[str, Any], which: Callable[[str], str | None] = shutil.which) -> AgentCatalog:
    """The ACP agents this session may run: presets on PATH, then the settings' entries."""
    found = AgentCatalog()
    for name, preset in PRESETS.items():
        if which(preset.command):
            found.agents[name] = preset
    entries = values.get("agents")
    if entries is None:
        return found
    if not isinstance(entries, dict):
        found.problems.append("settings: `agents` must be an object of agent name → {protocol, command, args, env}")
        return found
    for name, entry in entries.items():
        config, problem = _entry(str(name), entry)
        if problem:
            found.problems.append(f"settings: agents.{name}: {problem}")
        if config is not None:
            found.agents[config.name] = config
    return found


def _entry(name: str, entry: Any) -> tuple[AcpAgentConfig | None, str]:
    if name in RESERVED:
        return None, f"the name {name!r} is Vigil's own; pick another"
    if not isinstance(entry, dict):
        return None, "must be an object with protocol, command, args, env"
    protocol = entry.get("protocol", "acp")
    if protocol != "acp":
        return None, f"protocol {protocol!r} is not one Vigil speaks (\"acp\")"
    base = PRESETS.get(name) or AcpAgentConfig(name, "", label=name)
    command = entry.get("command", base.command if name in PRESETS else None)
    if not isinstance(command, str) or not command.strip():
        return None, "needs a command (the agent's executable)"
    args = entry.get("args", list(base.args) if "command" not in entry else [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return None, "args must be a list of strings"
    env = entry.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        return None, "env must map names to strings"
    mode = entry.get("mode", base.mode)
    if mode is not None and not isinstance(mode, str):
        return None, "mode must be a string (one of the agent's mode ids)"
    label = entry.get("label") if isinstance(entry.get("label"), str) else base.label or name
    if name not in PRESETS and any("claude-agent-acp" in part for part in (command, *args)):
        # the Claude ACP adapter under another name: Claude Code inside runs the .claude hooks itself
        # (the supervised-session options are sent whenever the adapter names itself, agent.py)
        base = replace(base, runs_claude_hooks=True, session_meta=PRESETS["claude"].session_meta)
    return replace(base, name=name, command=os.path.expanduser(command), args=tuple(args),
                   env={**base.env, **env}, mode=mode, label=label, source="settings"), ""


def find_agent(name: str, values: dict[str, Any], which: Callable[[str], str | None] = shutil.which
               ) -> AcpAgentConfig | None:
    return catalog(values, which).agents.get(name)


def known_agents(values: dict[str, Any]) -> list[str]:
    return sorted(catalog(values).agents)

