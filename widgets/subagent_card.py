"""A subagent in the chat: one card per subagent with its type, task and progress — the calls it
made and the one running, its steps — and, once it ended, the start of its answer. Enter or a click
opens its Agent call in the table and the detail pane (the table lists every call it made). The card
is an entry of the virtual chat (widgets/chat_entry.py).

`SubagentProgress` is the plain view-model (no Textual): folding the same events always gives the
same card, which a replay stepping back relies on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.content import Content
from textual.strip import Strip

from tui_app.view_model.tool_rows import CANCELLED_CODES, target_of_input
from widgets.chat_entry import ChatEntry, EntryHost, blank, wrapped, wrapped_height
from widgets.messages import CallSelected
from widgets.text.formatting import fmt_duration
from widgets.text.line_render import content_strip
from widgets.text.untrusted import one_line, plain

#: lines of the final answer the card shows
ANSWER_LINES = 3
ENDINGS = {"completed": ("✓", "$text-success"), "stopped": ("✓", "$text-success"),
           "interrupted": ("–", "$foreground 60%"), "error": ("✗", "$text-error"), "max_turns": ("✗", "$text-error")}


@dataclass
class SubagentProgress:
    agent_id: str
    call_id: str
    subagent_type: str
    description: str
    steps: int = 0
    calls: int = 0
    failed: int = 0
    #: the call running (or asking) now: "Grep add\\("
    current: str = ""
    waiting: bool = False
    reason: str | None = None
    answer: str = ""
    duration_ms: int = 0
    _names: dict[str, str] = field(default_factory=dict)

    @classmethod
    def started(cls, event: Any) -> SubagentProgress:
        return cls(event.agent_id, event.call_id or "", event.subagent_type, event.description)

    def apply(self, event: Any) -> bool:
        """Fold in one of the subagent's events; True when the card changed."""
        kind = event.type
        if kind == "ModelStepStarted":  # the calls before it are done: the subagent thinks again
            self.steps += 1
            self.current, self.waiting = "", False
        elif kind == "ToolCallRequested":
            self.calls += 1
            self._names[event.call_id or ""] = f"{event.name} {target_of_input(event.input)}".strip()
            self.current = self._names[event.call_id or ""]
        elif kind == "PermissionRequested":
            self.waiting = True
            self.current = self._names.get(event.call_id or "", event.tool)
        elif kind in ("ToolCallStarted", "PermissionResolved"):
            self.waiting = False
        elif kind == "ToolCallError":
            if event.code in CANCELLED_CODES:
                return False  # an interrupt's doing, not the call's
            self.failed += 1
        elif kind == "SubagentEnded":
            self.reason, self.answer, self.duration_ms = event.reason, event.result, event.duration_ms
            self.current, self.waiting = "", False
        else:
            return False
        return True

    @property
    def running(self) -> bool:
        return self.reason is None


class SubagentCard(ChatEntry):
    """The card of one subagent in the chat (an entry of the virtual chat)."""

    interactive = True

    def __init__(self, progress: SubagentProgress, position: int = 0) -> None:
        super().__init__(position)
        self.progress = progress

    @property
    def agent_id(self) -> str:
        return self.progress.agent_id

    def show(self, progress: SubagentProgress | None = None) -> None:
        """Show `progress` (a replay stepping back folds it again), or what changed in it."""
        if progress is not None:
            self.progress = progress
        self.changed()

    def content(self) -> Content:
        p = self.progress
        glyph, style = ENDINGS.get(p.reason or "", ("⇉", "bold $text-primary"))
        head = Content.assemble((f"{glyph} ", style), (one_line(p.subagent_type, 30), "bold"),
                                (" subagent · ", "$foreground 60%"), plain(one_line(p.description, 80), "bold"))
        counts = f"{p.steps} step{'s' if p.steps != 1 else ''} · {p.calls} call{'s' if p.calls != 1 else ''}"
        if p.failed:
            counts += f" ({p.failed} failed)"
        if p.running:
            state = "waiting for you: " if p.waiting else "running: " if p.current else "thinking"
            detail = Content.assemble(("  " + counts + " · ", "$foreground 70%"),
                                      (state, "$text-warning" if p.waiting else "$text-primary"),
                                      plain(one_line(p.current, 100)))
            return Content("\n").join([head, detail])
        ended = f"  {p.reason} · {counts} · {fmt_duration(p.duration_ms)}"
        lines = [head, Content.styled(ended, "$foreground 70%")]
        answer = [line for line in p.answer.strip().splitlines() if line.strip()]
        for line in answer[:ANSWER_LINES]:
            lines.append(Content.assemble("  ", plain(one_line(line, 200))))
        if len(answer) > ANSWER_LINES:
            lines.append(Content.styled(f"  … {len(answer) - ANSWER_LINES} more lines: enter opens the Agent call",
                                        "$foreground 60%"))
        return Content("\n").join(lines)

    def render(self, chat: EntryHost, width: int, cursor: bool) -> list[Strip]:
        # two cells in, a thick edge on the left, on a tinted ground; a blank line below
        edge = chat.entry_style("card-edge")
        body = wrapped(Content.assemble(" ", self.content(), " "), max(1, width - 3), chat.entry_style("card", cursor))
        base = chat.entry_style("base")
        lines = [Strip.join([content_strip(Content("  "), base), content_strip(Content("▌"), edge), line])
                 for line in body]
        return [*lines, blank(chat, width)]

    def estimate(self, width: int) -> int:
        return wrapped_height(self.content().plain, max(1, width - 4)) + 1

    def activate(self, chat: EntryHost) -> None:
        chat.post_message(CallSelected(self.progress.call_id))


def fold_subagents(events: Any) -> dict[str, SubagentProgress]:
    """Every subagent's progress after these events."""
    found: dict[str, SubagentProgress] = {}
    for event in events:
        agent_id = getattr(event, "agent_id", None)
        if agent_id is None:
            continue
        if event.type == "SubagentStarted":
            found[agent_id] = SubagentProgress.started(event)
        elif agent_id in found:
            found[agent_id].apply(event)
    return found
