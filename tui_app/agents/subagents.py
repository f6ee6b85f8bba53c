"""Subagents: an Agent call (alias Task) runs the turn loop again, as a subagent with its own
conversation, system prompt and tools, inside the same session (docs/architecture.md §9.6).

Its tool calls go through the session's own pipeline, permission rules, hooks and approval broker;
only the tool list is narrower (a subagent never gets Agent, ExitPlanMode or AskUserQuestion, and
Explore only reads). Its events go to the session's log and screen tagged with its `agent_id`, so
the conversation of the agent that called it never sees them, and its call ids start with its id,
so they never collide with anyone else's. The caller gets the subagent's final answer as the
Agent call's result; the whole transcript is kept as an artifact.

Types: the built-in `general-purpose` and `Explore`, then the user's (`~/.claude/agents/*.md`)
and the project's (`.claude/agents/*.md`), each a Markdown file with frontmatter `name`,
`description` (both required), `tools` (comma-separated; every tool when absent) and `model`; the
body is the subagent's system prompt. A project type wins over a user type of the same name.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tui_app.agents.compaction import ContextAccount
from tui_app.agents.frontmatter import as_list, parse_frontmatter
from tui_app.runtime.agent import TurnResult
from tui_app.runtime.contract import ToolContext, ToolFailure
from tui_app.runtime.events import ArtifactPersisted, SubagentEnded, SubagentStarted, UserMessage, Warning
from tui_app.runtime.executor import TurnControl
from tui_app.runtime.log.conversation import ConversationBuilder
from tui_app.runtime.messages import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, content_text
from tui_app.runtime.model import ModelClient
from tui_app.runtime.permissions.decision import PermissionDecision, PermissionQuery
from tui_app.runtime.registry import ToolRegistry

#: tools a subagent never gets: it cannot start subagents, leave plan mode or ask the user
NEVER_FOR_SUBAGENTS = frozenset({"Agent", "ExitPlanMode", "AskUserQuestion"})
EXPLORE_TOOLS = ("Read", "Glob", "Grep", "Bash", "WebFetch", "TodoWrite", "ReadArtifact")
#: answers longer than this are cut in the SubagentEnded event (the result and the artifact keep all)
RESULT_PREVIEW = 2000

GENERAL_PROMPT = """\
You are a subagent of a coding agent: it handed you one task, described below in the user's \
message, and will read only your final answer. Do the task completely with the tools you have — \
search, read, run and change what the task needs — then answer with what you found or did, \
concisely but with every fact the caller needs (paths, line numbers, names, commands and their \
outcomes). Nobody can answer questions from you: decide sensibly and say what you assumed."""

EXPLORE_PROMPT = """\
You are an exploring subagent of a coding agent: it handed you one question about the code base, \
described below in the user's message, and will read only your final answer. Find the answer \
quickly with searches and reads (several independent searches in one response run at once). You \
cannot change anything: your tools only read, and shell commands must be read-only. Answer with \
the facts the caller asked for — paths with line numbers, names, short quotes of the code."""


@dataclass(frozen=True)
class AgentType:
    name: str
    description: str
    system_prompt: str
    #: tool names; None: every tool a subagent may have
    tools: tuple[str, ...] | None = None
    #: None or "inherit": the caller's model
    model: str | None = None
    source: str = "built-in"
    #: shell commands must be read-only (Explore)
    read_only: bool = False


BUILTIN_TYPES = (
    AgentType("general-purpose", "General-purpose agent for multi-step tasks: researching questions, "
              "searching code, making changes. Has every tool.", GENERAL_PROMPT),
    AgentType("Explore", "Fast read-only agent for exploring a code base: finds files, searches code, reads "
              "it and answers questions about it. Cannot change anything.", EXPLORE_PROMPT,
              tools=EXPLORE_TOOLS, read_only=True),
)


@dataclass
class AgentTypes:
    types: dict[str, AgentType] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> AgentType | None:
        found = self.types.get(name)
        if found is None:  # the model may not match the case exactly
            found = next((t for n, t in self.types.items() if n.lower() == name.lower()), None)
        return found

    def menu_text(self) -> str:
        return "\n".join(f"- {t.name}: {t.description}" + (f" (tools: {', '.join(t.tools)})" if t.tools else "")
                         for t in self.types.values())


def _agent_from_file(path: Path, scope: str, problems: list[str]) -> AgentType | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        problems.append(f"{path}: cannot be read: {exc.strerror or exc}")
        return None
    parsed = parse_frontmatter(text, str(path))
    problems.extend(parsed.problems)
    name, description = parsed.fields.get("name"), parsed.fields.get("description")
    if not isinstance(name, str) or not name.strip() or not isinstance(description, str) or not description.strip():
        problems.append(f"{path}: a subagent needs `name` and `description` in its frontmatter; skipped")
        return None
    tools = as_list(parsed.fields.get("tools"))
    model = parsed.fields.get("model")
    return AgentType(name.strip(), " ".join(description.split()), parsed.body.strip() or GENERAL_PROMPT,
                     tools=tuple(tools) if tools else None,
                     model=str(model) if model and str(model) != "inherit" else None, source=f"{scope}: {path}")


def load_agent_types(cwd: str | Path, home: str | Path | None = None) -> AgentTypes:
    home_dir = Path(home) if home is not None else Path(os.path.expanduser("~"))
    found = AgentTypes({t.name: t for t in BUILTIN_TYPES})
    for scope, root in (("user", home_dir / ".claude" / "agents"), ("project", Path(cwd) / ".claude" / "agents")):
        if not root.is_dir():
            continue
        for path in sorted(root.glob("*.md")):
            agent = _agent_from_file(path, scope, found.problems)
            if agent is not None:
                found.types[agent.name] = agent
    return found


# ---- what a subagent runs on ---------------------------------------------------------------------

class ReadOnlyCommands:
    """The session's policy, except that a shell command that is not read-only is denied (Explore)."""

    def __init__(self, inner: Any, agent: str) -> None:
        self._inner = inner
        self._agent = agent

    @property
    def mode(self) -> Any:
        return self._inner.mode

    def decide(self, query: PermissionQuery) -> PermissionDecision:
        if query.spec.permission.kind == "bash" and not query.flags.effectively_read_only:
            return PermissionDecision("deny", "mode", f"The {self._agent} subagent only reads: this command is not "
                                                      "read-only", final=True)
        return self._inner.decide(query)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def subagent_registry(parent: ToolRegistry, allowed: tuple[str, ...] | None) -> tuple[ToolRegistry, list[str]]:
    """The parent's tools a subagent may use (hidden ones stay hidden); and the names in `allowed`
    that name no tool."""
    registry = ToolRegistry()
    wanted = set(allowed) if allowed is not None else None
    used: set[str] = set()
    for spec in parent.specs():
        if spec.name in NEVER_FOR_SUBAGENTS:
            continue
        names = {spec.name, *spec.aliases}
        if wanted is not None and not names & wanted:
            continue
        used |= names & (wanted or set())
        registry.register(spec)
        if not parent.is_visible(spec.name):
            registry.hide(spec.name)
    unknown = sorted((wanted or set()) - used - NEVER_FOR_SUBAGENTS)
    return registry, unknown


class SubagentHost:
    """What the turn loop needs, for one subagent: the session's services and pipeline, its own
    conversation, tools, prompt and model; every event it emits is tagged with its id."""

    def __init__(self, session: Any, agent_id: str, model: ModelClient, registry: ToolRegistry, policy: Any,
                 system_prompt: str) -> None:
        self.session = session
        self.agent_id = agent_id
        self.call_id_prefix = f"{agent_id}_"
        self.model = model
        self.registry = registry
        self.policy = policy
        self.system_prompt = system_prompt
        self.conversation = ConversationBuilder(agent_id=agent_id)
        self.tool_menu = registry.model_tools()
        self.hooks = session.hooks
        self.max_steps = session.max_steps
        self.early_execution = session.early_execution
        self.max_concurrency = session.max_concurrency
        services = dict(session.services)
        services.pop("subagents", None)
        todos = services.get("todos")
        if todos is not None:
            services["todos"] = type(todos)()  # its own list: the caller's plan is not overwritten
        self.services = services
        parent_account = getattr(session, "context", None)
        settings = parent_account.settings if isinstance(parent_account, ContextAccount) else None
        #: its own context: a subagent's conversation fills up on its own
        self.context = ContextAccount(settings) if settings is not None else ContextAccount()

    def emit(self, event: Any) -> Any:
        event.__dict__["agent_id"] = self.agent_id
        self.session.emit(event)
        if not event.ephemeral:
            self.conversation.feed(event)
        return event

    def next_step(self) -> int:
        return self.session.next_step()

    def call_env(self, turn_id: str | None) -> Any:
        return replace(self.session.call_env(turn_id), registry=self.registry, policy=self.policy, emit=self.emit,
                       services=self.services)


@dataclass
class SubagentOutcome:
    agent_id: str
    agent_type: str
    text: str
    reason: str
    error: str | None
    steps: int
    calls: int
    transcript_path: str | None


def transcript_text(host: SubagentHost, agent_type: str, description: str) -> str:
    """The subagent's whole conversation, as text people and models can read."""
    lines = [f"Subagent {host.agent_id} ({agent_type}): {description}", f"Model: {host.model.model}",
             f"Tools: {', '.join(t.name for t in host.tool_menu)}", ""]
    for message in host.conversation.snapshot():
        for block in message.content:
            if isinstance(block, TextBlock):
                lines += [f"--- {message.role}", block.text.rstrip(), ""]
            elif isinstance(block, ThinkingBlock):
                continue
            elif isinstance(block, ToolUseBlock):
                shown = block.input if isinstance(block.input, str) else json.dumps(block.input, ensure_ascii=False)
                lines += [f"--- tool call {block.id}: {block.name} {shown}", ""]
            elif isinstance(block, ToolResultBlock):
                mark = "error" if block.is_error else "result"
                lines += [f"--- tool {mark} {block.tool_use_id}", content_text(block.content).rstrip(), ""]
    return "\n".join(lines)


#: (agent loop) the turn loop the subagent runs: `agent_loop(host, control, turn_id, result)`
AgentLoop = Callable[..., Any]
#: (description, the type's model or None) → the model the subagent talks to
ModelFor = Callable[[str, str | None], ModelClient]
#: (tool names) → the environment part of a system prompt
PromptFor = Callable[[list[str]], str]


class SubagentRunner:
    """The session service "subagents": what an Agent call runs."""

    def __init__(self, session: Any, types: AgentTypes, *, loop: AgentLoop, model_for: ModelFor,
                 prompt_for: PromptFor) -> None:
        self.session = session
        self.types = types
        self.loop = loop
        self.model_for = model_for
        self.prompt_for = prompt_for
        self._ids = itertools.count(1)
        self.turn_id: str | None = None
        session.subscribe(self._follow_turns)

    def _follow_turns(self, event: Any) -> None:
        if event.type == "TurnStarted" and getattr(event, "agent_id", None) is None:
            self.turn_id = event.turn_id

    def resumed_from(self, events: list[Any]) -> None:
        """A resumed session numbers its new subagents after the recorded ones."""
        used = [int(e.agent_id.rsplit("-", 1)[-1]) for e in events if e.type == "SubagentStarted"
                and isinstance(e.agent_id, str) and e.agent_id.rsplit("-", 1)[-1].isdigit()]
        if used:
            self._ids = itertools.count(max(used) + 1)

    def check(self, subagent_type: str) -> None:
        if self.types.get(subagent_type) is None:
            raise ToolFailure(f"There is no subagent type {subagent_type!r}. Available: "
                              f"{', '.join(self.types.types)}.", code="precondition_failed")

    def host_for(self, agent_type: AgentType, description: str, agent_id: str) -> tuple[SubagentHost, list[str]]:
        session = self.session
        registry, unknown = subagent_registry(session.registry, agent_type.tools)
        policy = ReadOnlyCommands(session.policy, agent_type.name) if agent_type.read_only else session.policy
        names = [t.name for t in registry.model_tools()]
        prompt = f"{agent_type.system_prompt}\n\n{self.prompt_for(names)}"
        model = self.model_for(description, agent_type.model)
        return SubagentHost(session, agent_id, model, registry, policy, prompt), unknown

    async def run(self, ctx: ToolContext, description: str, prompt: str, subagent_type: str) -> SubagentOutcome:
        agent_type = self.types.get(subagent_type)
        if agent_type is None:
            self.check(subagent_type)
        assert agent_type is not None
        agent_id = f"agent-{next(self._ids)}"
        host, unknown = self.host_for(agent_type, description, agent_id)
        turn_id = self.turn_id
        emit = self.session.emit
        began = time.perf_counter()
        emit(SubagentStarted(turn_id=turn_id, call_id=ctx.call_id, agent_id=agent_id, description=description,
                             subagent_type=agent_type.name, prompt=prompt, model=host.model.model,
                             tools=[t.name for t in host.tool_menu]))
        if unknown:
            emit(Warning(turn_id=turn_id, call_id=ctx.call_id, agent_id=agent_id, code="subagent_tools_unknown",
                         message=f"The {agent_type.name} subagent names tools this session does not have: "
                                 f"{', '.join(unknown)} ({agent_type.source})"))
        host.emit(UserMessage(turn_id=turn_id, text=prompt))
        result = TurnResult(turn_id=turn_id or "", reason="completed")
        control = TurnControl()
        work = asyncio.ensure_future(self.loop(host, control, turn_id, result))
        try:
            await asyncio.shield(work)
        except asyncio.CancelledError:
            # the caller was interrupted: so is the subagent, and each of its calls settles
            control.abort("interrupted")
            await asyncio.gather(work, return_exceptions=True)
            result.reason = "interrupted"
            self._ended(host, ctx, result, began, None)
            raise
        transcript = self._keep_transcript(host, ctx, agent_type.name, description)
        self._ended(host, ctx, result, began, transcript)
        return SubagentOutcome(agent_id, agent_type.name, result.text, result.reason, result.error, result.steps,
                               len(result.outcomes), transcript.path if transcript is not None else None)

    def _keep_transcript(self, host: SubagentHost, ctx: ToolContext, agent_type: str, description: str) -> Any:
        store = host.services.get("artifacts")
        if store is None:
            return None
        try:
            ref = store.persist_text(ctx.call_id, "Agent", transcript_text(host, agent_type, description))
        except OSError as exc:
            self.session.emit(Warning(call_id=ctx.call_id, code="artifact_fallback",
                                      message=f"The subagent's transcript could not be saved: {exc}"))
            return None
        self.session.emit(ArtifactPersisted(turn_id=self.turn_id, call_id=ctx.call_id, artifact=ref, tool="Agent"))
        return ref

    def _ended(self, host: SubagentHost, ctx: ToolContext, result: TurnResult, began: float, transcript: Any) -> None:
        text = result.text if len(result.text) <= RESULT_PREVIEW else result.text[:RESULT_PREVIEW] + "…"
        self.session.emit(SubagentEnded(
            turn_id=self.turn_id, call_id=ctx.call_id, agent_id=host.agent_id, reason=result.reason,
            steps=result.steps, calls=len(result.outcomes), usage=result.usage, result=text,
            duration_ms=int((time.perf_counter() - began) * 1000), transcript=transcript))
