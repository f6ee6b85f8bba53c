"""`vigil acp`: Vigil's runtime and built-in agent as an ACP agent on stdio (the official Python SDK,
`agent-client-protocol`), for editors and other ACP clients (Zed, Toad, agent-shell, CodeCompanion …).

* `session/new`, `session/load` (the conversation is replayed as updates, nothing is run again):
  a Vigil session in the client's cwd, with Vigil's settings, rules, hooks and tools, plus the MCP
  servers the client names.
* `session/prompt`: one turn; text and thoughts stream as chunks, each tool call as a `tool_call`
  and its updates (edits carry `diff` content computed by Vigil); the response comes after the
  last update, with the stop reason.
* A call that needs asking becomes `session/request_permission` (allow once / always allow /
  reject). The client is one more answer to the ApprovalBroker: PermissionRequest hooks race it,
  the first answer wins, and the answer is bound to the hash of the input that was shown.
* `session/cancel` interrupts the turn: running calls are cancelled, the rest never start, and the
  prompt ends with `cancelled`.
* `session/set_mode`: Vigil's permission modes.
* The client's `fs/*` and `terminal/*` are used when it offers them (see acp_client_io).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, run_agent
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AuthenticateResponse,
    ClientCapabilities,
    Implementation,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    ToolCallUpdate,
)

from tui_app.headless.acp_client_io import ClientFiles, terminal_bash
from tui_app.headless.acp_updates import AcpUpdates, diff_content, history_updates, locations_of, tool_kind, tool_title
from tui_app.headless.request_forwarder import RequestForwarder
from tui_app.headless.stream_json import vigil_version
from tui_app.runtime.agent import TurnResult
from tui_app.runtime.commands import AnswerApproval, Interrupt, Refused, SetPermissionMode, SubmitPrompt
from tui_app.runtime.events import PermissionRequested
from tui_app.runtime.permissions.decision import PERMISSION_MODES

MODES = {
    "default": ("Default", "Reads run; edits and commands ask first"),
    "acceptEdits": ("Accept edits", "Edits inside the working directories run without asking"),
    "plan": ("Plan", "Read-only exploration: nothing is changed"),
    "dontAsk": ("Don't ask", "Anything that would ask is denied"),
    "bypassPermissions": ("Bypass permissions", "Everything runs (deny and ask rules still apply)"),
}
STOP_REASONS = {"completed": "end_turn", "stopped": "end_turn", "rejected": "refusal", "max_turns": "max_turn_requests",
                "interrupted": "cancelled"}
ALLOW_ONCE, ALLOW_ALWAYS, REJECT = "allow-once", "allow-always", "reject"


def mode_state(current: str) -> SessionModeState:
    return SessionModeState(current_mode_id=current, available_modes=[
        SessionMode(id=mode, name=MODES[mode][0], description=MODES[mode][1]) for mode in PERMISSION_MODES])


def mcp_json(servers: list[Any] | None) -> str | None:
    """The client's MCP servers as a `--mcp-config` document."""
    entries: dict[str, Any] = {}
    for server in servers or []:
        kind = getattr(server, "type", None)
        if kind in ("http", "sse"):
            entries[server.name] = {"type": kind, "url": server.url,
                                    "headers": {h.name: h.value for h in getattr(server, "headers", []) or []}}
        elif getattr(server, "command", None):
            entries[server.name] = {"command": server.command, "args": list(server.args or []),
                                    "env": {e.name: e.value for e in server.env or []}}
    return json.dumps({"mcpServers": entries}) if entries else None


def prompt_text(blocks: list[Any]) -> str:
    """The prompt's text; linked and embedded resources are named and quoted for the model."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"[attached: {block.uri}]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(f'<context uri="{resource.uri}">\n{text}\n</context>' if isinstance(text, str)
                         else f"[attached: {resource.uri}]")
        else:
            parts.append(f"[a {kind} block was attached; Vigil sends the model text only]")
    return "\n\n".join(p for p in parts if p)


class AcpSession:
    def __init__(self, session: Any, updates: AcpUpdates) -> None:
        self.session = session
        self.updates = updates
        self.forwarder: RequestForwarder | None = None
        self.prompt_lock = asyncio.Lock()


class VigilAcpAgent:
    """The ACP `Agent` (its methods are called by the SDK's router with the request's fields)."""

    def __init__(self, make_options: Callable[[str], Any]) -> None:
        #: options for a session in a directory (flags of `vigil acp`, the cwd the client names)
        self.make_options = make_options
        self.client: Any = None
        self.capabilities = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    # ---- lifecycle ----------------------------------------------------------------------------

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> Any:
        from acp.schema import InitializeResponse

        self.capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(load_session=True,
                                                 prompt_capabilities=PromptCapabilities(embedded_context=True)),
            agent_info=Implementation(name="vigil", title="Vigil", version=vigil_version()), auth_methods=[])

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        return AuthenticateResponse()

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None,
                          additional_directories: list[str] | None = None, **kwargs: Any) -> NewSessionResponse:
        state = await self._open(cwd, mcp_servers, additional_directories)
        return NewSessionResponse(session_id=state.session.id, modes=mode_state(state.session.permission_mode))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None, **kwargs: Any) -> LoadSessionResponse:
        from tui_app.runtime.log.eventlog import read_events

        state = await self._open(cwd, mcp_servers, additional_directories, resume=session_id)
        log = state.session.log_path
        for update in history_updates(read_events(log).events if log else [], state.session.cwd):
            state.updates.put(update)
        await state.updates.drain()
        return LoadSessionResponse(modes=mode_state(state.session.permission_mode))

    async def _open(self, cwd: str, mcp_servers: list[Any] | None, directories: list[str] | None,
                    resume: str | None = None) -> AcpSession:
        from tui_app.assemble import SetupError, build_session

        options = self.make_options(cwd)
        mcp = mcp_json(mcp_servers)
        options = replace(options, interactive=True, resume=resume or options.resume,
                          add_dirs=[*options.add_dirs, *(directories or [])],
                          mcp_config=[*options.mcp_config, *([mcp] if mcp else [])])
        try:
            session = build_session(options)
        except SetupError as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from None
        if session.id in self.sessions:
            raise RequestError.invalid_params({"details": f"session {session.id} is already open"})
        updates = AcpUpdates(session.id, session.cwd, lambda u: self.client.session_update(session.id, u))
        state = AcpSession(session, updates)
        self._lend_client_io(state)
        session.subscribe(updates.on_event)
        state.forwarder = RequestForwarder(session.controller, lambda event: self._ask(state, event), client="acp")
        session.subscribe(state.forwarder.on_event)
        updates.start()
        await session.start()
        self.sessions[session.id] = state
        return state

    def _lend_client_io(self, state: AcpSession) -> None:
        session, fs = state.session, self.capabilities.fs
        if fs is not None and (fs.read_text_file or fs.write_text_file):
            session.lend_file_access(ClientFiles(
                self.client, session.id, asyncio.get_running_loop(),
                can_read=bool(fs.read_text_file), can_write=bool(fs.write_text_file)))
        bash = session.registry.resolve("Bash")
        if self.capabilities.terminal and bash is not None:
            def on_terminal(call_id: str, terminal_id: str) -> None:
                from acp import tool_terminal_ref, update_tool_call

                state.updates.in_terminal.add(call_id)
                state.updates.put(update_tool_call(call_id, content=[tool_terminal_ref(terminal_id)]))

            session.registry.register(terminal_bash(bash, self.client, session.id, on_terminal))

    def _state(self, session_id: str) -> AcpSession:
        state = self.sessions.get(session_id)
        if state is None:
            raise RequestError.invalid_params({"details": f"no open session {session_id!r}"})
        return state

    # ---- turns --------------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        state = self._state(session_id)
        if state.prompt_lock.locked():
            raise RequestError.invalid_request({"details": "a prompt is already running in this session"})
        async with state.prompt_lock:
            turn = await self._turn(state, prompt_text(prompt))
            await state.updates.drain()
        if turn.reason == "error":
            raise RequestError.internal_error({"details": turn.error or "the turn failed"})
        stop = STOP_REASONS.get(turn.reason, "end_turn")
        if stop == "end_turn" and state.updates.last_stop_reason in ("max_tokens", "refusal"):
            stop = state.updates.last_stop_reason
        return PromptResponse(stop_reason=stop)

    async def _turn(self, state: AcpSession, text: str) -> TurnResult:
        """A prompt through the session's port: a turn, or a command Vigil runs itself (its output
        goes to the client as the agent's message)."""
        from acp import text_block, update_agent_message

        controller = state.session.controller
        reply = await controller.handle(SubmitPrompt(text=text, client="acp"))
        if isinstance(reply, Refused):
            return TurnResult(turn_id="", reason="error", error=reply.message)
        if reply.command is not None:
            if reply.output:
                state.updates.put(update_agent_message(text_block(reply.output)))
            return TurnResult(turn_id="", reason="completed", text=reply.output or "")
        work = await controller.wait_idle()
        return work if isinstance(work, TurnResult) else TurnResult(turn_id="", reason="completed")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        state = self.sessions.get(session_id)
        if state is not None:
            await state.session.controller.handle(Interrupt(reason="cancelled by the client", client="acp"))

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        state = self._state(session_id)
        if mode_id not in PERMISSION_MODES:
            raise RequestError.invalid_params({"details": f"unknown mode {mode_id!r}"})
        await state.session.controller.handle(SetPermissionMode(mode=mode_id, client="acp"))
        return SetSessionModeResponse()

    # ---- permissions --------------------------------------------------------------------------

    async def _ask(self, state: AcpSession, event: PermissionRequested) -> AnswerApproval:
        session = state.session
        await state.updates.drain()  # the client knows the call (and its diff) before it is asked
        options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow", kind="allow_once")]
        if event.suggested_rules:
            rules = ", ".join(event.suggested_rules)
            options.append(PermissionOption(option_id=ALLOW_ALWAYS, name=f"Always allow ({rules})",
                                            kind="allow_always"))
        options.append(PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"))
        call = ToolCallUpdate(tool_call_id=event.call_id or "", title=tool_title(event.tool, event.input, session.cwd),
                              kind=tool_kind(event.tool), status="pending", raw_input=event.input,
                              content=diff_content(event.preview_display),
                              locations=locations_of(event.input, session.cwd))
        try:
            response = await self.client.request_permission(session_id=session.id, tool_call=call, options=options)
            outcome = response.outcome
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            outcome = None
            reason = f"The client's permission request failed: {exc}"
        else:
            reason = ""
        base = {"request_id": event.request_id, "input_sha256": event.input_sha256}
        if isinstance(outcome, AllowedOutcome) and outcome.option_id in (ALLOW_ONCE, ALLOW_ALWAYS):
            return AnswerApproval(decision="allow", always=outcome.option_id == ALLOW_ALWAYS, **base)
        # rejected, or the prompt was cancelled: ACP carries no message for the model
        return AnswerApproval(decision="deny", reason=reason, **base)

    async def close(self) -> None:
        for state in self.sessions.values():
            if state.forwarder is not None:
                await state.forwarder.close()
            state.session.interrupt("the client went away")
            await state.updates.close()
            await state.session.close()
        self.sessions.clear()


async def serve(make_options: Callable[[str], Any]) -> int:
    agent = VigilAcpAgent(make_options)
    try:
        await run_agent(agent)
    finally:
        await agent.close()
    return 0
