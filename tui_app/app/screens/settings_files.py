"""Which settings files the session read, in the order it read them, and every problem in them
(file, line, reason), from the session's `SettingsLoaded` report. Paths and reasons are shown as
plain text: a file name or a JSON error message can contain anything."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from widgets.text.formatting import tilde
from widgets.text.line_render import load_css
from widgets.text.text_view import TextView
from widgets.text.untrusted import one_line

ORDER_NOTE = "read lowest priority first: a later file wins for single values; rules and hooks add up"
WHERE = ("Looked for, in this order: ~/.claude/settings.json, the user config dir's vigil/settings.json, then in "
         "the project .claude/settings.json, .vigil/settings.json, .claude/settings.local.json, "
         ".vigil/settings.local.json, then --settings FILE (no .claude files with --no-claude-settings).")


def report_lines(reports: Sequence[Any]) -> list[Content]:
    """The latest report (a resumed session has one per start), numbered in load order."""
    if not reports:
        return [Content("No settings report: the session has not started.")]
    report = reports[-1]
    lines: list[Content] = []
    if len(reports) > 1:
        lines += [Content.styled(f"The latest of {len(reports)} loads (the session was resumed).",
                                 "$foreground 60%"), Content("")]
    if report.files:
        lines.append(Content.styled(f"Loaded ({len(report.files)}), {ORDER_NOTE}:", "bold"))
        for number, path in enumerate(report.files, 1):
            lines.append(Content.assemble((f"{number:>3}  ", "$foreground 60%"), Content(one_line(tilde(path)))))
    else:
        lines.append(Content.styled("No settings files were found: the built-in defaults and the command line apply.",
                                    "bold"))
    lines.append(Content(""))
    if not report.errors:
        lines.append(Content.styled("No problems.", "$text-success"))
    else:
        lines += _problems(report.errors)
    return [*lines, Content(""), Content.styled(WHERE, "$foreground 60%")]


def _problems(errors: Sequence[dict[str, Any]]) -> list[Content]:
    lines = [Content.styled(f"Problems ({len(errors)}): the session started without these parts", "bold $text-error")]
    for error in errors:
        where = tilde(str(error.get("file") or "?"))
        if error.get("line"):
            where += f":{error['line']}"
        lines.append(Content.assemble(("  ✗ ", "bold $text-error"), (one_line(where), "bold")))
        lines.append(Content.assemble("    ", Content(one_line(str(error.get("reason") or "")))))
    return lines


class SettingsFilesScreen(ModalScreen[None]):
    DEFAULT_CSS = load_css("settings_files")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss", "Close")]

    def __init__(self, reports: Sequence[Any]) -> None:
        super().__init__()
        self.reports = list(reports)

    def compose(self) -> ComposeResult:
        with Vertical(id="settings-box"):
            yield Static(Content("Settings files — Esc closes"), id="settings-title")
            yield TextView(id="settings-report")
        yield Footer()

    def on_mount(self) -> None:
        view = self.query_one(TextView)
        view.set_lines(report_lines(self.reports))
        view.focus()
