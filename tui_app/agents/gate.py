"""An external agent's permission questions, put to Vigil first (docs/architecture.md §11).

Two moments, whatever the protocol calls them:

* `screen` — before the agent decides anything about a call (Claude Code's PreToolUse hook
  callback): Vigil's PreToolUse hooks and policy (rules, mode, working directories, guards). A
  deny ends the call there, with no dialog; an ask makes the agent ask (so the user is asked);
  otherwise the agent decides by itself, and the call is shown as decided by the agent.
* `ask` — the agent asks (Claude Code's can_use_tool, ACP's request_permission): Vigil's policy
  again on exactly the input the agent will run; a deny or an explicit allow (a rule, the mode, a
  hook) answers at once; anything else goes to the same ApprovalBroker and dialog as Vigil's own
  calls, with a preview Vigil computes itself (an Edit's diff against the file on disk, the exact
  command). What the user approved is what goes back, byte for byte.

Vigil's own tool specs give the policy and the previews their view of a call; a tool Vigil does not
know is judged by its name alone (rules on the bare name, the mode) and previewed as JSON. An input
Vigil cannot read for a tool whose rules look inside it (a path, a command) is always asked about.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from tui_app.agents.calls import UNKNOWN_FLAGS
from tui_app.runtime.approval_stage import approve
from tui_app.runtime.call import CallState, ToolCall, hook_call, make_context
from tui_app.runtime.contract import PermissionSpec, RawResult, ToolContext, ToolSpec
from tui_app.runtime.events import PermissionResolved
from tui_app.runtime.outcome import CallEnded
from tui_app.runtime.permissions.broker import input_sha256
from tui_app.runtime.permissions.decision import (
    PermissionDecision,
    PermissionQuery,
    combine_with_hook,
    offered,
    suggested_rule,
)
from tui_app.runtime.validation import issues_text, validate_input

#: permission kinds whose rules look inside the input: an unreadable input there is never passed
CONTENT_RULE_KINDS = frozenset({"read", "edit", "bash", "web"})


@dataclass
class Verdict:
    """Vigil's word on one call. `pass` (screen only): Vigil has no objection, the agent decides."""

    behavior: Literal["allow", "deny", "ask", "pass"]
    reason: str = ""
    #: allow: exactly what the agent is to run
    input: dict[str, Any] | None = None
    #: deny: how the call's result is to be called (phase, code)
    phase: str = "permission"
    code: str = "permission_denied"
    interrupt: bool = False
    #: screen: a Vigil PreToolUse hook rewrote the input / added context for the model
    updated_input: dict[str, Any] | None = None
    context: list[str] = field(default_factory=list)


async def _not_run_here(_args: Any, _ctx: ToolContext) -> RawResult:
    raise RuntimeError("an external agent's tool runs in the agent, never in Vigil")


def foreign_spec(name: str) -> ToolSpec:
    """A tool only the agent knows: any input, may do anything, judged by its name."""
    mcp = name.startswith("mcp__")
    return ToolSpec(name=name, description=f"{name} (run by the agent)", handler=_not_run_here,
                    input_schema={"type": "object"}, source="mcp" if mcp else "builtin", flags=UNKNOWN_FLAGS,
                    permission=PermissionSpec(kind="mcp" if mcp else "other", reason="a tool of the agent"))


class Gate:
    def __init__(self, session: Any, agent_label: str) -> None:
        self.session = session
        self.agent_label = agent_label
        #: what Vigil's PreToolUse hooks said at `screen`, for the `ask` that may follow
        self._hook_words: dict[str, tuple[str | None, str]] = {}

    # ---- the call as Vigil sees it ------------------------------------------------------------

    def _state(self, turn_id: str | None, call_id: str, name: str, data: Any) -> tuple[CallState, str | None]:
        """The call with Vigil's spec for it, and why Vigil cannot read its input (or None)."""
        env = self.session.call_env(turn_id)
        state = CallState(ToolCall(call_id, name, data), env)
        spec = env.registry.resolve(name) if name else None
        problem = None
        if not isinstance(data, dict):
            problem = "the input is not an object"
        elif spec is not None and spec.input_model is not None:
            checked, issues = validate_input(spec, _known_fields(spec.input_model, data))
            if checked is None:
                if spec.permission.kind in CONTENT_RULE_KINDS:
                    problem = issues_text(spec.name, issues)
                else:
                    spec = None
        state.spec = spec or foreign_spec(name)
        state.input = dict(data) if isinstance(data, dict) else {}
        try:
            state.flags = state.spec.flags_of(state.input)
        except Exception:
            state.flags = UNKNOWN_FLAGS
        state.ctx = make_context(state)
        return state, problem

    def _decide(self, state: CallState, hook_word: str | None, hook_reason: str) -> PermissionDecision:
        spec, env = state.spec, state.env
        assert spec is not None and state.flags is not None
        decision = env.policy.decide(PermissionQuery(spec, state.input, state.flags, env.cwd))
        return combine_with_hook(decision, hook_word, hook_reason, spec)  # type: ignore[arg-type]

    def _resolved(self, state: CallState, decision: PermissionDecision) -> None:
        env = state.env
        env.emit(PermissionResolved(turn_id=env.turn_id, call_id=state.call.id, decision=decision.behavior,  # type: ignore[arg-type]
                                    decided_by=decision.decided_by, reason=decision.reason, rule=decision.rule))

    # ---- before the agent decides -------------------------------------------------------------

    async def screen(self, turn_id: str | None, call_id: str, name: str, data: Any) -> Verdict:
        state, problem = self._state(turn_id, call_id, name, data)
        if problem is not None:
            return Verdict("ask", f"Vigil cannot check this call's input ({problem}), so it asks")
        outcome = await self.session.hooks.pre_tool_use(hook_call(state))
        if outcome.decision == "deny" or outcome.stop_reason is not None:
            reason = (outcome.reason or "Blocked by PreToolUse hook") if outcome.decision == "deny" else (
                f"Stopped by a PreToolUse hook: {outcome.stop_reason}")
            self._resolved(state, PermissionDecision("deny", "hook", reason))
            return Verdict("deny", reason, phase="hook", code="hook_denied",
                           interrupt=outcome.stop_reason is not None)
        rewritten = None
        if outcome.updated_input is not None and isinstance(outcome.updated_input, dict):
            rewritten = dict(outcome.updated_input)
            state, problem = self._state(turn_id, call_id, name, rewritten)
            if problem is not None:
                return Verdict("ask", f"A PreToolUse hook rewrote the input into one Vigil cannot check ({problem})",
                               updated_input=rewritten)
        self._hook_words[call_id] = (outcome.decision, outcome.reason)
        decision = self._decide(state, outcome.decision, outcome.reason)
        if decision.behavior == "deny":
            self._resolved(state, decision)
            return Verdict("deny", decision.reason or f"Permission to use {name} denied", context=outcome.context)
        if decision.behavior == "ask":
            return Verdict("ask", decision.reason, updated_input=rewritten, context=outcome.context)
        if rewritten is not None:  # what will run is not what the model proposed: the user sees it first
            return Verdict("ask", "A Vigil PreToolUse hook rewrote the input", updated_input=rewritten,
                           context=outcome.context)
        return Verdict("pass", decision.reason, context=outcome.context)

    def forget(self) -> None:
        """The turn is over: no question about its calls can come any more."""
        self._hook_words.clear()

    # ---- the agent asks ---------------------------------------------------------------------

    def judge(self, turn_id: str | None, call_id: str, name: str, data: Any) -> tuple[CallState, PermissionDecision]:
        """Vigil's policy on one call (with what Vigil's PreToolUse hooks said at `screen`)."""
        state, problem = self._state(turn_id, call_id, name, data)
        hook_word, hook_reason = self._hook_words.pop(call_id, (None, ""))
        if problem is not None:
            return state, PermissionDecision("ask", "guard", f"Vigil cannot check this call's input ({problem})")
        return state, self._decide(state, hook_word, hook_reason)

    def resolved(self, state: CallState, decision: PermissionDecision) -> None:
        """Say in the log how Vigil decided without asking."""
        self._resolved(state, decision)

    async def ask(self, turn_id: str | None, call_id: str, name: str, data: Any, agent_reason: str = "") -> Verdict:
        """Raises CancelledError when the question is withdrawn (the dialog closes by itself)."""
        state, decision = self.judge(turn_id, call_id, name, data)
        spec = state.spec
        assert spec is not None
        if decision.behavior == "deny":
            self._resolved(state, decision)
            return Verdict("deny", decision.reason or f"Permission to use {name} denied")
        original = copy.deepcopy(state.input)
        if decision.behavior == "allow" and decision.decided_by in ("rule", "mode", "hook"):
            self._resolved(state, decision)
            return Verdict("allow", decision.reason, input=original)
        if decision.behavior == "allow":  # Vigil has no word of its own (a read): the agent's question stands
            why = f"{self.agent_label} asks" + (f": {agent_reason}" if agent_reason else "")
            rules = offered(suggested_rule(spec, state.input))
            decision = PermissionDecision("ask", "agent", why, suggested_rules=rules)
        digest = input_sha256(state.input)
        try:
            await approve(state, decision)
        except CallEnded as ended:
            return Verdict("deny", ended.message, phase=ended.phase, code=ended.code, interrupt=ended.stop_turn)
        # a PermissionRequest hook may have rewritten the input (validated and put to the rules again)
        run = state.input if input_sha256(state.input) != digest else original
        return Verdict("allow", decision.reason, input=run)


def _known_fields(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """The part of an agent's input Vigil's model of the tool describes (the agent's tools carry
    keys Vigil's do not); the whole input is still what the user sees and what runs."""
    names = set()
    for name, info in model.model_fields.items():
        names.add(name)
        if info.alias:
            names.add(info.alias)
    return {k: v for k, v in data.items() if k in names}
