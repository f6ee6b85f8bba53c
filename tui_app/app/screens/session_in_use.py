"""A `vigil --resume ID` of a session another Vigil is writing: only one writer may hold a session,
so the TUI offers to show it read-only instead (what it holds so far, nothing executed)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from widgets.text.untrusted import one_line


class SessionInUseScreen(ModalScreen[bool]):
    """Dismissed with True to open the session read-only, False to quit."""

    DEFAULT_CSS = """
    SessionInUseScreen { align: center middle; }
    SessionInUseScreen > Vertical { width: 76; height: auto; border: thick $error; background: $surface;
                                    padding: 1 2; }
    SessionInUseScreen #in-use-buttons { height: auto; margin-top: 1; }
    SessionInUseScreen Button { margin-right: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r,enter", "choose(True)", "Read-only", show=False),
        Binding("q,escape", "choose(False)", "Quit", show=False),
    ]

    def __init__(self, session_id: str, pid: int | None) -> None:
        super().__init__()
        self.session_id = session_id
        self.pid = pid

    def compose(self) -> ComposeResult:
        holder = f"process {self.pid}" if self.pid else "another process"
        with Vertical():
            yield Static(Content.styled("This session is open in another Vigil", "bold $text-error"))
            yield Static(Content.assemble(
                "Session ", (one_line(self.session_id, 60), "bold"), f" is being written by {holder}. Only one "
                "Vigil may write a session at a time, so it cannot be resumed here.\n\n"
                "You can look at it read-only: what it holds so far, with its timeline; nothing is run."))
            with Horizontal(id="in-use-buttons"):
                yield Button("Open read-only (r)", id="read-only", variant="primary")
                yield Button("Quit (q)", id="quit")

    def on_mount(self) -> None:
        self.query_one("#read-only", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "read-only")

    def action_choose(self, read_only: bool) -> None:
        self.dismiss(read_only)
