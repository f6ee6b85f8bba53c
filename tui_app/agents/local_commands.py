"""What Vigil's informational slash commands print (`/cost`, `/context`, `/model`, `/mode`,
`/agents`, `/permissions`, `/mcp`), as plain text made from the session's facts.

Headless this is the command's whole answer (stream-json carries it as Claude Code carries a local
command's stdout); the TUI shows the same facts in richer views of its own.
"""

from __future__ import annotations

from collections.abc import Callable

from tui_app.agents.prompt_router import mode_help
from tui_app.runtime.commands import SessionFacts


def render(name: str, args: str, facts: SessionFacts) -> str:
    writer = RENDERERS.get(name)
    if writer is None:
        return f"/{name} has nothing to show here."
    return writer(facts)


def _model(facts: SessionFacts) -> str:
    window = f", a context window of {facts.context.window:,} tokens" if facts.context and facts.context.window else ""
    return f"Model: {facts.model or 'its default'} ({facts.provider}){window}. /model NAME switches."


def _mode(facts: SessionFacts) -> str:
    return mode_help(facts.permission_mode)


def _context(facts: SessionFacts) -> str:
    context = facts.context
    if context is None or not context.window:
        return "The context window of this session's model is not known."
    share = f"{context.used / context.window:.0%}"
    state = "on" if context.compaction_enabled else "off"
    return (f"Context: {context.used:,} of {context.window:,} tokens at the last step ({share}); automatic "
            f"compaction is {state} at {context.threshold:.0%}. Compactions so far: {context.compactions}.")


def _cost(facts: SessionFacts) -> str:
    usage = facts.usage
    lines = [f"Input tokens {usage.get('input_tokens', 0):,} · output tokens {usage.get('output_tokens', 0):,}"
             f" · cache reads {usage.get('cache_read_input_tokens', 0):,}"
             f" · cache writes {usage.get('cache_creation_input_tokens', 0):,} (every model step, subagents included)",
             f"Estimated cost: ${facts.cost_usd:.4f} (list prices; 0 for local and scripted models)"]
    if facts.context is not None and facts.context.window:
        lines.append(_context(facts))
    return "\n".join(lines)


def _agents(facts: SessionFacts) -> str:
    if not facts.agent_types:
        return "No subagent types."
    lines = ["The Agent tool can start:"]
    for kind in facts.agent_types:
        tools = ", ".join(kind.tools) if kind.tools else "*"
        lines.append(f"- {kind.name}: {kind.description} (Tools: {tools})")
    return "\n".join(lines)


def _permissions(facts: SessionFacts) -> str:
    lines = [f"Mode: {facts.permission_mode}"]
    lines += [f"Working directory: {d}" for d in facts.working_directories]
    by_source: dict[str, list[str]] = {}
    for rule in facts.rules:
        by_source.setdefault(rule.source, []).append(f"  {rule.behavior:<6}{rule.text}")
    for source, rules in by_source.items():
        lines += ["", source, *rules]
    if not facts.rules:
        lines += ["", "No rules: the mode decides (permissions.allow / ask / deny in settings)."]
    return "\n".join(lines)


def _mcp(facts: SessionFacts) -> str:
    if not facts.mcp_servers:
        return "No MCP servers are configured."
    return "\n".join(f"{s.name}: {s.status}" + (f" ({s.tools} tools)" if s.tools else "")
                     + (f" — {s.message}" if s.message else "") for s in facts.mcp_servers)


RENDERERS: dict[str, Callable[[SessionFacts], str]] = {
    "model": _model, "mode": _mode, "context": _context, "cost": _cost, "usage": _cost, "agents": _agents,
    "permissions": _permissions, "mcp": _mcp,
}
