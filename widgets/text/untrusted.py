"""Untrusted text (tool output, file names, commands, model text) made safe to show.

Textual parses markup in plain strings handed to Static, Label, notify and friends, and `escape()`
does not close every hole (a stray `[/` still raises). So untrusted text only ever reaches the
screen as `Content` built from plain text, after terminal control sequences are neutralised.
Tabs are expanded here too: a tab is a control byte and would move the terminal's cursor.
"""

from __future__ import annotations

from textual.content import Content

from tui_app.runtime.results.sanitize import neutralize

TAB_SIZE = 4


def clean(text: str, tab_size: int = TAB_SIZE) -> str:
    """Control sequences removed, tabs expanded, newlines kept."""
    text = neutralize(text)
    return text.expandtabs(tab_size) if "\t" in text else text


def one_line(text: str, limit: int | None = None) -> str:
    """For cells and summaries: line breaks become a visible `⏎`, so a multi-line command can never
    hide its second line behind the first."""
    text = clean(text).strip("\n")
    if "\n" in text:
        text = " ⏎ ".join(part.strip() for part in text.split("\n"))
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    return text


def plain(text: str, style: str = "") -> Content:
    """Untrusted text as Content: shown literally, never parsed as markup."""
    return Content.styled(clean(text), style) if style else Content(clean(text))


def plain_line(text: str, style: str = "", limit: int | None = None) -> Content:
    line = one_line(text, limit)
    return Content.styled(line, style) if style else Content(line)
