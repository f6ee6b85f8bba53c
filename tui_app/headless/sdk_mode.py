"""Vigil as the `claude` an Agent SDK runs (`--input-format stream-json`): prompts and control
requests arrive on stdin, stream-json goes out on stdout, and the session is Vigil's own — its
rules, hooks, tools and model (a local one included).

    SDK → Vigil   control_request: initialize (hooks to call back), interrupt, set_permission_mode,
                  set_model, mcp_status; user turns; control_responses to Vigil's requests
    Vigil → SDK   control_responses; system/init, assistant, user, result lines per turn;
                  control_request can_use_tool (asks) and hook_callback (the SDK's hooks);
                  system session_state_changed when the SDK asks for it

Turns run one at a time in arrival order; control requests are answered at once, also during a
turn. When stdin ends, queued turns still run; then the session closes and Vigil exits (1 if the
last turn ended in an error result, as Claude Code does).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import IO, Any

from tui_app.headless.control_protocol import ControlChannel, line_writer, parse_line, read_lines
from tui_app.headless.sdk_hooks import install_sdk_hooks
from tui_app.headless.sdk_permissions import sdk_permissions
from tui_app.headless.stream_json import CLAUDE_CODE_COMPAT_VERSION, Transcript, vigil_version
from tui_app.runtime.agent import TurnResult
from tui_app.runtime.commands import Interrupt, Refused, SetModel, SetPermissionMode, SetSystemPrompt, SubmitPrompt

#: the Agent SDKs ask for session_state_changed frames with one of these variables
STATE_ENV = ("CLAUDE_CODE_SDK_READS_SESSION_STATE", "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS")


class SessionState:
    """`system` `session_state_changed` frames: running during a turn, requires_action while the
    SDK is asked something, idle after a result. The Python SDK closes stdin on `idle`."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.enabled = any(os.environ.get(name) for name in STATE_ENV)
        self.host_only = not os.environ.get(STATE_ENV[1])
        self.state = "idle"
        self.turn_running = False

    def set(self, state: str) -> None:
        if state == self.state or not self.enabled:
            self.state = state
            return
        self.state = state
        line: dict[str, Any] = {"type": "system", "subtype": "session_state_changed", "state": state}
        if self.host_only:
            line["sdk_host_only"] = True
        self.transcript.line(line)

    def waiting(self, requests: int) -> None:
        if self.turn_running:
            self.set("requires_action" if requests else "running")


def prompt_text(message: dict[str, Any]) -> tuple[str, int]:
    """The text of a user message (a string, or text blocks); how many other blocks were dropped."""
    content = (message.get("message") or {}).get("content")
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        return "", 0
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    dropped = sum(1 for b in content if not (isinstance(b, dict) and b.get("type") == "text"))
    return "\n\n".join(t for t in texts if isinstance(t, str)), dropped


class GuardedOutput:
    """stdout of a driver that may go away: once a write fails, nothing more is written and the
    running turn is interrupted (nobody is left to read its results)."""

    def __init__(self, inner: IO[str], on_broken: Any) -> None:
        self.inner = inner
        self.on_broken = on_broken
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                self.inner.write(text)
            except (OSError, ValueError):
                self._break()
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self.inner.flush()
            except (OSError, ValueError):
                self._break()

    def _break(self) -> None:
        self.broken = True
        self.on_broken()


class SdkServer:
    def __init__(self, session: Any, *, out: IO[str], err: IO[str], prompt_tool: str | None = None,
                 partial: bool = False, hook_events: bool = False) -> None:
        self.session = session
        out = GuardedOutput(out, lambda: session.interrupt("the driver stopped reading"))  # type: ignore[assignment]
        self.out, self.err = out, err
        self.write = line_writer(out)
        self.channel = ControlChannel(self.write)
        self.transcript = Transcript(session, "stream-json", out, partial=partial, hook_events=hook_events)
        self.state = SessionState(self.transcript)
        self.channel.on_waiting = self.state.waiting
        self.permissions = sdk_permissions(session, self.channel) if prompt_tool == "stdio" else None
        self.turns: asyncio.Queue[str | None] = asyncio.Queue()
        self.controller = session.controller
        self.last_error = False

    def warn(self, message: str) -> None:
        self.err.write(f"vigil: {message}\n")
        self.err.flush()

    async def serve(self, stream: IO[bytes] | None = None) -> int:
        self.session.subscribe(self.transcript.on_event)
        if self.permissions is not None:
            self.session.subscribe(self.permissions.on_event)
        await self.session.start()
        worker = asyncio.ensure_future(self._run_turns())
        try:
            lines = read_lines(stream)
            while (raw := await lines.get()) is not None:
                message, problem = parse_line(raw)
                if problem:
                    self.warn(problem)
                elif message is not None:
                    await self._take(message)  # in arrival order: initialize before the first turn
            self.channel.close()
            self.turns.put_nowait(None)
            await worker
        finally:
            if not worker.done():
                worker.cancel()
                await asyncio.gather(worker, return_exceptions=True)
            if self.permissions is not None:
                await self.permissions.close()
            await self.session.close()
        return 1 if self.last_error else 0

    # ---- input --------------------------------------------------------------------------------

    async def _take(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "control_response":
            self.channel.take_response(message)
        elif kind == "control_request":
            await self._control(message)
        elif kind == "user":
            text, dropped = prompt_text(message)
            if dropped:
                self.warn(f"{dropped} non-text block(s) of a user message were left out (Vigil sends text turns)")
            if text.strip():
                self.turns.put_nowait(text)
            else:
                self.warn("a user message with no text was ignored")
        # control_cancel_request, keep_alive and newer types: nothing Vigil runs for the SDK is long-lived

    async def _control(self, message: dict[str, Any]) -> None:
        request_id = str(message.get("request_id") or "")
        request = message.get("request") if isinstance(message.get("request"), dict) else {}
        subtype = request.get("subtype")
        handler = getattr(self, f"_on_{subtype}", None) if isinstance(subtype, str) else None
        if handler is None:
            self.channel.respond_error(request_id, f"Vigil does not support the control request {subtype!r}")
            return
        try:
            body = await handler(request)
        except Exception as exc:  # a request Vigil cannot carry out is answered, never fatal
            self.channel.respond_error(request_id, str(exc) or type(exc).__name__)
            return
        self.channel.respond(request_id, body)

    async def _send(self, command: Any) -> Any:
        """A command through the session's port; a refusal is the request's error."""
        reply = await self.controller.handle(command)
        if isinstance(reply, Refused):
            raise ValueError(reply.message)
        return reply

    # ---- control requests ---------------------------------------------------------------------

    async def _on_initialize(self, request: dict[str, Any]) -> dict[str, Any]:
        registered = install_sdk_hooks(self.session, self.channel, request.get("hooks"))
        system = request.get("systemPrompt")
        append = request.get("appendSystemPrompt")
        text = "\n\n".join(system) if isinstance(system, list) and all(isinstance(s, str) for s in system) else None
        if text is not None or (isinstance(append, str) and append):
            await self._send(SetSystemPrompt(text=text, append=append if isinstance(append, str) else ""))
        if request.get("jsonSchema") is not None:
            self.warn("structured output (a JSON schema) is not supported; the turns answer in text")
        facts = self.controller.facts()
        return {
            "commands": [{"name": c.name, "description": c.description, "argumentHint": c.hint}
                         for c in facts.slash_commands if c.headless],
            "agents": [{"name": t.name, "description": t.description} for t in facts.agent_types],
            "output_style": "default", "available_output_styles": ["default"],
            "models": [{"value": facts.model, "displayName": facts.model,
                        "description": f"{facts.provider} model, run by Vigil"}],
            "account": {"tokenSource": "none", "apiProvider": facts.provider,
                        "apiKeySource": "ANTHROPIC_API_KEY" if facts.provider == "anthropic" else "none"},
            "pid": os.getpid(), "claude_code_version": CLAUDE_CODE_COMPAT_VERSION, "vigil_version": vigil_version(),
            "current_permission_mode": facts.permission_mode, "hooks_applied": True,
            "hook_on_failure_supported": True, "hooks_registered": registered, "session_state": self.state.state,
        }

    async def _on_interrupt(self, request: dict[str, Any]) -> dict[str, Any]:
        await self.controller.handle(Interrupt(client="sdk"))  # nothing running: nothing to do
        return {}

    async def _on_set_permission_mode(self, request: dict[str, Any]) -> dict[str, Any]:
        mode = request.get("mode")
        if not isinstance(mode, str):
            raise ValueError(f"unknown permission mode {mode!r}")
        await self._send(SetPermissionMode(mode=mode, client="sdk"))
        return {}

    async def _on_set_model(self, request: dict[str, Any]) -> dict[str, Any]:
        model = request.get("model")
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ValueError(f"model must be a name or null, not {model!r}")
        # the next model step uses it; null goes back to the model the session started with
        await self._send(SetModel(model=model, client="sdk"))
        return {}

    async def _on_mcp_status(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"mcpServers": [dict(s) for s in self.transcript.mcp_servers]}

    # ---- turns --------------------------------------------------------------------------------

    async def _run_turns(self) -> None:
        while (prompt := await self.turns.get()) is not None:
            self.state.turn_running = True
            self.state.set("running")
            self.transcript.init_line(self.controller.facts())
            began = time.perf_counter()
            try:
                turn = await self._prompt(prompt)
            except Exception as exc:  # a broken turn still ends in a result the SDK can read
                turn = TurnResult(turn_id="", reason="error", error=f"{type(exc).__name__}: {exc}")
            result = self.transcript.result_object(turn, int((time.perf_counter() - began) * 1000))
            self.write(result)
            self.last_error = bool(result["is_error"])
            self.state.turn_running = False
            self.state.set("idle")


    async def _prompt(self, prompt: str) -> TurnResult:
        """One user message: a turn, or a command Vigil runs itself (`/compact` …), as in Claude Code."""
        reply = await self.controller.handle(SubmitPrompt(text=prompt, client="sdk"))
        work = await self.controller.wait_idle() if reply.ok and reply.command is None else None
        if isinstance(work, TurnResult):
            return work
        if isinstance(reply, Refused):
            return TurnResult(turn_id="", reason="error", error=reply.message)
        return TurnResult(turn_id="", reason="completed", text=reply.output or "")


async def run_sdk_mode(session: Any, *, prompt_tool: str | None, partial: bool, hook_events: bool,
                       out: IO[str] | None = None, err: IO[str] | None = None,
                       stream: IO[bytes] | None = None) -> int:
    server = SdkServer(session, out=out or sys.stdout, err=err or sys.stderr, prompt_tool=prompt_tool,
                       partial=partial, hook_events=hook_events)
    return await server.serve(stream)

