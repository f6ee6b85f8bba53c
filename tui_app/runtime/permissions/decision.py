"""The permission stage: rules + mode + the hook's word + the tool's flags → allow / ask / deny.

This module holds the interface the pipeline calls and the rule of combination; the rule engine
proper (Claude Code-compatible rules, settings) plugs in as a `PermissionPolicy`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tui_app.runtime.contract import ToolFlags, ToolSpec
from tui_app.runtime.permissions.modes import PERMISSION_MODES, PermissionMode
from tui_app.runtime.permissions.path_rules import rule_path
from tui_app.runtime.permissions.rules import escape_bash, host_of

__all__ = ["PERMISSION_MODES", "PermissionMode"]  # where they were first defined; their home is modes.py

Behavior = Literal["allow", "ask", "deny"]
#: "agent": an external agent asked (Vigil's own policy had no word of its own on the call)
#: "user": the user approved exactly this in an earlier question (an external agent's request)
DecidedBy = Literal["rule", "mode", "hook", "tool", "guard", "agent", "user"]


@dataclass(frozen=True)
class PermissionQuery:
    spec: ToolSpec
    input: dict[str, Any]
    flags: ToolFlags
    cwd: str


@dataclass(frozen=True)
class PermissionDecision:
    behavior: Behavior
    decided_by: DecidedBy
    reason: str = ""
    #: the rule text that decided, when a rule did
    rule: str | None = None
    #: rules an "always allow" answer would save (shown to the user before saving)
    suggested_rules: tuple[str, ...] = ()
    #: a deny that nothing may lift (disallowed tool, deny rule)
    final: bool = False
    #: for Bash: the call will run in the sandbox (None: the policy does not know of one)
    sandboxed: bool | None = None
    #: for a file tool: the spellings of its path (link, real target) the decision was made on
    paths: tuple[str, ...] = ()


class PermissionPolicy(Protocol):
    mode: PermissionMode

    def decide(self, query: PermissionQuery) -> PermissionDecision: ...

    def hides_tool(self, name: str) -> bool:
        """A bare tool name in `deny` removes the tool from the model's menu."""
        ...

    def add_rules(self, behavior: Behavior, rules: list[str], destination: str = "localSettings") -> list[str]:
        """Make rules take effect now (and persist them for the destination). Returns what was saved."""
        ...


def combine_with_hook(
    decision: PermissionDecision, hook_word: Behavior | None, hook_reason: str, spec: ToolSpec
) -> PermissionDecision:
    """Fold a PreToolUse hook's decision into the policy's.

    Deny beats ask beats allow. A hook's allow skips the mode's question but never lifts a rule's
    deny or ask, a final deny, or an `always_ask` tool."""
    if hook_word is None:
        return decision
    if hook_word == "deny":
        return PermissionDecision("deny", "hook", hook_reason or "Blocked by PreToolUse hook", final=True)
    if hook_word == "ask":
        if decision.behavior == "deny":
            return decision
        return PermissionDecision("ask", "hook", hook_reason or decision.reason,
                                  suggested_rules=decision.suggested_rules)
    # hook says allow
    if decision.behavior == "deny" or decision.final:
        return decision
    if decision.behavior == "ask" and (decision.decided_by == "rule" or spec.permission.always_ask):
        return decision
    return PermissionDecision("allow", "hook", hook_reason or "Allowed by PreToolUse hook")


def suggested_rule(spec: ToolSpec, data: dict[str, Any]) -> str:
    """The rule an "always allow" of this exact call saves, written so that it matches this call
    and no other: wildcard characters escaped, a path absolute (`//…`). "" when no rule can say
    just this call: an empty or missing target (`Edit()` or `Bash` would allow every edit or
    every command), or a relative path (relative to what?)."""
    if spec.source == "mcp":
        return spec.name
    kind, key = spec.permission.kind, spec.permission.rule_key
    if key is None:
        return spec.name
    target = data.get(key)
    if not isinstance(target, str) or not target.strip():
        return ""
    if kind == "bash":
        return f"{spec.name}({escape_bash(target.strip())})"
    if kind in ("edit", "read"):
        if not target.startswith("/"):
            return ""
        return f"{'Edit' if kind == 'edit' else spec.name}({rule_path(target, '')})"
    if kind == "web":
        host = host_of(target)
        return f"{spec.name}(domain:{host})" if host else ""
    return f"{spec.name}({escape_fnmatch(target)})"


def escape_fnmatch(text: str) -> str:
    """A `fnmatch` pattern that matches exactly `text` (fnmatch knows no backslash escapes)."""
    return "".join(f"[{ch}]" if ch in "*?[" else ch for ch in text)


@dataclass
class ModePolicy:
    """The simple default: reads run; anything else follows the mode (default: ask).

    Rules given as bare tool names are honoured (allow / ask / deny lists of names); the full
    Claude Code rule grammar lives in the rules engine that replaces this policy."""

    mode: PermissionMode = "default"
    allow: set[str] = field(default_factory=set)
    ask: set[str] = field(default_factory=set)
    deny: set[str] = field(default_factory=set)

    def hides_tool(self, name: str) -> bool:
        return name in self.deny

    def add_rules(self, behavior: Behavior, rules: list[str], destination: str = "session") -> list[str]:
        getattr(self, behavior).update(rules)
        return list(rules)

    def decide(self, query: PermissionQuery) -> PermissionDecision:
        spec, flags = query.spec, query.flags
        rule = suggested_rule(spec, query.input)
        for behavior in ("deny", "ask", "allow"):
            names = getattr(self, behavior)
            for candidate in (spec.name, rule):
                if candidate in names:
                    return PermissionDecision(behavior, "rule", f"{behavior} rule {candidate}", rule=candidate,
                                              final=behavior == "deny")
        if spec.permission.always_ask:
            return PermissionDecision("ask", "tool", f"{spec.name} always asks", suggested_rules=offered(rule))
        if not flags.needs_approval and not flags.requires_user_interaction:
            return PermissionDecision("allow", "tool", "needs no approval")
        return mode_decision(self.mode, spec, flags, rule)


def mode_decision(mode: PermissionMode, spec: ToolSpec, flags: ToolFlags, rule: str) -> PermissionDecision:
    if mode == "bypassPermissions":
        return PermissionDecision("allow", "mode", "bypassPermissions mode")
    if flags.requires_user_interaction:
        return PermissionDecision("allow", "tool", "asks the user itself")
    if mode == "plan":  # a call that needs no approval (a read) was allowed before the mode is asked
        return PermissionDecision("deny", "mode", f"{spec.name} is not allowed in plan mode (read-only exploration)")
    if mode == "acceptEdits" and spec.permission.kind == "edit":
        return PermissionDecision("allow", "mode", "acceptEdits mode")
    if mode == "dontAsk":
        return PermissionDecision("deny", "mode", f"{spec.name} would need approval, and the mode is dontAsk")
    return PermissionDecision("ask", "mode", f"{spec.name} needs approval in {mode} mode",
                              suggested_rules=offered(rule))


def offered(rule: str) -> tuple[str, ...]:
    """A decision's `suggested_rules` for one `suggested_rule`: none when it is "" (no rule fits)."""
    return (rule,) if rule else ()
