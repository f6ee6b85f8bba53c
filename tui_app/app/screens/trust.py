"""Trust before code: the project's own files would run commands on this machine (its
`.mcp.json` servers, the hooks of its settings files). Opened by the session's
ProjectTrustAsked, while its start waits, so nothing of it has run yet; the answer goes back as
AnswerTrust and is remembered for these files (see `project_trust`).

Everything listed comes from the project: untrusted text, shown plain and on one line each.
"Don't trust" has the focus: a key typed ahead never trusts a project.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from widgets.text.untrusted import one_line

MAX_LINES = 40


class TrustScreen(ModalScreen[bool]):
    """Dismissed with True (trust the project) or False (start without its hooks and servers)."""

    DEFAULT_CSS = """
    TrustScreen { align: center middle; }
    TrustScreen > Vertical { width: 96; max-width: 100%; height: auto; max-height: 90%; border: thick $warning;
                             background: $surface; padding: 1 2; }
    TrustScreen #trust-list { height: auto; max-height: 20; margin: 1 0; }
    TrustScreen #trust-buttons { height: auto; margin-top: 1; }
    TrustScreen Button { margin-right: 2; }
    """
    AUTO_FOCUS = "#distrust"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "choose(True)", "Trust", show=False),
        Binding("n,escape", "choose(False)", "Don't trust", show=False),
    ]

    def __init__(self, project: str, items: list[dict[str, str]]) -> None:
        super().__init__()
        self.project = project
        #: each {kind, name, command, source} (ProjectTrustAsked's items)
        self.trust_items = items

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.styled("Trust this project?", "bold $text-warning"))
            yield Static(Content.assemble(
                (one_line(self.project, 80), "bold"),
                " asks to run these commands on this machine, outside the sandbox, as soon as the session "
                "starts and whenever its hooks fire:"))
            with VerticalScroll(id="trust-list"):
                for item in self.trust_items[:MAX_LINES]:
                    name = item.get("name", "")
                    what = f"{name} hook" if item.get("kind") == "hook" else f"MCP server {name}"
                    yield Static(Content.assemble(("• " + one_line(what, 40), "bold"), "  ",
                                                  one_line(item.get("command", ""), 300)), classes="trust-item")
                if len(self.trust_items) > MAX_LINES:
                    yield Static(f"… and {len(self.trust_items) - MAX_LINES} more")
            yield Static("Only trust a project whose files you know. Trust is remembered for these files; "
                         "if one of them changes, Vigil asks again. Without trust the session starts without "
                         "them.")
            with Horizontal(id="trust-buttons"):
                yield Button("Don't trust (n)", id="distrust", variant="primary")
                yield Button("Trust (t)", id="trust", variant="warning")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "trust")

    def action_choose(self, trusted: bool) -> None:
        self.dismiss(trusted)
