""""Add directory": one more working directory for this session (Claude Code's `/add-dir`).

Reads and writes there no longer ask about where they are, acceptEdits covers it, and sandboxed
commands may write there. The path is checked before it is handed over: it must be a directory
(`~` and paths relative to the session's cwd are fine). Typed text is shown as plain text."""

from __future__ import annotations

import os
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from widgets.text.line_render import load_css
from widgets.text.untrusted import one_line

EXPLAIN = ("A working directory: reads and writes there do not ask about where they are, acceptEdits "
           "covers it, and sandboxed commands may write there. For this session only "
           "(permissions.additionalDirectories in settings keeps it). Enter adds, Esc cancels.")


def resolve_directory(text: str, cwd: str) -> tuple[str | None, str]:
    """(the absolute directory, "") or (None, why not)."""
    text = text.strip()
    if not text:
        return None, "Type a directory."
    if "\x00" in text:
        return None, "A path cannot contain a NUL byte."
    path = os.path.realpath(os.path.join(cwd, os.path.expanduser(text)))
    if not os.path.isdir(path):
        return None, f"Not a directory: {path}"
    return path, ""


class AddDirectoryScreen(ModalScreen[str | None]):
    DEFAULT_CSS = load_css("add_directory")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, cwd: str, current: list[str] | None = None) -> None:
        super().__init__()
        self.cwd = cwd
        self.current = current or []

    def compose(self) -> ComposeResult:
        with Vertical(id="add-dir-box"):
            yield Static(Content("Add a working directory"), id="add-dir-title")
            yield Static(Content(EXPLAIN), id="add-dir-help")
            if self.current:
                yield Static(Content("Now: " + one_line(", ".join(self.current), 400)), id="add-dir-current")
            yield Input(placeholder="../shared-lib or ~/src/lib", id="add-dir-input")
            yield Static(Content(""), id="add-dir-error")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        path, why = resolve_directory(event.value, self.cwd)
        if path is None:
            self.query_one("#add-dir-error", Static).update(Content(one_line(why, 300)))
            return
        self.dismiss(path)

    def action_cancel(self) -> None:
        self.dismiss(None)
