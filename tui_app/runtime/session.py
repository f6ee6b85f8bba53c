"""A session: one conversation, its agent, its tools and services, its event log, its turns.

The session stamps every event (seq, session id, time), writes it to the log, folds it into the
conversation, and hands it to subscribers (the TUI bridge, the headless printer, tests). It runs on
one asyncio loop; `interrupt()` may be called from any thread. Clients do not call it: they send
commands to its `controller` (the session port, docs/architecture.md) and read its events.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tui_app.runtime.agent import Agent, TurnResult
from tui_app.runtime.controller import SessionController, SessionProfile
from tui_app.runtime.events import SessionEnded, SessionStarted, ToolMenu, UserMessage, Warning
from tui_app.runtime.executor import TurnControl
from tui_app.runtime.files.atomic import sweep_interrupted_writes
from tui_app.runtime.hooks.runner import HookRunner, NoHooks
from tui_app.runtime.log.conversation import ConversationBuilder
from tui_app.runtime.log.eventlog import LOG_FAILED_CODE, EventLogWriter, failure_reason, read_events
from tui_app.runtime.log.paths import events_path
from tui_app.runtime.messages import ToolDefinition
from tui_app.runtime.permissions.broker import ApprovalBroker
from tui_app.runtime.permissions.decision import ModePolicy, PermissionPolicy
from tui_app.runtime.pipeline import CallEnv
from tui_app.runtime.processes.reaper import ensure_reaper
from tui_app.runtime.processes.session_lock import SessionLock
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.scheduler import max_concurrency_from_env

Subscriber = Callable[[Any], None]


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def menu_digest(tools: list[ToolDefinition]) -> str:
    data = json.dumps([t.model_dump() for t in tools], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(data.encode()).hexdigest()


class Session:
    def __init__(
        self,
        *,
        cwd: str,
        agent: Agent,
        registry: ToolRegistry,
        policy: PermissionPolicy | None = None,
        hooks: HookRunner | None = None,
        broker: ApprovalBroker | None = None,
        session_id: str | None = None,
        log_path: str | Path | None = None,
        persist: bool = True,
        services: dict[str, Any] | None = None,
        max_steps: int | None = None,
        early_execution: bool = True,
        profile: SessionProfile | None = None,
    ) -> None:
        self.id = session_id or new_session_id()
        self.cwd = str(cwd)
        self.agent = agent
        self.registry = registry
        self.policy: PermissionPolicy = policy or ModePolicy()
        self.hooks: HookRunner = hooks or NoHooks()
        self.broker = broker or ApprovalBroker(interactive=False)
        self.services: dict[str, Any] = dict(services or {})
        self.max_steps = max_steps
        self.max_concurrency = max_concurrency_from_env()
        self.early_execution = early_execution
        self.log_path = Path(log_path) if log_path else (events_path(self.id) if persist else None)
        self.log: EventLogWriter | None = None
        self.conversation = ConversationBuilder()
        self.tool_menu: list[ToolDefinition] = []
        #: announced right after SessionStarted (which settings files were read, and their problems)
        self.startup_events: list[Any] = []
        self._subscribers: list[Subscriber] = []
        self._seq = 0
        self._step = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._control: TurnControl | None = None
        self._turns = 0
        self._lock = threading.Lock()
        self.log_errors = 0
        #: why the log stopped being written (disk full …): the session then starts no more tools
        self.log_failure: str | None = None
        self.lock = SessionLock(self.log_path, self.id) if self.log_path is not None else None
        self._resume_warnings: list[str] | None = None
        #: the client whose prompt the running turn answers (stamped on its TurnStarted)
        self.turn_client: str | None = None
        #: the session port: every client's commands go through it
        self.controller = SessionController(self, profile)
        # the tools that change the mode (ExitPlanMode) write through the controller too
        self.services.setdefault("permission_mode", self.controller.writes)

    # ---- events -------------------------------------------------------------------------------

    def lend_file_access(self, access: Any) -> None:
        """A client that serves file reads and writes itself (an ACP editor: its unsaved buffers are
        the truth) lends them to the session's file tools, which then ask it first."""
        self.services["file_access"] = access

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber) if subscriber in self._subscribers else None

    def emit(self, event: Any) -> Any:
        if not event.ephemeral:  # the log's numbering has no gaps; a delta shares its predecessor's seq
            self._seq += 1
        # stamped in place: every event is made for this one emit, and copying a pydantic model
        # per event was a third of the runtime's per-call cost
        event.__dict__.update(seq=self._seq, session_id=self.id, ts=time.time())
        if not event.ephemeral:
            self._write(event)
            self.conversation.feed(event)
            self.controller.observe(event)
        for subscriber in tuple(self._subscribers):
            subscriber(event)
        return event

    def _write(self, event: Any) -> None:
        if self.log is None:
            return
        try:
            self.log.write(event)
        except OSError as exc:
            self.log_errors += 1
            if self.log_failure is None:
                self._log_failed(exc)

    def _log_failed(self, exc: OSError) -> None:
        """The log is the product: without it nothing that happens can be replayed or resumed, so
        the turn stops (running calls are cancelled, no further one starts) and every screen says
        so. The warning goes to subscribers only: the log is what failed."""
        self.log_failure = failure_reason(exc)
        last = self.log.last_seq if self.log is not None else 0
        message = (f"The session log could not be written ({self.log_failure}: {exc.strerror or exc}). It ends at "
                   f"event {last}; no further tool is started. Free some space, then continue with "
                   f"`vigil --resume {self.id}`.")
        warning = Warning(seq=self._seq, session_id=self.id, ts=time.time(), code=LOG_FAILED_CODE, message=message,
                          detail={"reason": self.log_failure, "last_seq": last, "log": str(self.log_path or "")})
        for subscriber in tuple(self._subscribers):
            subscriber(warning)
        self.interrupt(LOG_FAILED_CODE)

    def can_record(self) -> bool:
        """False once the log failed: the pipeline starts no tool it could not record."""
        return self.log_failure is None

    # ---- lifecycle ----------------------------------------------------------------------------

    @property
    def permission_mode(self) -> str:
        return self.policy.mode

    @property
    def provider_name(self) -> str:
        return self.agent.provider

    @property
    def model_name(self) -> str:
        return self.agent.model

    @property
    def base_url(self) -> str | None:
        return self.agent.base_url

    @property
    def turns(self) -> int:
        """Turns run so far (the next one is `turn-{turns + 1}`)."""
        return self._turns

    def call_env(self, turn_id: str | None) -> CallEnv:
        return CallEnv(
            session_id=self.id, cwd=self.cwd, registry=self.registry, policy=self.policy, hooks=self.hooks,
            broker=self.broker, emit=self.emit, services=self.services,
            transcript_path=str(self.log_path or ""), turn_id=turn_id, can_record=self.can_record,
            writes=self.controller.writes,
        )

    def hook_session_info(self) -> dict[str, Any]:
        return {"session_id": self.id, "transcript_path": str(self.log_path or ""), "cwd": self.cwd,
                "permission_mode": self.permission_mode}

    def next_step(self) -> int:
        self._step += 1
        return self._step

    def resume_from_log(self) -> list[str]:
        """Load an existing log: the conversation and counters continue where it ended. Takes the
        session's lock first (SessionInUse when another process writes it)."""
        assert self.log_path is not None
        self.claim()
        read = read_events(self.log_path)
        for event in read.events:
            self.conversation.feed(event)
            self._seq = max(self._seq, event.seq)
            step = getattr(event, "step", None)
            if isinstance(step, int):
                self._step = max(self._step, step)
            if event.type == "TurnStarted":
                self._turns += 1
            elif event.type == "ToolMenu":
                self.tool_menu = list(event.tools)  # an unchanged menu keeps the prompt cache warm
        self._resume_warnings = list(read.warnings)
        return read.warnings

    def claim(self) -> None:
        """Become the session's only writer (raises SessionInUse naming the holder)."""
        if self.lock is not None:
            self.lock.acquire()

    async def start(self, *, resumed: bool = False, title: str | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        ensure_reaper()  # before any child starts: whatever the session spawns dies with this process
        if self.log_path is not None:
            self.claim()
            try:
                self.log = EventLogWriter(self.log_path)
            except OSError as exc:  # not even the file could be opened: nothing can be recorded
                self.log_errors += 1
                self._log_failed(exc)
        resumed = resumed or self._resume_warnings is not None
        agent = self.agent
        self.emit(SessionStarted(cwd=self.cwd, provider=self.provider_name, model=self.model_name,
                                 permission_mode=self.permission_mode, vigil_version=_version(),
                                 resumed_from=self.id if resumed else None, title=title,
                                 agent=agent.name if agent.capabilities.own_tools else None,
                                 directories=[d for d in getattr(getattr(self.policy, "dirs", None), "dirs", ())
                                              if d != self.cwd]))
        for message in self._resume_warnings or ():
            self.emit(Warning(code="log_line_skipped", message=message))
        for temp in sweep_interrupted_writes():
            self.emit(Warning(code="interrupted_write_cleaned", message=(
                f"Removed {temp}: the temporary file of a write that an earlier Vigil did not finish "
                "(it was killed mid-write). The file it was meant to replace was left as it was.")))
        for event in self.startup_events:
            self.emit(event)
        await self._start_services()
        await agent.astart(self)
        context = await self.hooks.session_start(self.hook_session_info(), "resume" if resumed else "startup")
        for text in context:  # SessionStart hooks' output is context for the model
            self.emit(UserMessage(text=text, source="hook"))

    async def _start_services(self) -> None:
        """Services that connect to something (MCP servers) start before the first menu is
        frozen, so what they bring is on it."""
        for service in [s for s in self.services.values() if hasattr(s, "astart")]:
            try:
                await service.astart(self)
            except Exception as exc:
                self.emit(Warning(code="service_start_failed", message=str(exc)))

    def refresh_tool_menu(self) -> bool:
        """Freeze the menu the model is shown; a new ToolMenu event only when it changed."""
        tools = self.registry.model_tools()
        digest = menu_digest(tools)
        if self.tool_menu and digest == menu_digest(self.tool_menu):
            return False
        self.tool_menu = tools
        self.emit(ToolMenu(tools=tools, sha256=digest))
        return True

    async def run_turn(self, prompt: str, client: str | None = None) -> TurnResult:
        if self._control is not None:
            raise RuntimeError("a turn is already running")
        if self.log_failure is not None:
            return TurnResult(turn_id=f"turn-{self._turns + 1}", reason="error",
                              error=f"The session log cannot be written ({self.log_failure}), so no turn is run.")
        self._turns += 1
        self.turn_client = client
        try:
            with self.hold(TurnControl()) as control:
                return await self.agent.run_turn(self, prompt, control, f"turn-{self._turns}")
        finally:
            self.turn_client = None
            if self.log is not None:
                self.log.sync()

    @contextmanager
    def hold(self, control: TurnControl) -> Iterator[TurnControl]:
        """Hold the session with `control` the way a turn does (a compaction, a `!` command): Esc
        and closing the session interrupt it; nothing else may start meanwhile."""
        if self._control is not None:
            raise RuntimeError("the session is busy")
        self._control = control
        try:
            yield control
        finally:
            self._control = None

    @property
    def busy(self) -> bool:
        return self._control is not None

    def interrupt(self, reason: str = "interrupted") -> None:
        """Thread-safe: stop the running turn (running calls are cancelled, the rest aborted)."""
        control, loop = self._control, self._loop
        if control is None or loop is None:
            return
        if _on_loop(loop):
            control.abort(reason)
        else:
            loop.call_soon_threadsafe(control.abort, reason)

    async def close(self, reason: str = "exit") -> None:
        closers = [s for s in (*self.services.values(), self.agent) if hasattr(s, "aclose")]
        # the log ends with SessionEnded even when a signal or a cancellation cuts the closing
        # short (a service still stopping its processes: the reaper ends what is left)
        try:
            for service in closers:
                try:
                    await service.aclose()
                except Exception as exc:
                    self.emit(Warning(code="service_close_failed", message=str(exc)))
            await self.hooks.session_end(self.hook_session_info(), reason)
        finally:
            self.emit(SessionEnded(reason=reason))
            if self.log is not None:
                self.log.close()
                self.log = None
            if self.lock is not None:
                self.lock.release()


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _version() -> str:
    # the package's own constant: reading the installed metadata imported importlib.metadata
    # (and scanned site-packages) for every session
    from tui_app import __version__

    return __version__
