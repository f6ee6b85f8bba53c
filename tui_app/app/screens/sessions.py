"""The session browser: every recorded session, newest first, filtered as you type.

Dismisses with the chosen session id (or None). Session text (prompts, paths) is untrusted and goes
into the table as `Text`, never as markup.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Input, Static

from tui_app.runtime.log.catalog import SessionSummary, list_sessions
from tui_app.runtime.results.sanitize import neutralize
from widgets.text.line_render import load_css

COLUMNS = ("started", "turns", "status", "model", "directory", "first prompt", "id")


def _cell(text: str, limit: int = 80) -> Text:
    text = neutralize(text).replace("\n", " ")
    return Text(text if len(text) <= limit else text[: limit - 1] + "…")


def row_of(summary: SessionSummary, live: bool = False) -> tuple[Text, ...]:
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(summary.started)) if summary.started else "?"
    status = Text("● this session", style="bold") if live else _cell(summary.status, 24)
    return (Text(started), Text(str(summary.turns)), status, _cell(summary.model, 28),
            _cell(summary.cwd, 40), _cell(summary.first_prompt, 60), Text(summary.id))


def matches(summary: SessionSummary, needle: str) -> bool:
    needle = needle.strip().lower()
    if not needle:
        return True
    haystack = " ".join((summary.id, summary.cwd, summary.model, summary.provider, summary.first_prompt,
                         summary.status)).lower()
    return all(word in haystack for word in needle.split())


class SessionBrowserScreen(ModalScreen[str | None]):
    DEFAULT_CSS = load_css("sessions")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close"),
                                             Binding("ctrl+f", "focus_filter", "Filter"),
                                             # from the filter box, ↓ goes on into the list (the list keeps ↓)
                                             Binding("down", "to_list", show=False)]

    def __init__(self, sessions: list[SessionSummary] | None = None, *, live_id: str | None = None) -> None:
        super().__init__()
        self._given = sessions
        #: the session running in this app (its log is still being written)
        self.live_id = live_id
        self.sessions: list[SessionSummary] = []

    def compose(self) -> ComposeResult:
        from textual.containers import Vertical

        with Vertical(id="sessions-box"):
            yield Static(Text("Sessions — Enter opens one read-only, Esc closes"), id="sessions-title")
            yield Input(placeholder="filter: words in the prompt, directory, model, status or id", id="filter")
            yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*COLUMNS)
        if self._given is not None:
            self.show(self._given)
        else:
            self.load()

    @work(thread=True, exclusive=True)
    def load(self) -> None:
        sessions = list_sessions()
        self.app.call_from_thread(self.show, sessions)

    def show(self, sessions: list[SessionSummary]) -> None:
        self.sessions = sessions
        self.refilter(self.query_one("#filter", Input).value)

    def refilter(self, needle: str) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for summary in self.sessions:
            if matches(summary, needle):
                table.add_row(*row_of(summary, summary.id == self.live_id), key=summary.id)
        title = self.query_one("#sessions-title", Static)
        shown = table.row_count
        title.update(Text(f"Sessions — {shown} of {len(self.sessions)} · Enter opens one read-only, Esc closes"))

    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        self.refilter(event.value)

    @on(Input.Submitted, "#filter")
    def action_to_list(self) -> None:
        self.query_one(DataTable).focus()

    @on(DataTable.RowSelected)
    def _open(self, event: DataTable.RowSelected) -> None:
        self.dismiss(str(event.row_key.value))

    def action_close(self) -> None:
        self.dismiss(None)

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()
