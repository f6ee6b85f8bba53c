"""Small screens the slash commands open: a read-only report (`InfoScreen`: /help, /memory,
/agents, /permissions, /cost) and a pick-one list (`ChoiceScreen`: where a `#` note goes). Their
text can come from files (command descriptions, paths): lines are Content built from plain text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from widgets.text.formatting import tilde
from widgets.text.line_render import load_css
from widgets.text.text_view import TextView
from widgets.text.untrusted import one_line, plain


class InfoScreen(ModalScreen[None]):
    DEFAULT_CSS = load_css("info")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss", "Close")]

    def __init__(self, title: str, lines: Sequence[Content]) -> None:
        super().__init__()
        self.title_text = title
        self.lines = list(lines)

    def compose(self) -> ComposeResult:
        with Vertical(id="info-box"):
            yield Static(Content.assemble(plain(self.title_text), " — Esc closes"), id="info-title")
            yield TextView(id="info-report")
        yield Footer()

    def on_mount(self) -> None:
        view = self.query_one(TextView)
        view.set_lines(self.lines)
        view.focus()


class ChoiceScreen(ModalScreen[Any]):
    """Pick one of `choices` ((label, value) pairs); Esc picks nothing (None)."""

    DEFAULT_CSS = load_css("info")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: Content, choices: Sequence[tuple[Content, Any]]) -> None:
        super().__init__()
        self.title_content = title
        self.choices = list(choices)

    def compose(self) -> ComposeResult:
        with Vertical(id="choice-box"):
            yield Static(self.title_content, id="choice-title")
            yield OptionList(*[Option(label, id=str(i)) for i, (label, _) in enumerate(self.choices)])
            yield Static(Content.from_markup("[b]↑↓[/b] move   [b]enter[/b] choose   [b]esc[/b] cancel"),
                         id="choice-keys")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.choices[event.option_index][1])

    def action_cancel(self) -> None:
        self.dismiss(None)


def memory_lines(reports: list[Any]) -> list[Content]:
    if not reports:
        return [Content("No memory report: the session has not started.")]
    report = reports[-1]
    rows: list[Content] = []
    for entry in report.files:
        origin = f"   imported by {tilde(str(entry.get('imported_from')))}" if entry.get("imported_from") else ""
        rows.append(Content.assemble((f"{entry.get('scope', '?'):<8}", "$foreground 60%"),
                                     plain(one_line(tilde(str(entry.get("path", ""))), 200), "bold"),
                                     (f"  {entry.get('bytes', 0):,} bytes", "$foreground 60%"),
                                     plain(one_line(origin, 200), "$foreground 60%")))
    if not rows:
        rows = [Content("No memory files: none of ~/.claude/CLAUDE.md, CLAUDE.md, .claude/CLAUDE.md, AGENTS.md or "
                        "CLAUDE.local.md exists here.")]
    problems = [Content.assemble(("  ✗ ", "bold $text-error"), plain(one_line(p, 300))) for p in report.problems]
    tail = [Content(""), Content.styled("Problems:", "bold $text-error"), *problems] if problems else []
    return [Content.styled("In the system prompt, in this order:", "bold"), *rows, *tail, Content(""),
            Content("A line that starts with # in the prompt box adds a note to one of them.")]
