"""The ACP driver: one agent process for the whole session, one ACP session in it, one
`session/prompt` per turn (docs/architecture.md §11).

The process is Vigil's AgentProcess (its own process group in the session's cwd, stderr kept for
the error line, no line-length limit that matters); the protocol is the official SDK's
ClientSideConnection over its pipes. Vigil offers the client capabilities it serves itself:
`fs/read_text_file`, `fs/write_text_file` and `terminal/*`.

At the start the agent is put in a mode that asks (`session/set_mode`): the configured one, the
one named like Vigil's permission mode, or the first of setup.ASKING_MODES it offers. Esc sends
`session/cancel`: questions still open are answered `cancelled`, Vigil's terminals of the turn are
stopped, and an agent that does not end the turn within a grace period is stopped (the next turn
starts it again). shift+tab walks the agent's own modes; a mode named like one of Vigil's moves
Vigil's permission mode along.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

from tui_app.agents.acp.approvals import Approvals
from tui_app.agents.acp.client import VigilClient
from tui_app.agents.acp.client_calls import ClientCalls
from tui_app.agents.acp.files import AGENT_READ, AGENT_WRITE, AgentFiles
from tui_app.agents.acp.permission import PermissionAsker
from tui_app.agents.acp.sdk_logs import SdkLogRoute, route_sdk_logs, stop_routing
from tui_app.agents.acp.setup import ASKING_MODES, PRESETS, AcpAgentConfig
from tui_app.agents.acp.terminals import AgentTerminals
from tui_app.agents.acp.updates import UpdateTranslator
from tui_app.agents.driver import INTERRUPTED_MESSAGE, ExternalAgent, TurnOutcome
from tui_app.agents.process import AgentProcess, AgentStartError, agent_env
from tui_app.runtime.events import (
    AgentCapabilities,
    AgentCommand,
    AgentCommandsChanged,
    AgentConnected,
    AgentMode,
    AgentModeChanged,
    UserMessage,
    Warning,
)
from tui_app.runtime.executor import TurnControl
from tui_app.runtime.results.sanitize import neutralize

START_TIMEOUT_S = 60.0
REQUEST_TIMEOUT_S = 30.0
#: after session/cancel, how long the agent may take to end its turn before it is stopped
CANCEL_GRACE_S = 15.0
#: after its connection closed, how long the agent's process may take to be seen exiting
EXIT_WAIT_S = 5.0
#: ACP stop reasons in Vigil's words (TurnEnded.reason)
#: the Claude ACP adapter's preset: its session options go to that adapter under any name
CLAUDE_ADAPTER = PRESETS["claude"]
STOP_REASONS = {"end_turn": "completed", "cancelled": "interrupted", "max_turn_requests": "max_turns",
                "max_tokens": "error", "refusal": "error"}
#: agents' mode ids that mean one of Vigil's permission modes (Vigil's policy follows them)
VIGIL_MODE_OF = {"default": "default", "acceptEdits": "acceptEdits", "plan": "plan", "dontAsk": "dontAsk",
                 "bypassPermissions": "bypassPermissions", "autoEdit": "acceptEdits", "auto_edit": "acceptEdits"}
#: the agent's modes that keep Vigil's permission mode true, best first (else the first that asks):
#: plan is the agent's plan mode or a read-only one; the agent never starts where it asks nothing
AGENT_MODES_FOR = {"plan": ("plan", "read-only"), "acceptEdits": ("acceptEdits", "autoEdit", "auto_edit")}


class AcpAgent(ExternalAgent):
    def __init__(self, config: AcpAgentConfig, *, model: str = "", resume_id: str | None = None,
                 problems: list[str] | None = None) -> None:
        super().__init__(model=model)
        self.config = config
        #: settings of `agents` that could not be used (said when the session starts)
        self.problems = list(problems or ())
        #: its own modes; Claude Code inside runs the .claude settings' hooks itself (Vigil then runs
        #: only its own)
        self.capabilities = AgentCapabilities(own_tools=True, own_mcp=True, own_commands=True, shell=True,
                                              agent_modes=True, runs_claude_hooks=config.runs_claude_hooks)
        self.name = config.name
        self.label = config.label or config.name
        self.proc: AgentProcess | None = None
        self.conn: ClientSideConnection | None = None
        #: the agent's own session id (what a resumed Vigil session loads again)
        self.agent_session_id = resume_id
        self.acp_session_id: str | None = None
        self.init: Any = None
        self.modes: list[AgentMode] = []
        self.mode_id: str | None = None
        #: the session config option the agent's modes are values of (None: ACP modes)
        self.mode_option: str | None = None
        self.control: TurnControl | None = None
        self.aborting = False
        #: the user's words on calls they denied (ACP's answer has no room for them): sent with the next prompt
        self.feedback: list[str] = []
        #: this turn, Vigil said no with the agent's abort (Codex): the turn ending `cancelled` is that no
        self.ended_by_denial = False
        self._stopping = False
        self.translator = UpdateTranslator(self)
        self.permissions = PermissionAsker(self)
        self.approvals = Approvals()
        self.files = AgentFiles(self)
        self.terminals = AgentTerminals(self)
        self.client_calls = ClientCalls(self, [AGENT_WRITE, AGENT_READ, self.terminals.spec])
        self.client = VigilClient(self)
        self._sdk_logs: SdkLogRoute | None = None

    # ---- the process and the ACP session ---------------------------------------------------

    async def astart(self, session: Any) -> None:
        from tui_app.runtime.log.paths import session_dir

        self._sdk_logs = route_sdk_logs(session_dir(session.id) / "acp-sdk.log")
        for problem in self.problems:
            session.emit(Warning(code="settings_agents", message=problem))
        await super().astart(session)

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            stop_routing(self._sdk_logs)
            self._sdk_logs = None

    @property
    def connected(self) -> bool:
        return self.conn is not None and self.acp_session_id is not None and self.proc is not None and self.proc.alive

    async def connect(self) -> None:
        session = self.session
        self._stopping = False
        proc = self.proc = AgentProcess(self.config.argv, cwd=session.cwd, env=agent_env(self.config.env),
                                        label=self.label)
        await proc.start()
        assert proc.proc is not None and proc.proc.stdin is not None and proc.proc.stdout is not None
        # the translator sees every message in the order it came, before it is handled (updates.observe)
        conn = self.conn = ClientSideConnection(self.client, proc.proc.stdin, proc.proc.stdout,
                                                observers=[self.translator.observe])
        self.spawn(self._watch_exit(proc, conn))
        try:
            await asyncio.wait_for(self._open_session(conn), START_TIMEOUT_S)
        except Exception as exc:
            said = proc.exit_message() if not proc.alive else f"{self.label} did not start: {_said(exc)}"
            await self._shut(proc, conn)
            raise AgentStartError(said) from None

    async def _open_session(self, conn: ClientSideConnection) -> None:
        session = self.session
        self.init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True),
            client_info=Implementation(name="vigil", title="Vigil", version=_vigil_version()))
        capabilities = getattr(self.init, "agent_capabilities", None)
        meta = dict(self.config.session_meta)
        if _is_claude_adapter(getattr(self.init, "agent_info", None)):
            # whatever the user named it (and however it is started): a supervised session never offers bypass
            meta = {**CLAUDE_ADAPTER.session_meta, **meta}
        response = None
        if self.agent_session_id and getattr(capabilities, "load_session", False):
            self.translator.loading = True  # the agent replays the conversation: Vigil's log has it already
            try:
                response = await conn.load_session(cwd=session.cwd, session_id=self.agent_session_id,
                                                   mcp_servers=[], **meta)
                self.acp_session_id = self.agent_session_id
            except RequestError as exc:
                session.emit(Warning(code="agent_resume_failed", message=(
                    f"{self.label} could not load its session {self.agent_session_id} ({_said(exc)}); it starts a "
                    "new one and does not remember the turns before.")))
            finally:
                self.translator.loading = False
        elif self.agent_session_id:
            session.emit(Warning(code="agent_resume_failed", message=(
                f"{self.label} cannot load a session, so it starts a new one and does not remember the turns "
                "before.")))
        if self.acp_session_id is None:
            response = await conn.new_session(cwd=session.cwd, mcp_servers=[], **meta)
            self.acp_session_id = response.session_id
        self.agent_session_id = self.acp_session_id
        options = getattr(response, "config_options", None) or []
        self._modes_offered(getattr(response, "modes", None), options)
        await self._choose_model(conn, options)
        info = getattr(self.init, "agent_info", None)
        session.emit(AgentConnected(agent=self.name, label=self.label, version=str(getattr(info, "version", "") or ""),
                                    agent_session_id=self.acp_session_id or "", model=self.model,
                                    provider=self.provider, capabilities=self.capabilities,
                                    pid=self.proc.pid if self.proc else None))
        await self._ask_first()
        if self.config.acts_unasked:
            session.emit(Warning(code="agent_acts_unasked", message=self.config.acts_unasked))

    async def _choose_model(self, conn: ClientSideConnection, options: list[Any]) -> None:
        """`--model`: the agent's model option (ACP session config), when it has one; the header
        shows the model it runs."""
        found = next((o for o in options if getattr(o, "type", "") == "select"
                      and (getattr(o, "category", None) == "model" or o.id == "model")), None)
        if found is None:
            if self.model:
                self.session.emit(Warning(code="agent_model_unknown", message=(
                    f"{self.label} has no model option; --model {self.model} is not passed on")))
            return
        choices = [c for item in found.options for c in (getattr(item, "options", None) or [item])]
        current = found.current_value
        wanted = self.model
        if wanted and wanted != current:
            if wanted in {c.value for c in choices}:
                try:
                    await conn.set_config_option(config_id=found.id, session_id=self.acp_session_id, value=wanted)
                    current = wanted
                except Exception as exc:
                    self.session.emit(Warning(code="agent_model_failed", message=(
                        f"{self.label} did not switch to model {wanted}: {_said(exc)}")))
            else:
                offered = ", ".join(c.value for c in choices)
                self.session.emit(Warning(code="agent_model_unknown", message=(
                    f"{self.label} offers no model {wanted!r} (it offers {offered}); it runs {current}")))
        self.model = next((c.name for c in choices if c.value == current), current)

    async def _watch_exit(self, proc: AgentProcess, conn: ClientSideConnection) -> None:
        await proc.wait()
        if proc is not self.proc:
            return
        self.acp_session_id = None
        self.permissions.withdraw_all()
        with contextlib.suppress(Exception):
            await conn.close()  # requests still waiting for the agent fail now
        if not self._stopping:
            self.session.emit(Warning(code="agent_exited", message=proc.exit_message()))

    async def _shut(self, proc: AgentProcess, conn: ClientSideConnection | None) -> None:
        self._stopping = True
        self.permissions.withdraw_all()
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        await proc.stop()

    async def disconnect(self) -> None:
        await self.terminals.close()
        if self.proc is not None:
            await self._shut(self.proc, self.conn)
        self.acp_session_id = None

    # ---- modes and commands -----------------------------------------------------------------

    def _modes_offered(self, state: Any, options: list[Any]) -> None:
        """The agent's modes: its ACP modes, else a session config option of category `mode`
        (OpenCode's build / plan). Its starting mode is shown but does not move Vigil's: Vigil's
        permission mode decides which of the agent's modes it starts in (_ask_first)."""
        if state is not None:
            self.modes = [AgentMode(id=m.id, name=m.name or m.id, description=m.description or "")
                          for m in state.available_modes]
            current = state.current_mode_id
        else:
            found = next((o for o in options if getattr(o, "type", "") == "select"
                          and getattr(o, "category", None) == "mode"), None)
            if found is None:
                return
            self.mode_option = found.id
            choices = [c for item in found.options for c in (getattr(item, "options", None) or [item])]
            self.modes = [AgentMode(id=c.value, name=c.name or c.value, description=getattr(c, "description", "") or "")
                          for c in choices]
            current = found.current_value
        self.mode_id = current
        self.session.emit(AgentModeChanged(agent=self.name, mode=current, modes=list(self.modes)))

    def start_mode(self) -> str | None:
        """The mode to put the agent in: the configured one; the one that means Vigil's permission
        mode (plan stays plan: the agent's plan or read-only mode); else the first that asks."""
        offered = [m.id for m in self.modes]
        if self.config.mode in offered:
            return self.config.mode
        for wanted in AGENT_MODES_FOR.get(self.session.policy.mode, ()):
            if wanted in offered:
                return wanted
        return next((m for m in ASKING_MODES if m in offered), None)

    async def _ask_first(self) -> None:
        wanted = self.start_mode()
        if wanted is None:
            if self.modes:
                self.session.emit(Warning(code="agent_mode_unknown", message=(
                    f"{self.label} offers no mode Vigil knows to ask first ({', '.join(m.id for m in self.modes)}); "
                    f"it stays in {self.mode_id}. Name one with \"mode\" in its agents entry.")))
            return
        if wanted != self.mode_id:
            await self.select_mode(wanted)

    async def select_mode(self, mode_id: str) -> bool:
        """shift+tab, the palette, or the start: switch the agent's mode (the session follows)."""
        if self.conn is None or self.acp_session_id is None:
            return False
        try:
            if self.mode_option is not None:
                request = self.conn.set_config_option(config_id=self.mode_option, session_id=self.acp_session_id,
                                                      value=mode_id)
            else:
                request = self.conn.set_session_mode(session_id=self.acp_session_id, mode_id=mode_id)
            await asyncio.wait_for(request, REQUEST_TIMEOUT_S)
        except Exception as exc:
            self.session.emit(Warning(code="agent_mode_failed",
                                      message=f"{self.label} did not switch to mode {mode_id}: {_said(exc)}"))
            return False
        self.mode_reported(mode_id)
        return True

    def mode_reported(self, mode_id: str) -> None:
        if mode_id == self.mode_id:
            return
        self.mode_id = mode_id
        if self.modes and mode_id not in {m.id for m in self.modes}:
            self.modes.append(AgentMode(id=mode_id, name=mode_id))
        self.session.emit(AgentModeChanged(agent=self.name, mode=mode_id, modes=list(self.modes)))
        vigil = VIGIL_MODE_OF.get(mode_id)
        if vigil is not None:
            self.agent_changed_mode(vigil)

    async def set_agent_mode(self, mode: str) -> None:
        """Vigil's permission mode changed (the palette, /permissions): the agent follows when it
        has a mode of that meaning."""
        offered = {m.id for m in self.modes}
        wanted = [agent_mode for agent_mode, vigil in VIGIL_MODE_OF.items() if vigil == mode]
        for agent_mode in [*wanted, *AGENT_MODES_FOR.get(mode, ())]:
            if agent_mode in offered:
                if agent_mode != self.mode_id:
                    await self.select_mode(agent_mode)
                return

    def commands_reported(self, commands: list[Any]) -> None:
        found = []
        for command in commands:
            hint = ""
            given = getattr(command, "input", None)
            root = getattr(given, "root", given)
            if root is not None and isinstance(getattr(root, "hint", None), str):
                hint = root.hint
            found.append(AgentCommand(name=command.name, description=command.description or "", hint=hint))
        if found != self.agent_commands:
            self.agent_commands = found
            self.session.emit(AgentCommandsChanged(agent=self.name, commands=found))

    # ---- the turn -----------------------------------------------------------------------------

    def interrupt_turn(self) -> None:
        """Esc in a dialog: the whole turn is cancelled."""
        if self.control is not None:
            self.control.abort("interrupted")

    async def run_prompt(self, prompt: str, context: list[str], control: TurnControl) -> TurnOutcome:
        assert self.conn is not None and self.acp_session_id is not None and self.calls is not None
        self.control = control
        self.aborting = False
        self.ended_by_denial = False
        self.approvals.clear()
        self.translator.begin_turn()
        carried, self.feedback = self.feedback, []
        for note in carried:
            self.session.emit(UserMessage(turn_id=self.calls.turn_id, text=note, source="hook"))
        blocks = [text_block(prompt), *[text_block(text) for text in [*context, *carried]]]
        task = asyncio.ensure_future(self.conn.prompt(session_id=self.acp_session_id, prompt=blocks))
        aborted = asyncio.ensure_future(control.aborted.wait())
        try:
            await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():
                return await self._cancel(task)
            await self._settle_exit(task)
            return self._outcome(task)
        finally:
            aborted.cancel()
            await self.terminals.stop_turn(self.calls.turn_id)
            await self.client_calls.end_turn()
            self.approvals.clear()
            self.control = None
            self.aborting = False

    async def _cancel(self, task: asyncio.Task[Any]) -> TurnOutcome:
        self.aborting = True
        self.translator.interrupted = True
        self.permissions.withdraw_all()
        if self.conn is not None and self.acp_session_id is not None:
            with contextlib.suppress(Exception):
                await self.conn.cancel(session_id=self.acp_session_id)
        await self.terminals.stop_turn(self.calls.turn_id if self.calls else None)
        await self.client_calls.end_turn()
        try:
            await asyncio.wait_for(asyncio.shield(task), CANCEL_GRACE_S)
        except Exception:
            if not task.done():  # it does not stop: it is stopped, and the next turn starts it again
                task.cancel()
                await self.disconnect()
            self.translator.end_turn()
            return TurnOutcome("interrupted", error=INTERRUPTED_MESSAGE)
        outcome = self._outcome(task)
        outcome.reason = "interrupted"
        outcome.error = INTERRUPTED_MESSAGE
        return outcome

    async def _settle_exit(self, task: asyncio.Task[Any]) -> None:
        """The connection closed under the prompt: wait for the process to exit (briefly), so the
        turn ends with its exit code and last stderr lines rather than "connection closed"."""
        if task.cancelled() or not isinstance(task.exception(), ConnectionError) or self.proc is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.proc.wait()), EXIT_WAIT_S)

    def _outcome(self, task: asyncio.Task[Any]) -> TurnOutcome:
        try:
            response = task.result()
        except (ConnectionError, asyncio.CancelledError):
            self.translator.end_turn()
            message = self.proc.exit_message() if self.proc is not None and not self.proc.alive else (
                f"{self.label} closed the connection")
            return TurnOutcome("error", error=message)
        except RequestError as exc:
            self.translator.end_turn()
            return TurnOutcome("error", error=f"{self.label} refused the prompt: {_said(exc)}")
        except Exception as exc:
            self.translator.end_turn()
            return TurnOutcome("error", error=f"{self.label}: {_said(exc)}")
        usage = _usage(getattr(response, "usage", None))
        reason = STOP_REASONS.get(response.stop_reason, "completed")
        if response.stop_reason == "cancelled" and self.ended_by_denial and not self.aborting:
            reason = "completed"  # the turn ended on the user's (or the policy's) no, as a denial ends one
        self.translator.end_turn(usage, "end_turn" if reason == "completed" else response.stop_reason)
        error = None
        if response.stop_reason in ("max_tokens", "refusal"):
            error = {"max_tokens": f"{self.label} stopped: the model reached its output limit",
                     "refusal": f"{self.label} stopped: the model refused"}[response.stop_reason]
        return TurnOutcome(reason, text=self.translator.last_text, error=error, usage=usage)

    # ---- what the updates and the client calls need -------------------------------------------

    def on_update(self, session_id: str, update: Any) -> None:
        if session_id != self.acp_session_id and self.acp_session_id is not None:
            return
        if self.translator.loading:
            return
        try:
            self.translator.update(update)
        except Exception as exc:  # one odd update never stops the session
            self.session.emit(Warning(code="agent_update_unreadable",
                                      message=f"An update from {self.label} could not be shown: {exc!r}"))

    def agent_facts(self) -> dict[str, Any]:
        """The agent's own modes, for every client (facts(): the settings screen, the host's clients)."""
        return {"agent_mode": self.mode_id, "agent_modes": list(self.modes)}

    def terminal_display(self, terminal_id: str) -> Any:
        return self.terminals.display(terminal_id)


def _is_claude_adapter(info: Any) -> bool:
    return str(getattr(info, "name", "") or "").endswith("claude-agent-acp")


def _usage(usage: Any) -> dict[str, int]:
    if usage is None:
        return {}
    found = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    if usage.cached_read_tokens:
        found["cache_read_input_tokens"] = usage.cached_read_tokens
    if usage.cached_write_tokens:
        found["cache_creation_input_tokens"] = usage.cached_write_tokens
    return {k: int(v) for k, v in found.items() if isinstance(v, int)}


def _said(exc: BaseException) -> str:
    if isinstance(exc, RequestError):
        data = getattr(exc, "data", None)
        detail = data.get("details") if isinstance(data, dict) else None
        text = f"{exc}" + (f" ({detail})" if detail and str(detail) not in str(exc) else "")
    elif isinstance(exc, TimeoutError):
        text = "it did not answer in time"
    else:
        text = str(exc) or type(exc).__name__
    return neutralize(" ".join(text.split()))[:500]


def _vigil_version() -> str:
    try:
        from importlib.metadata import version

        return version("vigil")
    except Exception:  # running from a source tree that was never installed
        return "0.1.0"
