"""A recorded session, read-only, on the main screen, with a timeline to step through it.

The screen is the live main screen (same chat, table, detail, diffs, outputs, artifacts) fed from
the session's log instead of a runtime: nothing is started, nothing is executed, no dialog opens
(a call that waited for approval at that moment shows as awaiting approval). Position N shows the
first N events. Stepping forward applies the new events, the way a live session's batches arrive.
Stepping back folds the first N events again into a new view model (tui_app/view_model/: rows,
records, header, reports) under the widgets and drops the chat's later lines: a new screen fed N
events would show the same (a test holds it to that), without mounting a long chat again. Keys pressed while the screen
catches up only move the target.

The log is applied in pieces that end at the events after which the screen may move its detail
pane to another call (tui_app/replay_timeline.py), so the call it shows is the one a live session
would have shown.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer

from tui_app.app.screens.main import MainScreen
from tui_app.runtime.log.catalog import UnknownSession, resolve_session_id
from tui_app.runtime.log.eventlog import read_events
from tui_app.runtime.log.paths import events_path
from tui_app.view_model.follow import followed_call
from tui_app.view_model.session_view import SessionView
from widgets.panels.side import SidePanels
from widgets.replay_timeline import Timeline
from widgets.timeline_bar import TimelineBar

READ_ONLY_TAG = "READ-ONLY replay"
#: a move this many events long says "catching up" before it starts (bench/replay_timeline.py)
LONG_WAY = 1000
FRAME_S = 1 / 30


class ReplayLoadError(Exception):
    """The session cannot be replayed (no such session, unreadable log); the message says why."""


def log_note(read_warnings: Sequence[str], torn_tail: bool, events: int) -> str:
    """What the timeline says about the log itself."""
    notes = []
    if torn_tail:
        notes.append(f"the log ends mid-line (cut short while it was written); showing up to event {events:,}")
    skipped = len(read_warnings) - (1 if torn_tail else 0)
    if skipped > 0:
        notes.append(f"{skipped} unreadable line{'s' if skipped != 1 else ''} skipped")
    return "; ".join(notes)


def read_log(session_id: str) -> tuple[list[Any], str]:
    """The recorded events of a session and a note about its log (blocking: a long log takes a
    moment to parse)."""
    try:
        session_id = resolve_session_id(session_id)
    except UnknownSession as exc:
        raise ReplayLoadError(str(exc)) from None
    path = events_path(session_id)
    try:
        read = read_events(path)
    except OSError as exc:
        raise ReplayLoadError(f"the log of {session_id} cannot be read: {exc}") from None
    return read.events, log_note(read.warnings, read.torn_tail, len(read.events))


def followed_view(timeline: Timeline, position: int, view: SessionView) -> str | None:
    """Fold the first `position` events into `view` (a new one); return the call the detail pane
    of a screen fed those events would be following (the same rule the screen applies as it goes)."""
    followed = None
    for start, stop in timeline.pieces(0, position):
        piece = timeline.events[start:stop]
        for event in piece:
            view.apply(event)
        followed = followed_call(piece, followed, view.rows) or followed
    return followed


class ReplayScreen(MainScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: the table and the viewers would take ← → Home End for themselves
        Binding("left,h", "step(-1)", "Back", priority=True, key_display="←"),
        Binding("right,l", "step(1)", "Forward", priority=True, key_display="→"),
        Binding("ctrl+left", "turn(-1)", "Previous turn", priority=True, show=False),
        Binding("ctrl+right", "turn(1)", "Next turn", priority=True, show=False),
        # not priority: in the Diff tab [ and ] walk the hunks
        Binding("left_square_bracket", "turn(-1)", "Turn back", show=False),
        Binding("right_square_bracket", "turn(1)", "Next turn", key_display="[ ]"),
        Binding("home", "jump('start')", "Start", priority=True, show=False),
        Binding("end", "jump('end')", "End", priority=True, show=False),
        Binding("q,escape", "close_replay", "Close"),
    ]

    def __init__(self, session_id: str, events: Sequence[Any], *, note: str = "", position: int | None = None,
                 cwd_label: str | None = None) -> None:
        started = next((e for e in events if e.type == "SessionStarted"), None)
        super().__init__(None, cwd=started.cwd if started is not None else None, cwd_label=cwd_label,
                         tag=READ_ONLY_TAG, table_clock=self._moment_ts)
        self.recorded_id = session_id
        self.timeline = Timeline(events)
        self.note = note
        #: where the user wants to be, and how far the widgets have got
        self.position = self.timeline.end if position is None else self.timeline.clamp(position)
        self.shown = 0
        self.rewinds = 0
        self._syncing = False
        self._catching_up = False
        self._pending_select: str | None = None

    @classmethod
    def load(cls, session_id: str, **options: Any) -> ReplayScreen:
        events, note = read_log(session_id)
        return cls(session_id, events, note=note, **options)

    # ---- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, Footer):
                yield TimelineBar(id="timeline")
            yield widget

    def on_mount(self) -> None:
        super().on_mount()
        if self.note:
            self.notify(self.note, severity="warning", markup=False, timeout=8)
        self.bar.show(self.timeline.moment(self.position), self.timeline.turn_starts, self.note)
        # after the first layout: a tab chosen before it leaves its underline under the first tab
        self.call_after_refresh(self.go, self.position)

    @property
    def bar(self) -> TimelineBar:
        return self.query_one(TimelineBar)

    @property
    def session_id(self) -> str:
        return self.recorded_id

    @property
    def synced(self) -> bool:
        """The screen shows the position the user asked for."""
        return not self._syncing and self.shown == self.position

    def _moment_ts(self) -> float:
        """The table's and the Output tab's clock: a call running at this moment shows how long it
        had been running."""
        return self.timeline.ts_at(self.shown)

    # ---- moving -----------------------------------------------------------------------------

    def go(self, position: int) -> None:
        self.position = self.timeline.clamp(position)
        self.bar.show(self.timeline.moment(self.position), self.timeline.turn_starts, self.note)
        if not self._syncing and self.shown != self.position:
            self._syncing = True
            self.run_worker(self._sync(), group="replay-sync", exit_on_error=True)

    def _auto_select(self, call_id: str) -> None:
        """While catching up, only the last call the screen would have followed gets shown: the
        detail pane renders once, not once per call on the way."""
        if self._catching_up:
            self._auto_selected = self._pending_select = call_id
        else:
            super()._auto_select(call_id)

    async def _sync(self) -> None:
        self._catching_up = True
        bar = self.bar
        if abs(self.position - self.shown) >= LONG_WAY:
            # the screen is not redrawn until it gets there: say so first (a long chat takes seconds)
            bar.catching_up = True
            bar.refresh()
            await asyncio.sleep(FRAME_S)
        collecting = gc.isenabled()
        # a catch-up builds thousands of long-lived objects (rows, records, chat entries) and no
        # garbage: the collector's passes over the whole log were a third of opening a long replay
        gc.disable()
        try:
            with self.app.batch_update():  # one repaint at the end, not one per screen tick on the way
                while self.shown != self.position:
                    if self.position < self.shown:
                        await self._rewind(self.position)
                        continue
                    async with self.chat.mounting_together():
                        for start, stop in self.timeline.pieces(self.shown, self.position):
                            await self.apply(self.timeline.events[start:stop], bulk=True)
                            self.shown = stop
                            if self.position < self.shown:
                                break  # the user went back meanwhile
                self.table.settle()
                self._catching_up = False
                if self._pending_select is not None:
                    super()._auto_select(self._pending_select)
                    self._pending_select = None
                self.table.refresh()  # running rows: their time is this moment's
        finally:
            if collecting:
                gc.enable()
            self._syncing = self._catching_up = False
            if bar.catching_up:
                bar.catching_up = False
                bar.refresh()

    async def _rewind(self, position: int) -> None:
        """Back to how the screen was after the first `position` events: the models under the
        widgets are folded again from the log (plain Python, quick), and the chat drops what
        appeared later. The call the user picked stays when it existed by then; otherwise the
        pane shows the call a live screen would have been following."""
        events = self.timeline.events[:position]
        self.rewinds += 1
        view = self.view = SessionView(tag=self.tag, cwd=self.cwd or "")
        followed = followed_view(self.timeline, position, view)
        rows = view.rows
        header = self.header
        header.state = view.header
        header.redraw()
        self.table.replace_rows(rows)
        picked = None if self.follow else self.detail.call_id
        if picked is not None and rows.get(picked) is None:
            picked = None
        if picked is None:
            self.follow, self.detail.call_id, self.table.cursor_id = True, None, None
        self.detail.replace_records(view.records)
        self.query_one(SidePanels).replace_files(view.files)
        await self.chat.rewind(events, rows)
        self._echoes = []
        self._auto_selected = followed if picked is None else self._auto_selected
        self._pending_select = followed if picked is None else None
        self.shown = position

    # ---- keys -------------------------------------------------------------------------------

    def action_step(self, delta: int) -> None:
        self.go(self.position + delta)

    def action_turn(self, direction: int) -> None:
        timeline = self.timeline
        self.go(timeline.next_turn(self.position) if direction > 0 else timeline.previous_turn(self.position))

    def action_jump(self, where: str) -> None:
        self.go(0 if where == "start" else self.timeline.end)

    def action_close_replay(self) -> None:
        below = self.app.screen_stack[:-1]
        if len(below) > 1:  # the live session's screen, or the session browser
            self.app.pop_screen()
        else:
            self.app.exit(0)

    def timeline_commands(self) -> list[tuple[str, Callable[[], Any], str]]:
        """For the command palette."""
        return [
            ("Replay: go to the start", lambda: self.action_jump("start"), "Home: before the first event"),
            ("Replay: go to the end", lambda: self.action_jump("end"), "End: the session as it finished"),
            ("Replay: next turn", lambda: self.action_turn(1), "] or ctrl+→"),
            ("Replay: previous turn", lambda: self.action_turn(-1), "[ or ctrl+←"),
            ("Replay: close", self.action_close_replay, "q or Esc"),
        ]
