"""The agent's plan: its todo list as TodoWrite last wrote it (ACP's `plan` entries have the same
shape: content, status), one line per entry with its state, the one in progress in its active
form. Entries come from the model: plain text, never markup."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.content import Content
from textual.widgets import Static

from widgets.text.line_render import load_css
from widgets.text.untrusted import one_line, plain

GLYPHS = {"pending": ("○", "$foreground 60%"), "in_progress": ("◐", "bold $warning"),
          "completed": ("●", "$success")}
EMPTY = "No plan yet: the agent's todo list shows here when it writes one."


class PlanPanel(Static):
    DEFAULT_CSS = load_css("panels")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Content.styled(EMPTY, "$foreground 50%"), id=id)
        self.entries: list[dict[str, Any]] = []

    def set_entries(self, entries: Sequence[dict[str, Any]]) -> None:
        self.entries = [dict(e) for e in entries]
        done = sum(1 for e in self.entries if e.get("status") == "completed")
        self.border_title = f"plan · {done}/{len(self.entries)} done" if self.entries else "plan"
        if not self.entries:
            self.update(Content.styled(EMPTY, "$foreground 50%"))
            return
        lines = []
        for entry in self.entries:
            status = str(entry.get("status", "pending"))
            glyph, style = GLYPHS.get(status, GLYPHS["pending"])
            text = entry.get("activeForm") if status == "in_progress" and entry.get("activeForm") else \
                entry.get("content", "")
            body = plain(one_line(str(text), 300), "strike $foreground 50%" if status == "completed" else
                         "bold" if status == "in_progress" else "")
            lines.append(Content.assemble(Content.styled(glyph, style), " ", body))
        self.update(Content("\n").join(lines))
