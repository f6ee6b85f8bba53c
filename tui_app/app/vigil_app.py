"""The Vigil TUI: a live session on its own thread, its events shown on the main screen, the
user's answers sent back.

The runtime runs in a `SessionRunner` (its own thread and event loop), started from a Textual
thread worker so connecting MCP servers never holds up the first frame. A timer drains the
runner's events at most `PUMP_HZ` times a second; a drained batch is coalesced (text deltas and
output chunks joined) and shown in one go, so an output flood costs a few screen updates a second,
not one per chunk. Answers (prompts, approvals, interrupts, the permission mode) go back as
commands of the session port, through `SessionClient`.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message

from tui_app.app.bridge import SessionRunner
from tui_app.app.commands import VigilCommands
from tui_app.app.controls import SessionClient
from tui_app.app.event_batch import coalesce
from tui_app.app.request_queue import DialogOptions, RequestQueue
from tui_app.app.screens.main import MainScreen
from tui_app.app.theme import pick_theme
from tui_app.runtime.session import Session

PUMP_HZ = 30
#: loop turns a key needs to reach whoever handles it (widget → containers → screen → app)
KEY_HOPS = 8
#: after SIGTERM, how long the app may take to restore the terminal before the process just ends
EXIT_GRACE_S = 5.0
AUTO_PROMPT_DELAY_S = 1.2
#: how often the idle-prompt watch looks at the clock
IDLE_TICK_S = 2.0


class PumpNow(Message):
    """Drain the runtime's events now (a question for the user arrived)."""


class VigilApp(App[int]):
    TITLE = "Vigil"
    COMMANDS: ClassVar = App.COMMANDS | {VigilCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, session: Session | None = None, *, runner: Any = None, prefill: Sequence[Any] = (),
                 history: list[str] | None = None, auto_prompt: str | None = None,
                 auto_prompt_delay: float = AUTO_PROMPT_DELAY_S, banner: str | None = None, tag: str = "",
                 cwd: str | None = None, cwd_label: str | None = None, key_guard_s: float = 0.3,
                 guard_clock: Callable[[], float] = time.monotonic, table_clock: Callable[[], float] = time.time,
                 ring_bell: bool = True, handle_signals: bool = False, freeze_gc: bool = True,
                 pump_hz: float = PUMP_HZ) -> None:
        super().__init__()
        if runner is None and session is not None:
            runner = SessionRunner(session, on_error=self._runtime_error)
        elif runner is not None and getattr(runner, "on_error", None) is None:
            runner.on_error = self._runtime_error
        #: a SessionRunner (the session runs here), or one with its shape over the host's socket
        self.runner = runner
        self.controls = SessionClient(self.runner) if self.runner is not None else None
        self.prefill = list(prefill)
        self.auto_prompt = auto_prompt
        self.auto_prompt_delay = auto_prompt_delay
        self.banner = banner
        self.handle_signals = handle_signals
        self.freeze_gc = freeze_gc
        self.pump_hz = pump_hz
        self.ready = False
        self.closed = False
        #: /resume: the session to open when this app has closed (the CLI opens it)
        self.resume_request: str | None = None
        #: the palette's "Agent: NAME": a new session with that agent when this app has closed
        self.agent_request: str | None = None
        self._pumping = False
        #: set once the app runs: a wake before that has nothing to show yet
        self._app_loop: asyncio.AbstractEventLoop | None = None
        if self.runner is not None:
            self.runner.subscribe(self._wake_for_the_user)  # before the runner starts: events are all it reads
        self.draw_keys_at_once = True
        self._key_frames: set[asyncio.Task[None]] = set()
        self.batches = 0
        theme = pick_theme()
        if theme in self.available_themes:
            self.theme = theme
        cwd = cwd or (self.runner.cwd if self.runner is not None else None)
        self.main = MainScreen(self.controls, cwd=cwd, cwd_label=cwd_label, tag=tag, history=history,
                               table_clock=table_clock)
        options = DialogOptions(cwd=cwd, key_guard_s=key_guard_s, clock=guard_clock, ring_bell=ring_bell,
                                forward_keys=self._typed_during_guard, can_open=self._on_main_screen)
        #: the dialogs over the requests waiting for the user (the main screen's view folds them)
        self.requests = RequestQueue(self, self.main.view.requests, self._answer, options)
        from tui_app.app.notifier import attach_notifications

        attach_notifications(self)  # desktop notifications and the idle_prompt Notification hook

    # ---- start-up ---------------------------------------------------------------------------

    async def on_mount(self) -> None:
        self._app_loop = asyncio.get_running_loop()
        await self.push_screen(self.main)
        if self.prefill:
            await self.main.apply(self.prefill)
        if self.banner:
            await self.main.chat.add_notice(self.banner, "info")
        self.set_interval(1 / self.pump_hz, self._pump)
        self.set_interval(IDLE_TICK_S, self.idle_prompt.tick)
        if self.handle_signals:
            self._install_signal_handlers()
        if self.runner is not None:
            self.run_worker(self._start_runtime, thread=True, name="vigil-runtime-start")

    def _start_runtime(self) -> None:
        assert self.runner is not None
        self.runner.start()
        self.call_from_thread(self._runtime_ready)

    def _runtime_ready(self) -> None:
        self.ready = True
        if self.controls is not None:
            self.run_worker(self._learn_facts(), group="facts")
        if self.auto_prompt and self.controls is not None:
            prompt = self.auto_prompt
            self.set_timer(self.auto_prompt_delay, lambda: self.controls and self.controls.submit(prompt))
        if self.freeze_gc:
            # Textual, the app and the session's long-lived objects leave the collector's scans:
            # full collections of them made the worst frame stalls (bench/ui_flood.py)
            self.call_after_refresh(_freeze_gc)

    async def _learn_facts(self) -> None:
        """What the screen completes and offers before anything is asked (slash commands, agents)."""
        assert self.controls is not None
        facts = await self.controls.refresh()
        self.notifier.enabled = self.notifier.enabled and facts.notifications

    def _runtime_error(self, exc: BaseException) -> None:
        """Called on the runtime thread when the session could not start."""
        self.call_from_thread(self._show_runtime_error, f"The session could not start: {exc}")

    async def _show_runtime_error(self, text: str) -> None:
        await self.main.chat.add_notice(text, "error")
        self.notify(text, severity="error", markup=False)

    # ---- events in --------------------------------------------------------------------------

    @property
    def _shutting_down(self) -> bool:
        # the pump's timer can fire once more while the screen's widgets are being removed
        main = self.main
        return bool(getattr(self, "_exit", False) or getattr(self, "_closing", False)
                    or getattr(main, "_closing", False) or not main.is_mounted)

    async def _pump(self) -> None:
        if self.runner is None or self._shutting_down or self._pumping:
            return  # a pump already running drains it; the next tick takes what came after
        events = self.runner.drain()
        if not events:
            return
        self._pumping = True
        try:
            batch = coalesce(events)
            self.batches += 1
            settled = await self.main.apply(batch)
            self._ask_trust(batch)
            self.requests.observe(settled)
            self.notifier.observe(batch)
            self.idle_prompt.observe(batch)
        finally:
            self._pumping = False

    def _wake_for_the_user(self, event: Any) -> None:
        """On the runtime thread: a question for the user is shown now, not at the next tick (an
        agent is waiting on it; the pump's period was most of the time to the dialog)."""
        asks = ("PermissionRequested", "UserQuestionAsked", "ProjectTrustAsked")
        if event.type in asks and self._app_loop is not None:
            self.post_message(PumpNow())  # thread-safe; handled in the app's own context

    async def on_pump_now(self, _message: PumpNow) -> None:
        await self._pump()

    # ---- keys get their frame at once ------------------------------------------------------

    async def on_event(self, event: events.Event) -> None:
        await super().on_event(event)
        if isinstance(event, events.Key | events.MouseDown):
            self.notifier.saw_input()
            self.idle_prompt.saw_input()
        if isinstance(event, events.Key) and self.draw_keys_at_once:
            task = asyncio.get_running_loop().create_task(self._frame_for_key())
            self._key_frames.add(task)
            task.add_done_callback(self._key_frames.discard)

    async def _frame_for_key(self) -> None:
        """Draw what a key changed now rather than at the next tick of the screen's 60 Hz update
        timer: while output floods in, the screen is redrawn on every tick, and a keystroke waited
        up to a tick plus a frame for its echo (p99 ~45 ms → ~9 ms in bench/ui_flood.py)."""
        for _ in range(KEY_HOPS):
            await asyncio.sleep(0)
        if self._shutting_down or not self.screen_stack:
            return
        screen = self.screen
        update = getattr(screen, "_on_timer_update", None)  # Textual's own "draw now" (pinned version)
        if update is not None and (getattr(screen, "_dirty_widgets", None) or getattr(screen, "_layout_required", False)
                                   or getattr(screen, "_repaint_required", False)):
            update()

    # ---- dialogs ----------------------------------------------------------------------------

    def _ask_trust(self, events: Sequence[Any]) -> None:
        """The session's start waits for this answer: before it, none of the project's own hooks
        or servers has run."""
        from tui_app.app.screens.trust import TrustScreen
        from tui_app.runtime.commands import AnswerTrust

        for event in events:
            if event.type == "ProjectTrustAsked":
                self.push_screen(TrustScreen(event.project, list(event.items)),
                                 callback=lambda trusted: self._answer(AnswerTrust(trusted=bool(trusted))))

    def _on_main_screen(self) -> bool:
        return bool(self.screen_stack) and self.screen_stack[-1] is self.main

    def show_waiting_dialogs(self) -> None:
        """Back on the main screen: a request that waited meanwhile opens now."""
        self.requests.observe(())

    # ---- answers out ------------------------------------------------------------------------

    def _answer(self, command: Any) -> None:
        """An answer to a request goes to the session; one that came too late is said."""
        if self.controls is None:
            return
        future = self.controls.send(command)

        def told(done: Any) -> None:
            reply = None if done.cancelled() or done.exception() is not None else done.result()
            if reply is not None and not reply.ok and reply.code == "not_found" and not self._shutting_down:
                self.call_from_thread(self.notify, "Too late: this request was already decided elsewhere.",
                                      severity="warning", markup=False)

        future.add_done_callback(told)

    def _typed_during_guard(self, text: str) -> None:
        prompt = self.main.prompt
        if prompt.display:
            prompt.insert_typed(text)

    # ---- quitting ---------------------------------------------------------------------------

    def request_resume(self, session_id: str) -> None:
        """/resume: this session closes (every child process stopped), then the other one opens."""
        self.resume_request = session_id
        self.run_worker(self.action_quit(), group="resume")

    def request_agent(self, name: str) -> None:
        """This session closes (every child process stopped), then a new one opens with `name`."""
        self.agent_request = name
        self.run_worker(self.action_quit(), group="resume")

    @property
    def detaches(self) -> bool:
        """Closing the app leaves the session running (it lives in the host)."""
        return bool(getattr(self.runner, "detaches", False))

    def close_runtime(self) -> None:
        """Interrupt the turn, kill every child process (Bash groups, background tasks, MCP
        servers), close the log. Blocking; idempotent."""
        if self.runner is not None and not self.closed:
            self.closed = True
            self.runner.close()

    async def end_session(self) -> None:
        """End the session itself (not only this window): its agent and processes stop."""
        from tui_app.runtime.commands import EndSession

        if self.controls is not None and not self.closed:
            self.notify("Ending the session…", markup=False)
            await self.controls.ask(EndSession(reason="ended from the TUI"))
        self.exit(0)

    async def action_quit(self) -> None:
        if self.runner is not None and not self.closed:
            if self.detaches:
                self.notify("Detaching: the session goes on in the host.", markup=False)
            else:
                self.notify("Stopping: cancelling tools, ending background tasks and MCP servers…", markup=False)
            await asyncio.to_thread(self.close_runtime)
        self.exit(0)

    def on_unmount(self) -> None:
        self.close_runtime()

    def _install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(number, self._on_signal, number)
            except (NotImplementedError, RuntimeError, ValueError):
                pass

    def _on_signal(self, number: int) -> None:
        # killed or hung up: the children go first (with short graces), then the app; a hard
        # deadline ends the process should anything of that hang
        from tui_app.runtime.processes import shutdown

        shutdown.begin()
        self.close_runtime()
        code = 128 + number
        if number == signal.SIGHUP:
            # the terminal is gone: there is nothing to restore, and Textual's writer thread, whose
            # writes now fail, could leave its shutdown waiting on a full queue for ever
            os._exit(code)
        self.exit(code)
        # the terminal is restored on the way out; should that hang, the process ends anyway
        watchdog = threading.Timer(EXIT_GRACE_S, os._exit, args=(code,))
        watchdog.daemon = True
        watchdog.start()


def _freeze_gc() -> None:
    gc.collect()
    gc.freeze()
