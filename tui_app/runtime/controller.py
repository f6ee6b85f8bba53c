"""The session port's one handler: every command of every client comes here.

`SessionController.handle(command)` carries a command out on the session's loop and replies
`Accepted` or `Refused`; whatever it changes is told as an event (the mode, the model, the rules,
the working directories, a compaction …), so every client — not only the one that asked — sees
it. It is the only writer of the session's mode, model, rules and directories (the permission
state through `SessionWrites`), and it owns the session's work: one turn, compaction or `!`
command at a time, each interruptible. `facts()` answers, in one typed object, what a client may
know beyond the events. See docs/architecture.md, "The session port".
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tui_app.runtime.agent import (
    Agent,
    LocalCommandIntent,
    NoteIntent,
    PromptIntent,
    ShellIntent,
    TurnResult,
    UnknownCommandIntent,
    Unsupported,
)
from tui_app.runtime.commands import (
    Accepted,
    AddDirectory,
    AddMemoryNote,
    AnswerApproval,
    AnswerPlan,
    AnswerQuestion,
    AnswerTrust,
    Clear,
    Compact,
    EditRule,
    EndSession,
    HookFact,
    Interrupt,
    Notify,
    ReconnectMcp,
    Refused,
    Reply,
    RuleFact,
    RunShell,
    SelectAgentMode,
    SessionFacts,
    SetModel,
    SetPermissionMode,
    SetSystemPrompt,
    SubmitPrompt,
)
from tui_app.runtime.events import LocalCommandRan, ModelChanged
from tui_app.runtime.executor import TurnControl
from tui_app.runtime.permissions.broker import ApprovalAnswer, ApprovalBroker
from tui_app.runtime.permissions.decision import PERMISSION_MODES
from tui_app.runtime.permissions.updates import SessionWrites

BUSY = "A turn is still running: wait for it, or interrupt it."
#: rule destinations every session has (a settings file's path is one too, once the session knows it)
NAMED_DESTINATIONS = ("session", "localSettings", "projectSettings", "userSettings")


@dataclass(frozen=True)
class SessionProfile:
    """How the session was set up, as plain data (what the settings screen and facts() show)."""

    project_dir: str = ""
    settings_files: tuple[str, ...] = ()
    #: every settings file of the session's locations (a rule may be saved to any of them)
    settings_locations: tuple[str, ...] = ()
    no_claude_settings: bool = False
    settings_file: str | None = None
    hooks: tuple[HookFact, ...] = ()
    notifications: bool = True
    agent_names: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


class ControlledSession(Protocol):
    """What the controller needs of its session (the session builds its controller with itself)."""

    id: str
    cwd: str
    agent: Agent
    policy: Any
    broker: ApprovalBroker
    log_failure: str | None
    hooks: Any

    def hook_session_info(self) -> dict[str, Any]: ...

    def emit(self, event: Any) -> Any: ...

    def interrupt(self, reason: str = "interrupted") -> None: ...

    @property
    def busy(self) -> bool: ...

    def hold(self, control: TurnControl) -> Any: ...

    async def run_turn(self, prompt: str, client: str | None = None) -> TurnResult: ...

    async def close(self, reason: str = "exit") -> None: ...


class SessionController:
    def __init__(self, session: ControlledSession, profile: SessionProfile | None = None) -> None:
        self.session = session
        self.profile = profile or SessionProfile(project_dir=session.cwd)
        #: the one writer of the permission state (the approval stage and the tools write through it)
        self.writes = SessionWrites(session.policy, session.emit)
        self._work: asyncio.Task[Any] | None = None
        self._last: Any = None
        self._ended = False
        #: folded from the session's events (what /cost and /context tell)
        self.compactions = 0
        self.usage: dict[str, int] = {}
        self._handlers: dict[str, Callable[[Any], Awaitable[Reply]]] = {
            "SubmitPrompt": self._submit, "Interrupt": self._interrupt, "Compact": self._compact,
            "Clear": self._clear, "RunShell": self._run_shell, "AddMemoryNote": self._add_note,
            "Notify": self._notify, "EndSession": self._end, "AnswerApproval": self._answer_approval,
            "AnswerQuestion": self._answer_question, "AnswerPlan": self._answer_plan,
            "SetPermissionMode": self._set_mode, "SetModel": self._set_model,
            "SelectAgentMode": self._select_agent_mode, "SetSystemPrompt": self._set_system_prompt,
            "AddDirectory": self._add_directory, "EditRule": self._edit_rule, "ReconnectMcp": self._reconnect_mcp,
            "AnswerTrust": self._answer_trust,
        }

    def observe(self, event: Any) -> None:
        """Called by the session for every event it emits: the few facts folded from them."""
        kind = event.type
        if kind == "ModelStepEnded":
            for key, value in event.usage.items():
                if isinstance(value, int):
                    self.usage[key] = self.usage.get(key, 0) + value
        elif kind == "ConversationCompacted" and event.trigger != "clear" and event.agent_id is None:
            self.compactions += 1

    # ---- the port -------------------------------------------------------------------------------

    async def handle(self, command: Any) -> Reply:
        """Carry `command` out (on the session's loop). Never raises for what a client asked: a
        command the session cannot honour is a Refused with a sentence for the user."""
        if self._ended and command.type not in ("EndSession", "Interrupt"):
            return Refused(code="ended", message="The session has ended.")
        handler = self._handlers.get(command.type)
        if handler is None:
            return Refused(code="invalid", message=f"Vigil does not know the command {command.type!r}.")
        try:
            return await handler(command)
        except Unsupported as exc:
            return Refused(code="unsupported", message=str(exc))

    @property
    def busy(self) -> bool:
        """A turn, compaction or `!` command is running (thread-safe to read)."""
        work = self._work
        return self.session.busy or (work is not None and not work.done())

    async def wait_idle(self) -> Any:
        """The result of the work running now (or of the last one): a TurnResult for a turn.

        Whoever waits owns the work: cancelled while waiting (a signal ends a headless run), the
        work is cancelled too, and awaited, so its processes are gone before the session closes."""
        work = self._work
        if work is not None:
            try:
                await asyncio.wait({work})
            except asyncio.CancelledError:
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
                raise
        return self._last

    def facts(self) -> SessionFacts:
        session, agent, policy, profile = self.session, self.session.agent, self.session.policy, self.profile
        rules = [RuleFact(behavior=r.behavior, text=r.text, source=r.source)
                 for r in (policy.rules() if hasattr(policy, "rules") else [])]
        sandbox = getattr(policy, "sandbox", None)
        destinations = {name: str(path) for name, path in getattr(policy, "destinations", {}).items()}
        values: dict[str, Any] = dict(
            session_id=session.id, cwd=session.cwd, project_dir=profile.project_dir or session.cwd,
            agent=agent.name, agent_label=agent.label, capabilities=agent.capabilities, provider=agent.provider,
            model=agent.model, permission_mode=policy.mode, permission_modes=list(PERMISSION_MODES),
            working_directories=list(getattr(getattr(policy, "dirs", None), "dirs", ()) or [session.cwd]),
            rules=rules, rule_destinations=destinations, hooks=list(profile.hooks),
            settings_files=list(profile.settings_files), no_claude_settings=profile.no_claude_settings,
            settings_file=profile.settings_file, notifications=profile.notifications,
            slash_commands=agent.commands(), sandbox=str(getattr(sandbox, "status", "off")), busy=self.busy,
            log_failure=session.log_failure, agent_names=list(profile.agent_names), usage=dict(self.usage),
            note_targets=[(label, str(path)) for label, path in agent.note_targets(session)],
        )
        values.update(agent.agent_facts())
        if "context" in values and values["context"] is not None:
            values["context"] = values["context"].model_copy(update={"compactions": self.compactions})
        return SessionFacts(**values)

    # ---- work: one at a time ------------------------------------------------------------------

    def _refuse_work(self) -> Refused | None:
        if self.session.log_failure is not None:
            return Refused(code="log_failed", message=(
                f"The session log cannot be written ({self.session.log_failure}), so nothing more is run."))
        if self.busy:
            return Refused(code="busy", message=BUSY)
        return None

    def _begin(self, work: Awaitable[Any]) -> None:
        async def run() -> Any:
            self._last = result = await work
            return result

        self._work = asyncio.ensure_future(run())

    async def _submit(self, command: SubmitPrompt) -> Reply:
        intent = PromptIntent(command.text) if command.literal else self.session.agent.route(command.text)
        if isinstance(intent, LocalCommandIntent):
            return await self._local(intent, command.client)
        if isinstance(intent, ShellIntent):
            return await self._run_shell(RunShell(command=intent.command, client=command.client))
        if isinstance(intent, UnknownCommandIntent) and command.unknown_command == "refuse":
            return Refused(code="unknown_command", message=(
                f"There is no command /{intent.name}: /help lists them. To send the text to the model as it is, "
                "start it with a space."))
        if isinstance(intent, NoteIntent | UnknownCommandIntent):
            intent = PromptIntent(command.text)
        refused = self._refuse_work()
        if refused is not None:
            return refused
        turn_id = f"turn-{getattr(self.session, 'turns', 0) + 1}"
        self._begin(self.session.run_turn(intent.text, command.client or None))
        return Accepted(turn_id=turn_id)

    async def _local(self, intent: LocalCommandIntent, client: str) -> Reply:
        """A built-in command Vigil runs itself: its action (a compaction, a mode …) or its text."""
        if intent.screen_only:
            output = f"/{intent.name} isn't available in this environment."
            self.session.emit(LocalCommandRan(command=intent.name, args=intent.args, output=output,
                                              outcome="unavailable_headless", client=client or None))
            return Accepted(command=intent.name, output=output)
        if intent.action is not None:
            reply = await self.handle(intent.action.model_copy(update={"client": client}))
            if isinstance(reply, Refused):
                self.session.emit(LocalCommandRan(command=intent.name, args=intent.args, output=reply.message,
                                                  stream="stderr", outcome="failed", client=client or None))
                return reply
            if intent.name == "compact":
                return reply  # its output is the compaction's own (ConversationCompacted)
            output = reply.message
        else:
            try:
                output = self.session.agent.local_output(intent.name, intent.args, self.facts())
            except Unsupported as exc:
                output = str(exc)
        self.session.emit(LocalCommandRan(command=intent.name, args=intent.args, output=output, client=client or None))
        return Accepted(command=intent.name, output=output, message=output)

    async def _interrupt(self, command: Interrupt) -> Reply:
        if not self.busy:
            return Refused(code="not_found", message="Nothing is running.")
        self.session.interrupt(command.reason)
        return Accepted(message="Interrupting: running calls are cancelled, the rest are not started.")

    async def _compact(self, command: Compact) -> Reply:
        agent = self.session.agent
        if not agent.capabilities.compact:
            raise Unsupported(f"{agent.label} compacts its own conversation: send /compact as a prompt")
        refused = self._refuse_work()
        if refused is not None:
            return refused
        control = TurnControl()

        async def run() -> Any:
            with self.session.hold(control):
                return await agent.compact(self.session, control, command.instructions)

        self._begin(run())
        return Accepted(message="Compacting: the model is writing a summary of the conversation.")

    async def _clear(self, command: Clear) -> Reply:
        agent = self.session.agent
        if not agent.capabilities.clear:
            raise Unsupported(f"{agent.label} keeps its own conversation; it cannot be cleared from Vigil")
        refused = self._refuse_work()
        if refused is not None:
            return refused
        await agent.clear(self.session)
        return Accepted(message="The conversation was cleared: the model starts afresh (the log keeps it all).")

    async def _run_shell(self, command: RunShell) -> Reply:
        agent = self.session.agent
        if not agent.capabilities.shell:
            raise Unsupported(f"{agent.label} cannot be given the output of your own commands")
        if not command.command.strip():
            return Refused(code="invalid", message="The command is empty.")
        refused = self._refuse_work()
        if refused is not None:
            return refused
        control = TurnControl()

        async def run() -> Any:
            with self.session.hold(control):
                return await agent.run_shell(self.session, command.command, control)

        self._begin(run())
        return Accepted(message=f"Running {command.command}")

    async def _add_note(self, command: AddMemoryNote) -> Reply:
        agent = self.session.agent
        if not agent.capabilities.memory_notes:
            raise Unsupported(f"{agent.label} reads its own memory files")
        targets = {os.path.realpath(path): path for _, path in agent.note_targets(self.session)}
        target = targets.get(os.path.realpath(os.path.expanduser(command.path)))
        if target is None:
            return Refused(code="invalid", message=(
                f"{command.path} is not one of this session's memory files (a note goes to one of: "
                f"{', '.join(str(p) for p in targets.values())})."))
        if not command.note.strip():
            return Refused(code="invalid", message="The note is empty.")
        try:
            written = await agent.add_memory_note(Path(target), command.note)
        except OSError as exc:
            return Refused(code="failed", message=f"The note could not be saved: {exc.strerror or exc}")
        return Accepted(message=f"Noted in {written}; the system prompt has it from the next request on.",
                        data={"path": str(written)})

    async def _notify(self, command: Notify) -> Reply:
        await self.session.hooks.notification(self.session.hook_session_info(), command.message, command.title,
                                              command.kind)
        return Accepted()

    async def _end(self, command: EndSession) -> Reply:
        if self._ended:
            return Accepted(message="The session had ended already.")
        self._ended = True
        self.session.interrupt("session ended")
        if self._work is not None:
            await asyncio.wait({self._work})
        await self.session.close(command.reason)
        return Accepted(message="The session has ended.")

    # ---- answers ------------------------------------------------------------------------------

    async def _answer_approval(self, command: AnswerApproval) -> Reply:
        answer = ApprovalAnswer(command.decision, input_sha256=command.input_sha256, feedback=command.feedback,
                                reason=command.reason,
                                always=command.always, rules=tuple(command.rules), destination=command.destination,
                                escaped=command.escaped, client=command.client or None,
                                updated_input=command.updated_input,
                                updated_permissions=tuple(command.updated_permissions), interrupt=command.interrupt)
        if not self.session.broker.answer(command.request_id, answer):
            return Refused(code="not_found", message=(
                "That request no longer waits: it was answered already (by a hook or another client), its call "
                "was cancelled, or it was shown for another input."))
        return Accepted()

    async def _answer_question(self, command: AnswerQuestion) -> Reply:
        if not self.session.broker.answer_question(command.request_id, command.answers, client=command.client or None):
            return Refused(code="not_found", message="That question no longer waits (answered, or its call was "
                                                      "cancelled).")
        return Accepted()

    async def _answer_plan(self, command: AnswerPlan) -> Reply:
        answers = None if command.decision is None else {
            "decision": command.decision, **({"feedback": command.feedback} if command.feedback else {})}
        return await self._answer_question(AnswerQuestion(request_id=command.request_id, answers=answers,
                                                          client=command.client))

    # ---- the session's settings ---------------------------------------------------------------

    async def _set_mode(self, command: SetPermissionMode) -> Reply:
        if command.mode not in PERMISSION_MODES:
            return Refused(code="invalid", message=(
                f"No permission mode {command.mode!r}: choose one of {', '.join(PERMISSION_MODES)}."))
        self.writes.set_mode(command.mode, client=command.client or None)
        return Accepted(message=f"Permission mode: {command.mode}")

    async def _set_model(self, command: SetModel) -> Reply:
        agent = self.session.agent
        if command.model is not None and not command.model.strip():
            return Refused(code="invalid", message="A model needs a name.")
        previous = agent.model
        name = await agent.set_model(command.model.strip() if command.model else None)
        if name != previous:
            self.session.emit(ModelChanged(model=name, previous=previous, client=command.client or None))
        note = " (the scripted model plays its script whatever the name)" if agent.provider == "scripted" else ""
        return Accepted(message=f"Model: {name} from the next request on{note}", data={"model": name})

    async def _select_agent_mode(self, command: SelectAgentMode) -> Reply:
        await self.session.agent.select_mode(command.mode_id)
        return Accepted()

    async def _set_system_prompt(self, command: SetSystemPrompt) -> Reply:
        self.session.agent.set_system_prompt(command.text, command.append)
        return Accepted()

    async def _add_directory(self, command: AddDirectory) -> Reply:
        target = Path(os.path.expanduser(command.path.strip()))
        if not command.path.strip():
            return Refused(code="invalid", message="A directory is needed: /add-dir ../lib")
        if not target.is_absolute():
            target = Path(self.session.cwd) / target
        target = target.resolve()
        if not target.is_dir():
            return Refused(code="invalid", message=f"{target} is not a directory")
        self.writes.add_directories([str(target)], client=command.client or None)
        return Accepted(message=f"{target} is now a working directory of this session.", data={"path": str(target)})

    async def _edit_rule(self, command: EditRule) -> Reply:
        destination = self._destination(command.destination)
        if destination is None:
            return Refused(code="invalid", message=(
                f"{command.destination} is not a place this session saves rules to (one of "
                f"{', '.join(NAMED_DESTINATIONS)}, or one of its settings files)."))
        client = command.client or None
        if command.action == "add":
            done, problems = self.writes.add_rules(command.behavior, list(command.rules), destination, client=client)
        else:
            replacing = command.replace_with if command.action == "replace" else None
            done, problems = self.writes.remove_rules(command.behavior, list(command.rules), destination,
                                                      replace_with=replacing, client=client)
        if problems and (command.action != "add" or not done):
            return Refused(code="invalid", message=" ".join(problems))
        return Accepted(message=" ".join(problems), data={"rules": done})

    def _destination(self, name: str) -> str | None:
        """A destination the policy knows by name; a settings file of the session is named by its path."""
        destinations = getattr(self.session.policy, "destinations", None)
        if name in NAMED_DESTINATIONS or (destinations is not None and name in destinations):
            return name
        path = Path(os.path.expanduser(name))
        known = {os.path.realpath(p) for p in self.profile.settings_locations}
        if destinations is not None and path.is_absolute() and os.path.realpath(path) in known:
            destinations[name] = path
            return name
        return None

    async def _answer_trust(self, command: AnswerTrust) -> Reply:
        trust = getattr(self.session, "services", {}).get("project_trust")
        if trust is None or not trust.waiting:
            return Refused(code="not_found", message="No question about trusting the project is waiting.")
        trust.answer(command.trusted, command.client)
        return Accepted(message="Trusted" if command.trusted else "Not trusted")

    async def _reconnect_mcp(self, command: ReconnectMcp) -> Reply:
        await self.session.agent.reconnect_mcp(command.server)
        return Accepted(message=f"Reconnecting {command.server}")

