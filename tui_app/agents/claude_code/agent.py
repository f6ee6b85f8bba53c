"""The Claude Code driver: one `claude` process for the whole session, one user message per turn.

Claude Code asks Vigil twice about a call: its PreToolUse hook callback (registered for every
tool in `initialize`, so every call passes Vigil's policy, also those Claude Code would allow by
itself) and `can_use_tool` when it wants permission. Both are answered by the driver's gate, each
in a task of its own so that a dialog waiting for the user never holds up the stream. Claude Code
withdraws a question it no longer needs (`control_cancel_request`, after an interrupt): the
question's task is cancelled and its dialog closes by itself.

Esc is Claude Code's `interrupt` (it stops a running Bash and ends the turn); the permission mode
follows shift+tab with `set_permission_mode`. When the process exits, the turn it was in ends with
its last stderr lines and the next turn starts it again with `--resume` of its own session id.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any

from tui_app.agents.claude_code import protocol
from tui_app.agents.claude_code.command import claude_argv
from tui_app.agents.claude_code.stream import StreamTranslator
from tui_app.agents.driver import INTERRUPTED_MESSAGE, ExternalAgent, TurnOutcome
from tui_app.agents.process import AgentProcess, AgentStartError, agent_env
from tui_app.runtime.agent import Unsupported
from tui_app.runtime.commands import CommandFact
from tui_app.runtime.events import AgentCapabilities, AgentConnected, Warning
from tui_app.runtime.executor import TurnControl

INITIALIZE_TIMEOUT_S = 60.0
CONTROL_TIMEOUT_S = 30.0
#: after an interrupt, how long Claude Code may take to end its turn before it is stopped
INTERRUPT_GRACE_S = 15.0
#: how a Claude Code result's subtype ends a Vigil turn
RESULT_REASONS = {"success": "completed", "error_max_turns": "max_turns", "error_during_execution": "error"}


class AgentGone(Exception):
    """Claude Code exited while something waited for it."""


class ClaudeCodeAgent(ExternalAgent):
    name = "claude-code"
    label = "Claude Code"
    #: it runs the hooks of Claude Code's settings files itself; `set_model` is a control request
    capabilities = AgentCapabilities(own_tools=True, own_mcp=True, own_commands=True, shell=True,
                                     runs_claude_hooks=True, set_model=True)

    def __init__(self, *, command: str, model: str = "", resume_id: str | None = None,
                 env: dict[str, str] | None = None, version: str = "", max_turns: int | None = None) -> None:
        super().__init__(model=model)
        self.command = command
        self.max_turns = max_turns
        self.env = env
        self.version = version
        #: Claude Code's own session id: what `--resume` hands back to it
        self.agent_session_id = resume_id
        self.proc: AgentProcess | None = None
        self.translator: StreamTranslator | None = None
        self._ready = False
        self._stopping = False
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        #: Claude Code's request id → the task answering it (cancelled when it withdraws the request)
        self._answering: dict[str, asyncio.Task[Any]] = {}
        self._turn_end: asyncio.Future[dict[str, Any]] | None = None
        self._announced: tuple[str, str, str] | None = None
        self.init_response: dict[str, Any] = {}

    # ---- the process --------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._ready and self.proc is not None and self.proc.alive

    async def connect(self) -> None:
        try:
            await self._launch(self.agent_session_id)
        except AgentStartError as exc:
            if not self.agent_session_id:
                raise
            # its transcript of that session is gone (or was never written: it was killed early);
            # Vigil's log still has all of it, and Claude Code starts a new session of its own
            self.session.emit(Warning(code="agent_resume_failed", message=(
                f"{self.label} could not resume its session {self.agent_session_id} ({exc}); "
                "it starts a new one and does not remember the turns before.")))
            self.agent_session_id = None
            await self._launch(None)

    async def _launch(self, resume: str | None) -> None:
        session = self.session
        assert self.calls is not None
        if self.translator is None:
            self.translator = StreamTranslator(self.calls)
        self._stopping = False
        argv = claude_argv(self.command, mode=protocol.agent_mode(session.policy.mode), model=self.model,
                           resume=resume, max_turns=self.max_turns)
        proc = self.proc = AgentProcess(argv, cwd=session.cwd, env=agent_env(self.env), label=self.label)
        await proc.start()
        self.spawn(self._read(proc))
        try:
            response = await self._request("initialize", timeout=INITIALIZE_TIMEOUT_S)
        except (AgentGone, TimeoutError, RuntimeError) as exc:
            said = proc.exit_message() if not proc.alive else f"{self.label} did not start: {exc}"
            await proc.stop()
            raise AgentStartError(said) from None
        if response.get("hooks_applied") is False:
            # calls it allows by itself would not pass Vigil's policy: no session at all is better
            await proc.stop()
            raise AgentStartError(f"{self.label} did not register Vigil's PreToolUse hook, so Vigil could not "
                                  "check every call; it was stopped")
        self.init_response = response
        self._ready = True
        self.version = str(response.get("claude_code_version") or self.version)
        self.agent_mode = session.policy.mode

    async def disconnect(self) -> None:
        self._stopping = True
        self._ready = False
        if self.proc is not None:
            await self.proc.stop()

    async def _read(self, proc: AgentProcess) -> None:
        while (line := await proc.read()) is not None:
            try:
                self._dispatch(line)
            except Exception as exc:  # one odd line never stops the stream
                self.session.emit(Warning(code="agent_line_unreadable",
                                          message=f"A line from {self.label} could not be read: {exc!r}"))
        await proc.wait()
        if proc is self.proc:
            self._gone(proc)

    def _gone(self, proc: AgentProcess) -> None:
        self._ready = False
        message = proc.exit_message()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(AgentGone(message))
        self._pending.clear()
        for task in self._answering.values():
            task.cancel()
        if self._turn_end is not None and not self._turn_end.done():
            self._turn_end.set_exception(AgentGone(message))
        if not self._stopping:
            self.session.emit(Warning(code="agent_exited", message=message))

    # ---- requests Vigil makes -------------------------------------------------------------------

    async def _request(self, subtype: str, timeout: float = CONTROL_TIMEOUT_S, **fields: Any) -> dict[str, Any]:
        assert self.proc is not None
        request_id = f"vigil_{next(self._ids)}"
        future = self._pending[request_id] = asyncio.get_running_loop().create_future()
        message = (protocol.initialize(request_id) if subtype == "initialize"
                   else protocol.control_request(request_id, subtype, **fields))
        if not await self.proc.send(message):
            self._pending.pop(request_id, None)
            raise AgentGone(self.proc.exit_message())
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(request_id, None)

    async def set_agent_mode(self, mode: str) -> None:
        if not self.connected:
            return  # the next start passes it on the command line
        try:
            await self._request("set_permission_mode", mode=protocol.agent_mode(mode))
        except (AgentGone, TimeoutError, RuntimeError) as exc:
            self.session.emit(Warning(code="agent_mode_failed",
                                      message=f"{self.label} did not switch to {mode}: {exc}"))

    async def set_model(self, model: str | None) -> str:
        """Claude Code's own `set_model` (None: its default); a stopped Claude Code gets it on the
        command line when it starts again."""
        if self.connected:
            try:
                await self._request("set_model", model=model)
            except (AgentGone, TimeoutError, RuntimeError) as exc:
                raise Unsupported(f"{self.label} did not switch models: {exc}") from None
        self.model = model or ""
        return self.model or "its default model"

    def commands(self) -> list[CommandFact]:
        found = self.init_response.get("commands") if isinstance(self.init_response, dict) else None
        return [CommandFact(name=str(c.get("name", "")), description=str(c.get("description", "")),
                            hint=str(c.get("argumentHint", "") or ""), kind="agent")
                for c in found or [] if isinstance(c, dict) and c.get("name")]

    # ---- the turn -----------------------------------------------------------------------------

    async def run_prompt(self, prompt: str, context: list[str], control: TurnControl) -> TurnOutcome:
        assert self.proc is not None and self.translator is not None
        loop = asyncio.get_running_loop()
        end = self._turn_end = loop.create_future()
        self.translator.begin_turn()
        try:
            if not await self.proc.send(protocol.user_message(prompt, context)):
                return TurnOutcome("error", error=self.proc.exit_message())
            line = await self._until_end(end, control)
        except AgentGone as gone:
            return TurnOutcome("interrupted" if control.is_aborted else "error", error=str(gone))
        finally:
            self.translator.end_turn()
            self._turn_end = None
        if line is None:
            return TurnOutcome("interrupted", error=INTERRUPTED_MESSAGE)
        return self._outcome(line, control)

    async def _until_end(self, end: asyncio.Future[dict[str, Any]], control: TurnControl) -> dict[str, Any] | None:
        aborted = asyncio.ensure_future(control.aborted.wait())
        try:
            await asyncio.wait({end, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
        if end.done():
            return end.result()
        assert self.translator is not None
        self.translator.interrupted = True
        with contextlib.suppress(AgentGone, TimeoutError, RuntimeError):
            await self._request("interrupt", timeout=INTERRUPT_GRACE_S)
        try:
            return await asyncio.wait_for(asyncio.shield(end), INTERRUPT_GRACE_S)
        except TimeoutError:  # it does not stop: it is stopped, and the next turn resumes it
            await self.disconnect()
            return None

    def _outcome(self, line: dict[str, Any], control: TurnControl) -> TurnOutcome:
        subtype = str(line.get("subtype") or "")
        reason = RESULT_REASONS.get(subtype, "error")
        if control.is_aborted or (self.translator is not None and self.translator.interrupted):
            reason = "interrupted"
        text = line.get("result") if isinstance(line.get("result"), str) else ""
        error = None
        if reason != "completed" or line.get("is_error"):
            errors = line.get("errors")
            error = "; ".join(map(str, errors)) if isinstance(errors, list) and errors else (
                INTERRUPTED_MESSAGE if reason == "interrupted" else text or subtype or "Claude Code reported an error")
            if reason == "completed":
                reason = "error"
        usage = {k: v for k, v in (line.get("usage") or {}).items() if isinstance(v, int) and not isinstance(v, bool)}
        return TurnOutcome(reason, text=text or (self.translator.last_text if self.translator else ""),
                           error=error, usage=usage)

    # ---- lines Claude Code writes ---------------------------------------------------------------

    def _dispatch(self, line: dict[str, Any]) -> None:
        kind = line.get("type")
        translator = self.translator
        assert translator is not None
        if kind == "stream_event":
            translator.stream_event(line)
        elif kind == "assistant":
            translator.assistant(line)
        elif kind == "user":
            translator.user(line)
        elif kind == "control_request":
            self._answer(line)
        elif kind == "control_response":
            response = line.get("response") or {}
            future = self._pending.get(str(response.get("request_id")))
            if future is not None and not future.done():
                if response.get("subtype") == "error":
                    future.set_exception(RuntimeError(str(response.get("error") or "refused")))
                else:
                    future.set_result(response.get("response") or {})
        elif kind == "control_cancel_request":
            task = self._answering.pop(str(line.get("request_id")), None)
            if task is not None:
                task.cancel()
        elif kind == "system":
            self._system(line)
        elif kind == "result" and self._turn_end is not None and not self._turn_end.done():
            self._turn_end.set_result(line)  # a result outside a turn (after a stop) answers nothing

    def _system(self, line: dict[str, Any]) -> None:
        subtype = line.get("subtype")
        assert self.translator is not None
        if subtype == "init":
            self._connected(line)
        elif subtype == "task_started":
            self.translator.task_started(line)
        elif subtype == "status" and isinstance(line.get("permissionMode"), str):
            mode = line["permissionMode"]
            # Vigil's bypassPermissions runs Claude Code in default: that is no change of mode
            if mode != protocol.agent_mode(self.session.policy.mode):
                self.agent_changed_mode(mode)

    def _connected(self, line: dict[str, Any]) -> None:
        session_id = str(line.get("session_id") or "")
        model = str(line.get("model") or "")
        version = str(line.get("claude_code_version") or self.version)
        self.agent_session_id = session_id or self.agent_session_id
        self.model = model or self.model
        if (session_id, model, version) == self._announced:
            return
        self._announced = (session_id, model, version)
        tools = [t for t in line.get("tools") or () if isinstance(t, str)]
        self.session.emit(AgentConnected(agent=self.name, label=self.label, version=version,
                                         agent_session_id=session_id, model=model, provider=self.provider, tools=tools,
                                         pid=self.proc.pid if self.proc else None, capabilities=self.capabilities))

    # ---- questions Claude Code asks -------------------------------------------------------------

    def _answer(self, line: dict[str, Any]) -> None:
        request_id = str(line.get("request_id") or "")
        request = line.get("request") if isinstance(line.get("request"), dict) else {}
        task = self.spawn(self._respond(request_id, request))
        self._answering[request_id] = task
        task.add_done_callback(lambda _t: self._answering.pop(request_id, None))

    async def _respond(self, request_id: str, request: dict[str, Any]) -> None:
        assert self.proc is not None
        proc = self.proc
        subtype = request.get("subtype")
        try:
            if subtype == "hook_callback":
                answer = await self._hook_callback(request)
            elif subtype == "can_use_tool":
                answer = await self._can_use_tool(request)
            else:
                await proc.send(protocol.error(request_id, f"Vigil does not handle {subtype!r} requests"))
                return
        except asyncio.CancelledError:
            raise  # withdrawn: Claude Code waits for no answer
        except Exception as exc:  # a question Vigil could not judge is refused, never allowed
            await proc.send(protocol.error(request_id, f"Vigil could not decide: {exc}"))
            raise
        await proc.send(protocol.success(request_id, answer))

    def _call_of(self, request: dict[str, Any], name: str, data: Any) -> str:
        """The call a question is about (told as requested if the stream has not shown it yet)."""
        assert self.calls is not None
        call_id = str(request.get("tool_use_id") or "")
        if not call_id:
            call_id = f"call_{next(self._ids)}"
        if self.calls.get(call_id) is None:
            steps = self.translator.open_steps if self.translator is not None else []
            self.calls.request(call_id, name, data, steps[-1] if steps else 0, 0)
        return call_id

    async def _hook_callback(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.gate is not None and self.calls is not None
        data = request.get("input") if isinstance(request.get("input"), dict) else {}
        if request.get("callback_id") != protocol.PRE_TOOL_USE_CALLBACK or data.get("hook_event_name") != "PreToolUse":
            return {}
        name = str(data.get("tool_name") or "")
        tool_input = data.get("tool_input", {})
        call_id = self._call_of({"tool_use_id": data.get("tool_use_id") or request.get("tool_use_id")}, name,
                                tool_input)
        verdict = await self.gate.screen(self.calls.turn_id, call_id, name, tool_input)
        if verdict.behavior == "deny":
            self.calls.denied_by_vigil(call_id, verdict.phase, verdict.code, verdict.reason)
        return protocol.hook_output(verdict)

    async def _can_use_tool(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.gate is not None and self.calls is not None
        name = str(request.get("tool_name") or "")
        data = request.get("input", {})
        call_id = self._call_of(request, name, data)
        reason = str(request.get("decision_reason") or request.get("description") or "")
        if isinstance(request.get("blocked_path"), str):
            reason = f"{request['blocked_path']} is outside its working directories"
        asked = asyncio.get_running_loop().time()
        verdict = await self.gate.ask(self.calls.turn_id, call_id, name, data, reason)
        waited = int((asyncio.get_running_loop().time() - asked) * 1000)
        if verdict.behavior == "allow":
            self.calls.decided_by_vigil(call_id, waited)
            # the answer is on its way and Claude Code runs the call as soon as it reads it
            self.calls.start(call_id, verdict.input)
        else:
            self.calls.denied_by_vigil(call_id, verdict.phase, verdict.code, verdict.reason)
        return protocol.permission_result(verdict)
