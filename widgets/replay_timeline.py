"""The timeline of a recorded session: positions, turns, and what happened at each step.

A position N means "the first N events of the log have happened": 0 is before anything, len(events)
is the end. Turns start right after their TurnStarted event, so jumping to a turn shows its prompt.
Plain Python (no Textual): the replay screen renders what this computes.
"""

from __future__ import annotations

import bisect
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tui_app.runtime.results.sanitize import neutralize

#: events after which the main screen may move the detail pane to another call: applying the log in
#: pieces that end at these keeps the selection a live session would have shown
FOCUS_EVENTS = frozenset({"PermissionRequested", "ToolCallStarted", "ToolCallError", "TurnStarted"})


@dataclass(frozen=True)
class Moment:
    """What the timeline bar says about one position."""

    position: int
    total: int
    turn: int
    turns: int
    #: local time of the last event that happened ("" at position 0)
    clock: str
    #: its type, and a few words about it (untrusted: from the log)
    kind: str
    detail: str


class Timeline:
    def __init__(self, events: Sequence[Any]) -> None:
        self.events = list(events)
        self.turn_starts = [i + 1 for i, e in enumerate(self.events) if e.type == "TurnStarted"]
        self.tools = {e.call_id: e.name for e in self.events if e.type == "ToolCallRequested" and e.call_id}
        self._focus_ends = [i + 1 for i, e in enumerate(self.events) if e.type in FOCUS_EVENTS]

    @property
    def end(self) -> int:
        return len(self.events)

    def clamp(self, position: int) -> int:
        return max(0, min(self.end, position))

    def turn_at(self, position: int) -> int:
        """1-based number of the turn under way (or last ended) at `position`; 0 before the first."""
        return bisect.bisect_right(self.turn_starts, position)

    def next_turn(self, position: int) -> int:
        """The start of the next turn, or the end when there is none."""
        at = bisect.bisect_right(self.turn_starts, position)
        return self.turn_starts[at] if at < len(self.turn_starts) else self.end

    def previous_turn(self, position: int) -> int:
        """The start of the turn before `position` (0 when none is)."""
        at = bisect.bisect_left(self.turn_starts, position)
        return self.turn_starts[at - 1] if at > 0 else 0

    def pieces(self, start: int, stop: int) -> list[tuple[int, int]]:
        """[start, stop) cut right after every event that can move the selection."""
        ends = self._focus_ends
        cuts = ends[bisect.bisect_right(ends, start): bisect.bisect_left(ends, stop)]
        return [(a, b) for a, b in itertools.pairwise([start, *cuts, stop]) if b > a]

    def ts_at(self, position: int) -> float:
        """The time of the last event that happened at `position` (the first event's at 0)."""
        if not self.events:
            return 0.0
        return float(self.events[max(0, position - 1)].ts or 0.0)

    def moment(self, position: int) -> Moment:
        position = self.clamp(position)
        turn, turns = self.turn_at(position), len(self.turn_starts)
        if position == 0:
            return Moment(0, self.end, turn, turns, "", "", "before the first event")
        event = self.events[position - 1]
        clock = time.strftime("%H:%M:%S", time.localtime(event.ts)) if event.ts else ""
        return Moment(position, self.end, turn, turns, clock, event.type, self.detail(event))

    def detail(self, event: Any) -> str:
        kind = event.type
        tool = self.tools.get(getattr(event, "call_id", None) or "", "") or getattr(event, "tool", "") or ""
        if kind == "TurnStarted":
            text = event.prompt
        elif kind == "TurnEnded":
            text = event.reason + (f": {event.message}" if event.message else "")
        elif kind == "PermissionResolved":
            text = f"{tool} {event.decision} ({event.decided_by})"
        elif kind == "ToolCallError":
            text = f"{tool} {event.code}"
        elif kind == "ToolCallProgress":
            text = f"{tool} {event.kind}"
        elif kind in ("ToolCallRequested", "ToolCallScheduled", "PermissionRequested", "ToolCallStarted",
                      "ToolCallResult"):
            text = tool
        elif kind == "SessionStarted":
            text = f"{event.provider} {event.model}"
        elif kind in ("AssistantText", "UserMessage"):
            text = event.text
        elif kind == "McpServerStatus":
            text = f"{event.server} {event.status}"
        elif kind == "PermissionModeChanged":
            text = event.mode
        else:
            text = ""
        return " ".join(neutralize(text).split())[:120]
