"""The replay's timeline: where in the recorded session the screen stands, and a track of the whole
log with its turns marked.

    event 134 of 512 · turn 2 of 3 · 14:02:11 ToolCallStarted Bash          ← → event  [ ] turn …
    ├────┼━━━━━━━━━━━━━━━━━━━━●───────────────┼────────────────────────────────┤

It renders a `Moment` (tui_app/replay_timeline.py); the log's text in it is untrusted.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widget import Widget

from widgets.replay_timeline import Moment
from widgets.text.line_render import load_css
from widgets.text.untrusted import one_line

HINT = "←→ event · [ ] turn · Home/End"


def track(position: int, total: int, turn_starts: Sequence[int], width: int) -> Content:
    """One line: what has happened (heavy), the cursor (●), what is to come (light), turn starts (┼)."""
    if width < 3:
        return Content("")
    inner = width - 2

    def cell(at: int) -> int:
        return 0 if total <= 0 else min(inner - 1, at * inner // max(total, 1))

    cursor = cell(position) if total else 0
    turns = {cell(start - 1) for start in turn_starts}
    parts: list[tuple[str, str]] = [("├", "$foreground 50%")]
    for x in range(inner):
        if x == cursor:
            parts.append(("●", "bold $text-accent"))
        elif x in turns:
            parts.append(("┼", "bold $text-primary" if x < cursor else "$text-primary 70%"))
        elif x < cursor:
            parts.append(("━", "$text-accent"))
        else:
            parts.append(("─", "$foreground 40%"))
    parts.append(("┤", "$foreground 50%"))
    return Content.assemble(*parts)


def label(moment: Moment) -> Content:
    sep = (" · ", "$foreground 50%")
    turn = f"turn {moment.turn} of {moment.turns}" if moment.turns else "no turns"
    parts: list[tuple[str, str] | Content | str] = [
        (f"event {moment.position:,} of {moment.total:,}", "bold"), sep, (turn, "bold"), sep]
    if moment.clock:
        parts += [(moment.clock, "$foreground 70%"), " "]
    if moment.kind:
        parts += [(moment.kind, "bold $text-primary"), " "]
    parts.append(Content(one_line(moment.detail, 120)))
    return Content.assemble(*parts)


class TimelineBar(Widget):
    DEFAULT_CSS = load_css("timeline_bar")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.moment = Moment(0, 0, 0, 0, "", "", "")
        self.turn_starts: list[int] = []
        #: a warning about the log itself (a torn last line), shown under the track
        self.note = ""
        #: the screen is still applying events to get there (a long log)
        self.catching_up = False

    def show(self, moment: Moment, turn_starts: Sequence[int], note: str = "") -> None:
        self.moment, self.turn_starts = moment, list(turn_starts)
        if note != self.note:
            self.note = note
            self.refresh(layout=True)
        else:
            self.refresh()

    def get_content_height(self, container, viewport, width: int) -> int:  # type: ignore[no-untyped-def]
        return 3 if self.note else 2

    def render(self) -> Content:
        width = self.content_region.width or self.size.width
        head = label(self.moment)
        if self.catching_up:
            head = Content.assemble(head, ("  · catching up…", "bold $text-warning"))
        hint = Content.styled(HINT, "$foreground 50%")
        gap = width - head.cell_length - hint.cell_length
        top = Content.assemble(head, " " * gap, hint) if gap >= 2 else head
        lines = [top, track(self.moment.position, self.moment.total, self.turn_starts, width)]
        if self.note:
            note = Content.styled(one_line(self.note), "$text-warning")
            lines.append(Content.assemble(("⚠ ", "bold $text-warning"), note))
        return Content("\n").join(lines)
