"""The main screen (docs/architecture.md §10): header; chat and prompt on the left; the tool-call table and the
detail of the selected call on the right; the bindings in the footer.

It is fed batches of session events (`apply`), folds each event once into the session's view
model (`view`: rows, records, header, reports, pending requests; tui_app/view_model/) and tells the
widgets what changed. It needs no runtime to render them, so a recorded log can be shown through it
read-only. What the user asks of a live session (a prompt, an
interrupt, a permission mode) goes to `controls` as commands of the session port; without controls
those actions are off.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, ClassVar, Protocol

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer

from tui_app.app.prompt.agent_offers import AgentCommandList, following_mode
from tui_app.app.prompt.intents import NoteToMemory, NotOffered, SendPrompt, ShowCommand, read_intent
from tui_app.runtime.commands import Interrupt, Reply, SelectAgentMode, SessionFacts
from tui_app.runtime.events import SessionStarted, TurnEnded, TurnStarted, Warning
from tui_app.runtime.log.paths import session_dir
from tui_app.view_model.follow import followed_call
from tui_app.view_model.pending import Settled
from tui_app.view_model.session_view import SessionView
from widgets.chat import ChatView
from widgets.detail import DetailPane
from widgets.diff.view import DiffView
from widgets.mention_menu import MentionMenu
from widgets.messages import CallSelected
from widgets.panels.file_tree import FileTree
from widgets.panels.side import SidePanels
from widgets.prompt_input import PromptInput
from widgets.session_header import SessionHeader
from widgets.slash_menu import SlashMenu
from widgets.text.untrusted import one_line
from widgets.tool_table import ToolTable

STYLES = Path(__file__).resolve().parents[3] / "styles"
#: shift+tab walks these (dontAsk is reachable from the command palette)
MODE_CYCLE = ("default", "acceptEdits", "plan", "bypassPermissions")
MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
#: a batch this big (a resumed log) is folded into the table with one relayout
BULK = 200
TABLE_FILTERS: dict[str, frozenset[str] | None] = {
    "all": None,
    "awaiting approval": frozenset({"awaiting approval"}),
    "running": frozenset({"running"}),
    "failed or denied": frozenset({"failed", "denied"}),
    "done": frozenset({"done"}),
    "cancelled": frozenset({"cancelled"}),
}


class SessionControls(Protocol):
    """What the screen may ask of a live session: commands of its port, and its facts
    (thread-safe; implemented over the runner by `app.controls.SessionClient`)."""

    mode: str
    #: the facts as last fetched (None before the session started)
    known: SessionFacts | None

    @property
    def busy(self) -> bool: ...

    @property
    def commands(self) -> list[Any]: ...

    def send(self, command: Any) -> Future[Reply]: ...

    async def ask(self, command: Any) -> Reply: ...

    async def refresh(self) -> SessionFacts: ...

    def set_mode(self, mode: str) -> Future[Reply]: ...


class MainScreen(Screen[None]):
    CSS_PATH = str(STYLES / "main.tcss")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "Interrupt"),
        Binding("shift+tab", "cycle_mode", "Mode", priority=True),
        Binding("ctrl+o", "open_artifact", "Artifact"),
        Binding("ctrl+t", "focus('table')", "Table", show=False),
        Binding("ctrl+e", "focus('prompt')", "Prompt", show=False),
        Binding("ctrl+g", "follow", "Follow", show=False),
        Binding("ctrl+b", "toggle_panel('files')", "Files", show=False),
        Binding("ctrl+l", "toggle_panel('plan')", "Plan", show=False),
        Binding("f2", "open_settings", "Settings", show=False),
    ]
    #: at 100 columns and below an open side panel takes the place of the table and the detail
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [(0, "-narrow"), (101, "-wide")]
    LIVE_ACTIONS = frozenset({"interrupt", "cycle_mode"})

    def __init__(self, controls: SessionControls | None = None, *, cwd: str | None = None,
                 cwd_label: str | None = None, tag: str = "", history: list[str] | None = None,
                 table_clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self.controls = controls
        self.cwd = cwd
        self.cwd_label = cwd_label
        self.tag = tag
        self.prompt_history = history or []
        self.table_clock = table_clock
        #: the detail pane follows the newest running or waiting call until the user picks one
        self.follow = True
        self._auto_selected: str | None = None
        #: highlight messages still to come back from the table for our own selections
        self._echoes: list[str] = []
        #: the session as the screen shows it, every event folded once
        self.view = SessionView(tag=tag, cwd=cwd or "")

    # ---- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        view = self.view
        yield SessionHeader(view.header, cwd_label=self.cwd_label, id="header")
        with Horizontal(id="main-body"):
            yield SidePanels(view.files, cwd=self.cwd, id="side-panels")
            with Vertical(id="left"):
                yield ChatView(view.rows, cwd=self.cwd, id="chat")
                yield SlashMenu(id="slash-menu")
                yield MentionMenu(id="mention-menu")
                yield PromptInput(history=self.prompt_history, id="prompt")
            with Vertical(id="right"):
                yield ToolTable(view.rows, cwd=self.cwd, clock=self.table_clock, id="table")
                yield DetailPane(view.records, cwd=self.cwd, artifact_hint="ctrl+o opens it in the artifact browser",
                                 clock=self.table_clock, id="detail")
        yield Footer()

    def on_screen_resume(self) -> None:
        # back from the palette, the artifact browser or a dialog: what waited meanwhile opens now
        show = getattr(self.app, "show_waiting_dialogs", None)
        if show is not None:
            self.call_after_refresh(show)

    def on_mount(self) -> None:
        prompt = self.prompt
        if self.controls is None:
            prompt.display = False
            self.table.focus()
        else:
            from tui_app.app.prompt.mention_actions import ChainedCompleter, mention_picker
            from tui_app.app.prompt.shell_actions import ShellModeMarker
            from tui_app.app.prompt.slash_actions import SlashCompleter

            # `@` picks a file of the project, `/` completes a command, a `!` line runs in the user's shell
            self.completer = ChainedCompleter(mention_picker(self.query_one(MentionMenu), prompt, lambda: self.cwd),
                                              SlashCompleter(self.query_one(SlashMenu), prompt, self._offered_commands),
                                              ShellModeMarker(prompt))
            prompt.completer = self.completer
            prompt.focus()

    def _offered_commands(self) -> Any:
        """What the prompt box completes: the agent's commands as it last reported them, else the
        session's (its facts)."""
        reported = self.view.reports.agent_commands
        if reported is not None:
            return AgentCommandList(reported.commands)
        found = self.controls.commands if self.controls is not None else []
        return AgentCommandList(found) if found else None

    @property
    def header(self) -> SessionHeader:
        return self.query_one(SessionHeader)

    @property
    def chat(self) -> ChatView:
        return self.query_one(ChatView)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def table(self) -> ToolTable:
        return self.query_one(ToolTable)

    @property
    def detail(self) -> DetailPane:
        return self.query_one(DetailPane)

    @property
    def session_id(self) -> str:
        return self.view.header.session_id

    @property
    def mode(self) -> str:
        return self.view.header.mode

    # ---- feeding ----------------------------------------------------------------------------

    async def apply(self, events: Sequence[Any], bulk: bool = False) -> list[Settled]:
        """Show a batch of session events (in order); `bulk`: part of a longer catch-up (a
        replay), so the table is laid out once per batch, not once per new row. Returns the
        requests the batch settled (the dialogs showing them close)."""
        if not events:
            return []
        view = self.view
        changes = [view.apply(event) for event in events]
        if any(change.header for change in changes):
            self.header.redraw()
        table, detail, chat = self.table, self.detail, self.chat
        rows = [change.row for change in changes if change.row is not None]
        if bulk:
            table.mark_stale()  # the caller settles the table when it has caught up
        elif len(events) >= BULK:
            table.show_rows(rows)
        else:
            for row in rows:
                table.show_row(row)
        busy: bool | None = None
        async with chat.mounting_together():
            for event, change in zip(events, changes, strict=True):
                if change.records:
                    detail.show_change(event, change.records)
                await chat.show(event, change.row)
                if isinstance(event, TurnStarted):
                    self.follow = True
                    busy = True
                elif isinstance(event, TurnEnded):
                    busy = False
                elif isinstance(event, SessionStarted):
                    self.cwd = self.cwd or event.cwd
                elif isinstance(event, Warning) and event.code == "log_write_failed" and self.controls is not None:
                    self.notify(event.message, title="The session log could not be written", severity="error",
                                timeout=30, markup=False)
        self.query_one(SidePanels).show([change.files for change in changes if change.files is not None])
        if busy is not None and self.controls is not None:  # a class change restyles the prompt: once
            self.prompt.set_class(busy, "-busy")
        focus_call = followed_call(events, self._auto_selected, view.rows)
        if self.follow and focus_call is not None:
            self._auto_select(focus_call)
        return [settled for change in changes for settled in change.settled]

    def _auto_select(self, call_id: str) -> None:
        self._auto_selected = call_id
        if call_id in self.table.visible_call_ids:  # never lift a filter the user chose
            self._echoes.append(call_id)
            self.table.select(call_id)
        self.detail.show(call_id)

    # ---- the user picks a call --------------------------------------------------------------

    def on_call_selected(self, message: CallSelected) -> None:
        """Enter or a click in the table, or a summary line in the chat."""
        message.stop()
        self.follow = False
        self._auto_selected = None
        self.table.select(message.call_id)
        self.detail.show(message.call_id)

    def on_tool_table_call_highlighted(self, message: ToolTable.CallHighlighted) -> None:
        message.stop()
        if message.call_id in self._echoes:
            self._echoes.remove(message.call_id)  # our own selection coming back
        else:
            self.follow = False
        if self.detail.call_id != message.call_id:
            self.detail.show(message.call_id)

    def action_follow(self) -> None:
        """Follow the newest call again."""
        self.follow = True
        rows = self.table.rows.rows
        active = [r for r in rows if r.state in ("awaiting approval", "running")] or rows[-1:]
        if active:
            self._auto_select(active[-1].call_id)

    # ---- prompt -----------------------------------------------------------------------------

    def on_text_area_changed(self, message: PromptInput.Changed) -> None:
        completer = getattr(self, "completer", None)
        if completer is not None and message.text_area is self.prompt:
            completer.update()

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        message.stop()
        if self.controls is None:
            return
        failure = self.view.header.log_failure
        if failure:
            self.notify(f"The session log cannot be written ({failure}), so no turn can run. Free some space, "
                        f"quit, and continue with `vigil --resume {self.session_id}`. Your prompt is kept.",
                        severity="error", markup=False)
            return
        self.submit_text(message.text)

    def submit_text(self, text: str) -> None:
        """Enter on `text` (or the palette running a command): its intent is posted, and handled below."""
        if self.controls is not None:
            self.post_message(read_intent(text, self.controls.known))

    def on_send_prompt(self, message: SendPrompt) -> None:
        from tui_app.app.prompt.slash_actions import send_prompt

        message.stop()
        self.run_worker(send_prompt(self, message.text), group="prompt")

    def on_show_command(self, message: ShowCommand) -> None:
        from tui_app.app.prompt.slash_actions import show_command

        message.stop()
        self.run_worker(show_command(self, message.name, message.arguments, message.text), group="slash")

    def on_note_to_memory(self, message: NoteToMemory) -> None:
        from tui_app.app.prompt.slash_actions import ask_where_to_note

        message.stop()
        ask_where_to_note(self, message.text)

    def on_not_offered(self, message: NotOffered) -> None:
        message.stop()
        self.notify(message.message, severity="warning", markup=False, timeout=8)  # the text stays in the box

    # ---- turn control -----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.controls is not None or action not in self.LIVE_ACTIONS

    def action_interrupt(self) -> None:
        if self.controls is not None and self.controls.busy:
            self.controls.send(Interrupt())
            self.notify("Interrupting: running calls are cancelled, the rest are not started.", markup=False)

    def action_cycle_mode(self) -> None:
        if self.controls is None:
            return
        offered = self.view.reports.agent_modes
        if offered is not None and offered.modes:  # the agent's own modes (ACP)
            self.set_agent_mode(following_mode(offered.modes, offered.mode))
            return
        current = self.controls.mode
        following = MODE_CYCLE[(MODE_CYCLE.index(current) + 1) % len(MODE_CYCLE)] if current in MODE_CYCLE \
            else MODE_CYCLE[0]
        self.set_mode(following)

    def set_agent_mode(self, mode_id: str | None) -> None:
        offered = self.view.reports.agent_modes
        if mode_id is None or self.controls is None or offered is None:
            return
        self.controls.send(SelectAgentMode(mode_id=mode_id))
        name = next((m.name for m in offered.modes if m.id == mode_id), mode_id)
        self.notify(f"{offered.agent} mode: {name}", markup=False, timeout=2)

    def set_mode(self, mode: str) -> None:
        if self.controls is None or mode not in MODES:
            return
        self.controls.set_mode(mode)
        self.notify(f"Permission mode: {mode}", markup=False, timeout=2)

    # ---- views ------------------------------------------------------------------------------

    def action_focus(self, what: str) -> None:
        target = {"table": self.table, "prompt": self.prompt, "chat": self.chat, "detail": self.detail}[what]
        if what == "detail":
            self._focus_detail()
        elif target.display:
            target.focus()

    def _focus_detail(self) -> None:
        pane = self.detail
        active = pane.active_tab
        widget = pane.query_one(f"#detail-{active}")
        widget.focus()

    def action_tab(self, name: str) -> None:
        self.detail.action_tab(name)

    def action_toggle_split(self) -> None:
        self.detail.query_one("#detail-diff", DiffView).action_toggle_split()

    def filter_table(self, name: str) -> None:
        states = TABLE_FILTERS.get(name)
        self.table.set_filter(states, self.table.tool_filter if name != "all" else None)

    def filter_table_by_tool(self) -> None:
        self.table.action_toggle_tool_filter()

    # ---- side panels ------------------------------------------------------------------------

    def action_toggle_panel(self, name: str) -> None:
        from tui_app.app.panels import toggle_panel

        toggle_panel(self, name)

    def action_open_settings(self) -> None:
        from tui_app.app.screens.settings_editor import open_settings

        open_settings(self)

    def on_file_tree_file_chosen(self, message: FileTree.FileChosen) -> None:
        from tui_app.app.panels import open_file

        message.stop()
        open_file(self, message.path)

    def on_file_tree_reload_wanted(self, message: FileTree.ReloadWanted) -> None:
        from tui_app.app.panels import reload_files

        message.stop()
        reload_files(self)

    # ---- artifacts --------------------------------------------------------------------------

    def artifacts_dir(self) -> Path | None:
        return session_dir(self.session_id) / "artifacts" if self.session_id else None

    def action_open_artifact(self) -> None:
        """The selected call's artifact in the artifact browser (the session's list when it has none)."""
        record = self.detail.record
        artifacts = list(record.outcome.artifacts) if record is not None and record.outcome is not None else []
        self.open_artifacts(artifacts[0].path if artifacts else None)

    def action_open_artifacts(self) -> None:
        self.open_artifacts(None)

    def open_artifacts(self, path: str | None) -> None:
        from tui_app.app.screens.artifacts import ArtifactBrowserScreen

        directory = self.artifacts_dir()
        if directory is None or not directory.is_dir():
            if path is None:
                self.notify("This session has no artifacts yet.", markup=False)
                return
            directory = None
        if path is not None and not Path(path).is_file():
            self.notify(f"The artifact file is gone: {one_line(path, 200)}", severity="warning", markup=False)
            return
        self.app.push_screen(ArtifactBrowserScreen(self.session_id or None, directory, path=path))

