"""`session/request_permission`: the agent's question, put to Vigil first.

The call is seen as Vigil's own tools would be: an edit (kind edit/delete/move, or any call with a
diff) is an Edit of each path — Edit rules and the working-directory check, per file; a command
(kind execute) is a Bash call — Bash rules and the classifier; a read is a Read of each path; a
fetch a WebFetch; anything else is judged by its name. Vigil's PreToolUse hooks run on each part.
A deny anywhere refuses the call; when Vigil's rules, mode or hooks allow every part, it is
allowed without a dialog; otherwise one dialog asks about the whole call, with a preview Vigil
computed itself (every file's diff against the disk, in one diff view across files).

The answer goes back as one of the agent's options: allow → its allow_once (allow_always only if
that is all it offers: "always" is a Vigil rule, so Vigil keeps being asked), deny → its
reject_once, Esc in the dialog → `cancelled` (and the turn is cancelled, as Esc does elsewhere).
ACP has no way to pass a changed input or a message back: a hook that rewrites the input makes
the call refused, and the user's feedback on a denial goes with the next prompt.
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from acp.schema import AllowedOutcome, DeniedOutcome, PermissionOption, RequestPermissionResponse

from tui_app.agents.acp.approvals import Approvals, command_key, read_key, write_key
from tui_app.agents.acp.previews import FileChange, changes_of, notes_of, preview_of
from tui_app.agents.acp.tool_calls import AcpCall
from tui_app.agents.calls import UNKNOWN_FLAGS
from tui_app.agents.gate import Verdict, foreign_spec
from tui_app.runtime.approval_stage import approve
from tui_app.runtime.call import CallState, ToolCall, make_context
from tui_app.runtime.contract import ApprovalPreview, ToolContext, ToolFlags
from tui_app.runtime.outcome import CallEnded
from tui_app.runtime.permissions.broker import input_sha256
from tui_app.runtime.permissions.decision import PermissionDecision, suggested_rule
from tui_app.tools.bash.tool import bash_flags_for, one_line

if TYPE_CHECKING:
    from tui_app.agents.acp.updates import UpdateTranslator
    from tui_app.agents.calls import CallBook
    from tui_app.agents.gate import Gate


class PermissionLink(Protocol):
    """What a permission question needs of the agent: the session, the open turn, Vigil's gate,
    the calls seen so far, what was approved already, and a way to stop the turn (docs/architecture.md §11)."""

    session: Any
    calls: CallBook | None
    gate: Gate | None
    label: str
    aborting: bool
    translator: UpdateTranslator
    approvals: Approvals
    feedback: list[str]
    #: a no was answered with the agent's abort: its turn ends because of it
    ended_by_denial: bool

    def interrupt_turn(self) -> None: ...


RISK_ORDER = {"low": 0, "medium": 1, "high": 2}
#: the agent's names for tools that write files (shown as themselves); others are shown as Edit
FILE_TOOL_NAMES = ("Edit", "Write", "MultiEdit", "NotebookEdit")


@dataclass
class Question:
    """The agent's call as Vigil's policy and dialog see it."""

    #: the tool name the dialog, the rules on the whole call and the hooks see
    name: str
    #: what is shown and bound to the answer by its hash
    input: dict[str, Any]
    #: each part judged by Vigil's policy: (Vigil's tool name, input)
    parts: list[tuple[str, dict[str, Any]]]
    preview: ApprovalPreview | None = None
    changes: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    command: str | None = None
    reads: list[str] = field(default_factory=list)


def build_question(call: AcpCall, label: str, cwd: str) -> Question:
    """Blocking (reads the files an edit names)."""
    data = call.input
    if call.changes_files:
        changes = changes_of(call)
        by_path = {c.path: c for c in changes}
        paths = list(dict.fromkeys([*by_path, *call.paths]))
        parts = []
        for path in paths:
            change = by_path.get(path)
            new = change.proposed if change is not None and change.proposed is not None else ""
            parts.append(("Edit", {"file_path": path, "old_string": "", "new_string": new}))
        name = call.tool_name if call.tool_name in FILE_TOOL_NAMES else "Edit"
        shown = data or ({"file_path": paths[0]} if len(paths) == 1 else {"file_paths": paths,
                                                                          "description": call.title})
        preview = preview_of(call, changes, label)
        if preview is None:
            what = ", ".join(paths) or "files it does not name"
            verb = "move" if call.kind == "move" else "delete" if call.kind == "delete" else "change"
            preview = ApprovalPreview(summary=f"{name} {what}", kind="text",
                                      body=f"{label} wants to {verb} {what} ({call.title}).\n"
                                           "It did not say what the files will contain.", risk="medium")
        return Question(name, shown, parts, preview, changes, notes_of(changes))
    command = call.command if call.kind == "execute" or "command" in data else None
    if command:
        preview = ApprovalPreview(summary=f"Run `{one_line(command)}` in {cwd}", kind="command", body=command,
                                  risk=bash_flags_for({"command": command}).risk)
        return Question("Bash", {**data, "command": command}, [("Bash", {"command": command})], preview,
                        command=command)
    if call.kind == "read" and call.paths:
        paths = call.paths
        shown = data or ({"file_path": paths[0]} if len(paths) == 1 else {"file_paths": paths})
        return Question("Read", shown, [("Read", {"file_path": p}) for p in paths], reads=paths)
    if call.kind == "fetch" and call.url:
        return Question("WebFetch", data or {"url": call.url}, [("WebFetch", {"url": call.url, "prompt": ""})])
    name = call.tool_name
    # no raw input (Gemini's web_fetch): the dialog shows what the agent's other words say (its title)
    return Question(name, data or call.row_input, [(name, data)])


def pick_option(options: list[PermissionOption], allow: bool) -> str | None:
    wanted = ("allow_once", "allow_always") if allow else ("reject_once", "reject_always")
    for kind in wanted:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return None


def only_aborts(options: list[PermissionOption]) -> bool:
    """The agent's only way to say no stops its whole turn (Codex's `abort`)."""
    rejects = [o for o in options if o.kind in ("reject_once", "reject_always")]
    return bool(rejects) and all("abort" in f"{o.option_id} {o.name}".lower() for o in rejects)


def selected(option_id: str) -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option_id))


def cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


class PermissionAsker:
    def __init__(self, agent: PermissionLink) -> None:
        self.agent = agent
        #: questions being decided (cancelled when the turn is: each is then answered `cancelled`)
        self.pending: set[asyncio.Task[Verdict]] = set()

    def withdraw_all(self) -> None:
        for task in list(self.pending):
            task.cancel()

    async def request(self, tool_call: Any, options: list[PermissionOption]) -> RequestPermissionResponse:
        agent = self.agent
        book = agent.calls
        if book is None or book.turn_id is None or agent.aborting:
            return cancelled()  # no turn to ask in (or it is being cancelled)
        call = agent.translator.track(tool_call)
        if book.get(call.call_id) is None:
            return cancelled()
        question = await asyncio.to_thread(build_question, call, agent.label, agent.session.cwd)
        if only_aborts(options):  # said in the dialog before the user chooses
            question.notes.append(f"{agent.label} can only abort: a no ends its turn")
        asked = asyncio.get_running_loop().time()
        inner = asyncio.ensure_future(self._decide(call, question))
        self.pending.add(inner)
        try:
            verdict = await inner
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                inner.cancel()
                raise  # the connection is closing: no answer is sent
            book.denied_by_vigil(call.call_id, "cancel", "cancelled", "The user interrupted the turn.")
            return cancelled()
        finally:
            self.pending.discard(inner)
        waited = int((asyncio.get_running_loop().time() - asked) * 1000)
        if verdict.behavior == "allow":
            book.decided_by_vigil(call.call_id, waited)
            self._remember(question)
            # the answer is on its way and the agent runs the call as soon as it reads it
            book.start(call.call_id, call.row_input, target=call.target)
            option = pick_option(options, allow=True)
            return selected(option) if option is not None else cancelled()
        book.denied_by_vigil(call.call_id, verdict.phase, verdict.code, verdict.reason)
        if verdict.interrupt:
            agent.interrupt_turn()
            return cancelled()
        option = pick_option(options, allow=False)
        if option is not None and only_aborts(options):
            agent.ended_by_denial = True  # the agent ends its turn for this no: not an interruption
        return selected(option) if option is not None else cancelled()

    def _remember(self, question: Question) -> None:
        """What was approved, for the fs writes and terminals that carry it out."""
        approvals = self.agent.approvals
        for change in question.changes:
            if change.proposed is not None:
                approvals.add(write_key(change.path, change.proposed))
        if question.command:
            approvals.add(command_key(question.command, self.agent.session.cwd))
        for path in question.reads:
            approvals.add(read_key(path))

    async def _decide(self, call: AcpCall, question: Question) -> Verdict:
        agent = self.agent
        gate, book = agent.gate, agent.calls
        assert gate is not None and book is not None
        turn_id, call_id = book.turn_id, call.call_id
        judged: list[tuple[CallState, PermissionDecision]] = []
        for name, data in question.parts:
            screened = await gate.screen(turn_id, call_id, name, data)
            if screened.behavior == "deny":
                return screened
            state, decision = gate.judge(turn_id, call_id, name, data)
            if screened.updated_input is not None:
                decision = PermissionDecision("deny", "hook", "A Vigil PreToolUse hook changed this call's input; ACP "
                                                              "cannot hand a changed input to the agent, so the call "
                                                              "is refused", final=True)
            judged.append((state, decision))
        for state, decision in judged:
            if decision.behavior == "deny":
                gate.resolved(state, decision)
                return Verdict("deny", decision.reason or f"Permission to use {question.name} denied")
        if judged and all(d.behavior == "allow" and d.decided_by in ("rule", "mode", "hook") for _, d in judged):
            state, decision = judged[0]
            reasons = "; ".join(dict.fromkeys(d.reason for _, d in judged if d.reason))
            gate.resolved(self._shown(question, judged), replace(decision, reason=reasons))
            return Verdict("allow", reasons)
        return await self._ask(question, judged)

    def _shown(self, question: Question, judged: list[tuple[CallState, PermissionDecision]]) -> CallState:
        """The whole call as the dialog shows it, with Vigil's preview."""
        agent = self.agent
        assert agent.calls is not None
        env = agent.session.call_env(agent.calls.turn_id)
        base = env.registry.resolve(question.name) or foreign_spec(question.name)
        preview = question.preview

        async def prepared(_data: dict[str, Any], _ctx: ToolContext) -> ApprovalPreview | None:
            return preview

        spec = replace(base, prepare_approval=prepared if preview is not None else None)
        call_id = judged[0][0].call.id if judged else ""
        state = CallState(ToolCall(call_id, spec.name, copy.deepcopy(question.input)), env)
        state.spec = spec
        state.input = copy.deepcopy(question.input)
        state.flags = _riskiest([s.flags for s, _ in judged if s.flags is not None])
        state.ctx = make_context(state)
        return state

    async def _ask(self, question: Question, judged: list[tuple[CallState, PermissionDecision]]) -> Verdict:
        agent = self.agent
        asking = [d for _, d in judged if d.behavior == "ask"]
        notes = "; ".join(question.notes)
        if asking:
            by = asking[0].decided_by
            reason = "; ".join(dict.fromkeys(d.reason for d in asking if d.reason))
        else:  # Vigil has no word of its own: the agent's question stands
            by, reason = "agent", f"{agent.label} asks"
        if notes:
            reason = f"{reason} ({notes})" if reason else notes
        rules: list[str] = []
        for state, decision in judged:
            if decision.behavior == "allow" and decision.decided_by in ("rule", "mode", "hook"):
                continue
            found = decision.suggested_rules or ((suggested_rule(state.spec, state.input),) if state.spec else ())
            rules += [r for r in found if r]
        decision = PermissionDecision("ask", by, reason, suggested_rules=tuple(dict.fromkeys(rules)))
        state = self._shown(question, judged)
        digest = input_sha256(state.input)
        try:
            await approve(state, decision)
        except CallEnded as ended:
            escaped = bool(getattr(state.answer, "escaped", False))
            feedback = getattr(state.answer, "feedback", None)
            if feedback:  # ACP cannot carry it in the answer: it goes with the next prompt
                agent.feedback.append(f"The user denied your {question.name} call ({state.call.id}) and said: "
                                      f"{feedback}")
            return Verdict("deny", ended.message, phase=ended.phase, code=ended.code,
                           interrupt=ended.stop_turn or escaped)
        if input_sha256(state.input) != digest:
            return Verdict("deny", "A PermissionRequest hook changed this call's input; ACP cannot hand a changed "
                                   "input to the agent, so the call is refused", phase="hook", code="hook_denied")
        return Verdict("allow", decision.reason)


def _riskiest(flags: list[ToolFlags]) -> ToolFlags:
    if not flags:
        return UNKNOWN_FLAGS
    return max(flags, key=lambda f: (RISK_ORDER.get(f.risk, 1), not f.read_only))
