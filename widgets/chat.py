"""The chat pane: prompts, the assistant's text as Markdown (streamed), one line per tool call
(Enter or a click opens it), the model's thinking, and errors.

A virtual, line-based view (like the table): the chat holds its entries as plain objects and
renders only the lines on screen, each entry's lines cached until it changes. A chat of
thousands of entries costs what one screen of them costs, so a replay opens at once and every
entry stays in the chat (a chat of widgets had to drop all but the last 150: each mount walked
every child, and a 5,300-event replay took seconds to open).

Until an entry has been on screen its height is estimated from its text; it is measured when it
first comes into view (the scrollbar may then move a little, the lines on screen do not).

Keys: up/down move between call lines and thinking notes (or scroll when there are none),
Enter opens the call or unfolds the thinking; page up/down, home/end scroll.

Model text is untrusted: control sequences are neutralised before it reaches the Markdown parser,
nothing is ever parsed as Textual or Rich markup, and links are shown as text (never opened).

For screens and other helpers the interface is `apply(event)`, `add_notice(text, kind)`,
`mounting_together()` (a batch: one layout at its end), `rewind(events)`, `call_line(call_id)`
and `entries`; a new kind of entry subclasses `ChatEntry` (its `render`, and `activate` when it
can be opened; see widgets/chat_entry.py) and is added with `add_entry`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, ClassVar, TypeVar

from rich.markdown import Markdown as RichMarkdown
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.style import Style

from tui_app.runtime.events import (
    AssistantText,
    AssistantTextDelta,
    AssistantThinking,
    AssistantThinkingDelta,
    ConversationCompacted,
    FileChangedExternally,
    ModelRetry,
    ModelStepEnded,
    SubagentStarted,
    TurnEnded,
    TurnStarted,
    UserMessage,
    Warning,
)
from tui_app.runtime.messages import thinking_text
from tui_app.runtime.results.sanitize import neutralize
from tui_app.view_model.tool_rows import STATE_GLYPHS, ToolRow, ToolRows
from widgets.chat_entry import ChatEntry, blank, wrapped, wrapped_height
from widgets.compaction_divider import CompactionDivider
from widgets.messages import CallSelected
from widgets.subagent_card import SubagentCard, SubagentProgress, fold_subagents
from widgets.text.formatting import fmt_bytes, fmt_duration, short_path
from widgets.text.line_render import content_strip, load_css, set_virtual_size
from widgets.text.untrusted import one_line, plain
from widgets.user_notes import user_message_note

ChatEntryT = TypeVar("ChatEntryT", bound=ChatEntry)
#: lines of the model's thinking shown before it is opened
THINKING_LINES = 3
#: rendered entries kept (their lines); only a screenful is shown at a time
RENDER_CACHE = 256

STATE_STYLES = {
    "queued": "$foreground 60%", "awaiting approval": "bold $text-warning", "running": "bold $text-primary",
    "done": "$text-success", "failed": "bold $text-error", "denied": "$text-error",
    "cancelled": "italic $foreground 50%",
}
NOTICE_GLYPHS = {"error": "✗ ", "warning": "⚠ ", "info": "· "}


class PromptEntry(ChatEntry):
    """What the user asked (a blank line above it)."""

    def __init__(self, text: str, position: int = 0) -> None:
        super().__init__(position)
        self.text = text

    def render(self, chat: ChatView, width: int, cursor: bool) -> list[Strip]:
        base = chat.entry_style("prompt")
        content = Content.assemble((" › ", "bold $text-primary"), plain(self.text), " ")
        return [blank(chat, width), *wrapped(content, width, base)]

    def estimate(self, width: int) -> int:
        return 1 + wrapped_height(" › " + self.text, width)


class MarkdownEntry(ChatEntry):
    """Assistant text as Markdown (it grows while it streams)."""

    def __init__(self, text: str = "", position: int = 0) -> None:
        super().__init__(position)
        self.parts = [neutralize(text)] if text else []
        self.streaming = False

    @property
    def source(self) -> str:
        return "".join(self.parts)

    def append(self, piece: str) -> None:
        self.parts.append(neutralize(piece))
        self.changed()

    def replace(self, text: str) -> None:
        self.parts = [neutralize(text)]
        self.changed()

    def render(self, chat: ChatView, width: int, cursor: bool) -> list[Strip]:
        return chat.markdown_lines(self.source, width)

    def estimate(self, width: int) -> int:
        return wrapped_height(self.source.strip("\n"), width) + 1


class CallEntry(ChatEntry):
    """One tool call in one line: state, tool, target, time. Enter or a click opens it."""

    interactive = True

    def __init__(self, row: ToolRow, position: int = 0) -> None:
        super().__init__(position)
        self.call_id = row.call_id
        self.row = row
        self._shown: tuple[str, ...] = ()
        self.set_row(row)

    def set_row(self, row: ToolRow) -> None:
        self.row = row
        shown = (row.state, row.tool, row.target, self.tail)
        if shown != self._shown:  # an output chunk changes the row but rarely this line
            self._shown = shown
            self.changed()

    @property
    def tail(self) -> str:
        row = self.row
        tail = [row.state if row.state != "done" else ""]
        if row.error_code and row.state == "failed":
            tail = [row.error_code]
        if row.duration_ms is not None:
            tail.append(fmt_duration(row.duration_ms))
        if row.output_bytes and row.settled:
            tail.append(fmt_bytes(row.output_bytes))
        return " · ".join(t for t in tail if t)

    def render(self, chat: ChatView, width: int, cursor: bool) -> list[Strip]:
        row = self.row
        parts: list[Any] = [
            " ", (f"{STATE_GLYPHS[row.state]} ", STATE_STYLES[row.state]),
            (one_line(row.tool, 40), "bold"), " ", plain(one_line(short_path(row.target, chat.cwd), 160)),
        ]
        tail = self.tail
        if tail:
            parts.append((f"  {tail}", STATE_STYLES[row.state]))
        content = Content.assemble(*parts)
        if content.cell_length > width:
            content = content.truncate(max(1, width), ellipsis=True)
        return [content_strip(content, chat.entry_style("call", cursor), width)]

    def estimate(self, width: int) -> int:
        return 1

    def activate(self, chat: ChatView) -> None:
        chat.post_message(CallSelected(self.call_id))


class ThinkingEntry(ChatEntry):
    """The model's thinking, dimmed: its first lines, and all of it on Enter or a click."""

    interactive = True

    def __init__(self, raw: dict[str, Any], position: int = 0) -> None:
        super().__init__(position)
        self.expanded = False
        self.streamed: list[str] = []
        self.finish(raw)

    def finish(self, raw: dict[str, Any]) -> None:
        """The whole block: it replaces what streamed."""
        text = thinking_text(raw)
        self.streamed = []
        self.lines = neutralize(text).strip().splitlines() if text is not None else []
        self.redacted = text is None
        self.changed()

    def append(self, piece: str) -> None:
        """A piece streamed in: the note shows the thinking so far."""
        self.streamed.append(piece)
        self.redacted = False
        self.lines = neutralize("".join(self.streamed)).strip().splitlines()
        self.changed()

    def text(self) -> str:
        if self.redacted:
            return "✻ thinking (redacted by the provider)"
        shown = self.lines if self.expanded else self.lines[:THINKING_LINES]
        more = len(self.lines) - len(shown)
        head = "✻ thinking" + (f" · {more} more line{'s' if more != 1 else ''}, enter shows them" if more else "")
        return "\n".join([head, *shown])

    def render(self, chat: ChatView, width: int, cursor: bool) -> list[Strip]:
        lines = wrapped(Content(" " + self.text().replace("\n", "\n ")), width, chat.entry_style("thinking", cursor))
        return [*lines, blank(chat, width)]

    def estimate(self, width: int) -> int:
        return wrapped_height(" " + self.text(), width) + 1

    def activate(self, chat: ChatView) -> None:
        self.expanded = not self.expanded
        self.changed()
        chat.entry_changed(self)


class NoticeEntry(ChatEntry):
    """An error, a warning or a retry, in one short block."""

    def __init__(self, text: str, kind: str = "error", position: int = 0) -> None:
        super().__init__(position)
        self.text = text
        self.kind = kind if kind in NOTICE_GLYPHS else "error"

    def render(self, chat: ChatView, width: int, cursor: bool) -> list[Strip]:
        content = Content.assemble(" ", (NOTICE_GLYPHS[self.kind], "bold"), plain(self.text), " ")
        lines = wrapped(content, width, chat.entry_style(f"notice-{self.kind}"))
        return [*lines, blank(chat, width)]

    def estimate(self, width: int) -> int:
        return wrapped_height(" ✗ " + self.text, width) + 1


class ChatView(ScrollView, can_focus=True):
    DEFAULT_CSS = load_css("chat")
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "chat--prompt", "chat--call", "chat--cursor", "chat--thinking", "chat--notice-error",
        "chat--notice-warning", "chat--notice-info", "chat--card", "chat--card-edge", "chat--divider",
        "chat--dim",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "scroll_home", "Top", show=False),
        Binding("end", "scroll_end", "Bottom", show=False),
        Binding("enter", "activate", "Open", show=False),
    ]

    def __init__(self, rows: ToolRows | None = None, *, cwd: str | None = None, name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.cwd = cwd
        #: the calls' rows: a screen's view model (which it folds), else the chat's own (`apply` folds)
        self.rows = rows if rows is not None else ToolRows()
        self._lines: LRUCache[tuple[Any, ...], list[Strip]] = LRUCache(RENDER_CACHE)
        self._markdown: LRUCache[tuple[str, int], list[Strip]] = LRUCache(RENDER_CACHE)
        self._styles: dict[tuple[str, bool], Style] = {}
        self._batch = 0
        #: the chat was at its end when last laid out or scrolled (a resize keeps it there)
        self._at_end = True
        self._resizing = False
        self._start_empty()

    def _start_empty(self) -> None:
        self.entries: list[ChatEntry] = []
        #: heights at `_width` (exact once rendered), and where each entry starts
        self._heights: list[int] = []
        self._measured: list[bool] = []
        self._tops: list[int] = [0]
        self._tops_valid = True
        self._width = 0
        self._call_entries: dict[str, CallEntry] = {}
        #: one card per subagent, by its id (its own events update the card, never the chat)
        self._cards: dict[str, SubagentCard] = {}
        self._streams: dict[tuple[Any, ...], MarkdownEntry] = {}
        self._thinking: dict[tuple[Any, ...], ThinkingEntry] = {}
        self._last_error = ""
        #: events seen so far; each entry remembers after how many it appeared (for `rewind`)
        self.applied = 0
        self.cursor: ChatEntry | None = None
        self._dirty = False

    #: a virtual chat never drops entries (kept for callers that showed the count)
    hidden = 0

    # ---- feeding ----------------------------------------------------------------------------

    async def apply(self, event: Any) -> None:
        """Fold one session event into the chat's rows and the conversation (a chat on its own)."""
        await self.show(event, self.rows.apply(event))

    async def show(self, event: Any, row: ToolRow | None) -> None:
        """Show one session event in the conversation; `row`: the call row it changed (already
        folded into `rows` by the screen's view model)."""
        self.applied += 1
        if getattr(event, "agent_id", None) is not None:
            self._subagent_event(event)
        elif isinstance(event, ConversationCompacted):
            self.add_entry(CompactionDivider(event, self.applied))
        elif isinstance(event, AssistantTextDelta):
            entry = self._streams.get(self._key(event))
            if entry is None:
                entry = self._streams[self._key(event)] = MarkdownEntry(position=self.applied)
                entry.streaming = True
                self.add_entry(entry)
            entry.append(event.text)
            self.entry_changed(entry)
        elif isinstance(event, AssistantText):
            self._final_text(event)
        elif isinstance(event, TurnStarted):
            self.add_entry(PromptEntry(event.prompt, self.applied))
        elif isinstance(event, AssistantThinkingDelta):
            note = self._thinking.get(self._key(event))
            if note is None:
                note = self._thinking[self._key(event)] = ThinkingEntry({"type": "thinking", "thinking": ""},
                                                                         self.applied)
                self.add_entry(note)
            note.append(event.text)
            self.entry_changed(note)
        elif isinstance(event, AssistantThinking):
            note = self._thinking.pop(self._key(event), None)
            if note is not None:
                note.finish(event.raw)
                self.entry_changed(note)
            else:
                self.add_entry(ThinkingEntry(event.raw, self.applied))
        elif isinstance(event, UserMessage) and event.source != "user":
            if (note := user_message_note(event)) is not None:
                self._notice(note, "info")
        elif isinstance(event, TurnEnded) and event.reason in ("error", "rejected", "max_turns"):
            if not (event.message and event.message == self._last_error):  # the step already said it
                self._notice(event.message or f"turn ended: {event.reason}", "error")
        elif isinstance(event, TurnEnded) and event.reason == "interrupted":
            self._notice("interrupted", "warning")
        elif isinstance(event, ModelStepEnded) and event.error:
            self._last_error = event.error
            self._notice(event.error, "error")
        elif isinstance(event, ModelRetry):
            self._drop_live_thinking()
            self._notice(f"model retry {event.attempt}/{event.max_attempts}: {event.reason} "
                         f"(waiting {fmt_duration(event.wait_ms)})", "warning")
        elif isinstance(event, Warning):
            self._notice(f"{event.code}: {event.message}", "warning")
        elif isinstance(event, FileChangedExternally):
            self._notice(f"{short_path(event.path, self.cwd)} changed outside Vigil ({event.change})", "warning")
        elif row is not None:
            self._call_changed(row)

    async def add_notice(self, text: str, kind: str = "error") -> None:
        self._notice(text, kind)

    def _subagent_event(self, event: Any) -> None:
        if isinstance(event, SubagentStarted):
            card = self._cards[event.agent_id or ""] = SubagentCard(SubagentProgress.started(event), self.applied)
            self.add_entry(card)
            return
        card = self._cards.get(event.agent_id)
        if card is not None and card.progress.apply(event):
            card.changed()
            self.entry_changed(card)

    def _notice(self, text: str, kind: str) -> None:
        self.add_entry(NoticeEntry(text, kind, self.applied))

    def add_entry(self, entry: ChatEntry) -> None:
        """Append an entry (any ChatEntry) at the end of the chat."""
        self.entries.append(entry)
        self._heights.append(entry.estimate(self._width) if self._width else 1)
        self._measured.append(False)
        if self._tops_valid:
            self._tops.append(self._tops[-1] + self._heights[-1])
        self._changed()

    def entry_changed(self, entry: ChatEntry) -> None:
        """An entry's lines changed (its height may have too)."""
        self._changed()

    @asynccontextmanager
    async def mounting_together(self) -> AsyncIterator[None]:
        """A batch of events (a replay, a resume, a burst): the chat is laid out once, at the end."""
        self._batch += 1
        try:
            yield
        finally:
            self._batch -= 1
            if not self._batch and self._dirty:
                self._settle()

    def _changed(self) -> None:
        self._dirty = True
        if not self._batch:
            self._settle()

    def _call_changed(self, row: ToolRow) -> None:
        entry = self._call_entries.get(row.call_id)
        if entry is None:
            entry = self._call_entries[row.call_id] = CallEntry(row, self.applied)
            self.add_entry(entry)
        else:
            before = entry.version
            entry.set_row(row)
            if entry.version != before:
                self._changed()

    def _key(self, event: Any) -> tuple[Any, ...]:
        return (event.turn_id, event.step, event.index)

    def _drop_live_thinking(self) -> None:
        """A retried request starts its thinking over."""
        live, self._thinking = set(self._thinking.values()), {}
        if live:
            self._keep(lambda entry: entry not in live)

    def _final_text(self, event: AssistantText) -> None:
        entry = self._streams.pop(self._key(event), None)
        if entry is None:
            if event.text.strip():
                self.add_entry(MarkdownEntry(event.text, self.applied))
            return
        entry.streaming = False
        if entry.source != neutralize(event.text):
            entry.replace(event.text)
        self.entry_changed(entry)

    def _keep(self, keep: Any) -> None:
        """Keep only the entries `keep` says yes to."""
        kept = [(e, h, m) for e, h, m in zip(self.entries, self._heights, self._measured, strict=True) if keep(e)]
        self.entries = [e for e, _, _ in kept]
        self._heights = [h for _, h, _ in kept]
        self._measured = [m for _, _, m in kept]
        self._call_entries = {k: v for k, v in self._call_entries.items() if keep(v)}
        self._cards = {k: v for k, v in self._cards.items() if keep(v)}
        if self.cursor is not None and not keep(self.cursor):
            self.cursor = None
        self._tops_valid = False
        self._changed()

    async def rewind(self, events: Sequence[Any], rows: ToolRows | None = None) -> None:
        """Back to how the chat was after `events` (the first ones it was given): what appeared
        later is removed, and the call lines show their calls as they were then (`rows`: those
        events already folded by the screen's view model)."""
        position = len(events)
        self._streams.clear()
        self._thinking.clear()
        if rows is None:
            rows = ToolRows()
            for event in events:
                rows.apply(event)
        self.rows = rows
        self._last_error = ""
        for event in events:
            if isinstance(event, ModelStepEnded) and event.error:
                self._last_error = event.error
        self._batch += 1
        try:
            self._keep(lambda entry: entry.position <= position)
            for call_id, entry in self._call_entries.items():
                row = self.rows.get(call_id)
                if row is not None:
                    entry.set_row(row)
            if self._cards:
                progress = fold_subagents(events)
                for agent_id, card in self._cards.items():
                    if agent_id in progress:
                        card.show(progress[agent_id])
        finally:
            self._batch -= 1
        self.applied = position
        self._lines.clear()
        self._settle()

    def call_line(self, call_id: str) -> CallEntry | None:
        return self._call_entries.get(call_id)

    def entries_of(self, kind: type[ChatEntryT]) -> list[ChatEntryT]:
        """The entries of one kind, in order."""
        return [entry for entry in self.entries if isinstance(entry, kind)]

    def select_entry(self, entry: ChatEntry) -> None:
        """Put the cursor on an entry (Enter then opens it) and scroll it into view."""
        self._set_cursor(entry)

    def assistant_texts(self) -> list[str]:
        """The Markdown the assistant's entries show (for tests and export-like views)."""
        return [entry.source for entry in self.entries if isinstance(entry, MarkdownEntry)]

    # ---- layout -----------------------------------------------------------------------------

    @property
    def _content_width(self) -> int:
        return self.scrollable_content_region.width

    def _ensure_tops(self) -> None:
        if not self._tops_valid:
            tops = [0]
            for height in self._heights:
                tops.append(tops[-1] + height)
            self._tops = tops
            self._tops_valid = True

    def _measure(self, index: int) -> list[Strip]:
        """The entry's lines (cached), its height recorded as measured."""
        entry = self.entries[index]
        lines = self._entry_lines(entry, entry is self.cursor and self.has_focus)
        if len(lines) != self._heights[index]:
            self._heights[index] = len(lines)
            self._tops_valid = False
        self._measured[index] = True
        return lines

    def _entry_lines(self, entry: ChatEntry, cursor: bool) -> list[Strip]:
        width = self._width
        key = (id(entry), entry.version, width, cursor)
        lines = self._lines.get(key)
        if lines is None:
            lines = self._lines[key] = entry.render(self, width, cursor) or [Strip.blank(width)]
        return lines

    def _settle(self, resized: bool = False) -> None:
        """Lay the chat out: estimates at a new width, the entries on screen measured, the
        virtual size updated; a chat scrolled to its end stays there (`resized`: also when the
        resize itself moved the end away, as a shorter or narrower pane does)."""
        self._dirty = False
        at_end = self.is_vertical_scroll_end or self.max_scroll_y == 0 or (resized and self._at_end)
        for _ in range(3):  # a scrollbar that appears (or goes) changes the width: lay out again
            if not self._layout(at_end):
                break

    def _layout(self, at_end: bool) -> bool:
        """One layout pass; True when it changed the width it was done for."""
        width = self._content_width
        if width <= 0:
            return False
        if width != self._width:
            self._width = width
            self._heights = [entry.estimate(width) for entry in self.entries]
            self._measured = [False] * len(self.entries)
            self._tops_valid = False
        height = self.scrollable_content_region.height
        self._ensure_tops()
        if at_end:
            # measured from the end up until a screen is full: the last screen is exact
            filled, index = 0, len(self.entries) - 1
            while index >= 0 and filled < height:
                filled += len(self._measure(index))
                index -= 1
        else:
            self._measure_range(round(self.scroll_y), height)
        self._ensure_tops()
        set_virtual_size(self, Size(width, self._tops[-1]))
        if at_end:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)
        self._at_end = at_end
        self.refresh()
        return self._content_width != width

    def _measure_range(self, top: int, height: int) -> None:
        self._ensure_tops()
        index = max(0, bisect_right(self._tops, top) - 1)
        y = self._tops[index]
        while index < len(self.entries) and y < top + height:
            y += len(self._measure(index))
            index += 1

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if not self._resizing:
            self._at_end = self.is_vertical_scroll_end or self.max_scroll_y == 0
        if self.entries and self._width:
            top, height = round(new), self.scrollable_content_region.height
            self._ensure_tops()
            first = max(0, bisect_right(self._tops, top) - 1)
            last = max(0, bisect_right(self._tops, top + height) - 1)
            if not all(self._measured[first:last + 1]):
                self._measure_range(top, height)
                self._ensure_tops()
                set_virtual_size(self, Size(self._width, self._tops[-1]))

    def on_resize(self, _: events.Resize) -> None:
        self._resizing = True
        try:
            self._settle(resized=True)
        finally:
            self._resizing = False

    def on_mount(self) -> None:
        self._settle()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._lines.clear()
        self._markdown.clear()

    # ---- rendering --------------------------------------------------------------------------

    def entry_style(self, name: str, cursor: bool = False) -> Style:
        key = (name, cursor)
        style = self._styles.get(key)
        if style is None:
            style = self.visual_style
            if name != "base":
                style = style + self.get_visual_style(f"chat--{name}", partial=True)
            if cursor:
                style = style + self.get_visual_style("chat--cursor", partial=True)
            self._styles[key] = style
        return style

    def markdown_lines(self, text: str, width: int) -> list[Strip]:
        """Markdown rendered to lines (Rich's renderer: no widgets, links shown as text)."""
        key = (text, width)
        lines = self._markdown.get(key)
        if lines is None:
            console = self.app.console
            options = console.options.update(width=max(1, width), height=None, highlight=False, markup=False)
            base = self.entry_style("base").rich_style
            rendered = console.render_lines(RichMarkdown(text, hyperlinks=False, code_theme="ansi_dark"), options,
                                            style=base, pad=True)
            lines = [Strip(line).crop_extend(0, width, base) for line in rendered]
            if lines and not lines[-1].text.strip():
                lines = lines[:-1]
            lines.append(Strip.blank(width, base))  # a paragraph's space below
            self._markdown[key] = lines
        return lines

    def render_line(self, y: int) -> Strip:
        width = self._content_width
        base = self.entry_style("base").rich_style
        if self.entries and self._width != width:
            self.call_later(self._settle)  # the width changed under us (a scrollbar came or went)
            return Strip.blank(width, base)
        if not self.entries:
            return Strip.blank(width, base)
        self._ensure_tops()
        line_no = round(self.scroll_y) + y
        index = bisect_right(self._tops, line_no) - 1
        if index < 0 or index >= len(self.entries):
            return Strip.blank(width, base)
        entry = self.entries[index]
        lines = self._entry_lines(entry, entry is self.cursor and self.has_focus)
        offset = line_no - self._tops[index]
        if len(lines) != self._heights[index]:
            self.call_later(self._settle)  # measured late: the layout follows on the next frame
        return lines[offset] if offset < len(lines) else Strip.blank(width, base)

    # ---- keys and the mouse -----------------------------------------------------------------

    def _entry_at(self, line_no: int) -> ChatEntry | None:
        self._ensure_tops()
        index = bisect_right(self._tops, line_no) - 1
        return self.entries[index] if 0 <= index < len(self.entries) else None

    def _scroll_to_entry(self, entry: ChatEntry) -> None:
        index = self.entries.index(entry)
        lines = self._measure(index)
        self._ensure_tops()
        top, height = self._tops[index], self.scrollable_content_region.height
        set_virtual_size(self, Size(self._width, self._tops[-1]))
        if top < self.scroll_y:
            self.scroll_to(y=top, animate=False, force=True)
        elif top + len(lines) > self.scroll_y + height:
            self.scroll_to(y=top + len(lines) - height, animate=False, force=True)

    def _set_cursor(self, entry: ChatEntry | None) -> None:
        if entry is not self.cursor:
            self.cursor = entry
            if entry is not None:
                self._scroll_to_entry(entry)
            self.refresh()

    def action_cursor(self, step: int) -> None:
        interactive = [e for e in self.entries if e.interactive]
        if not interactive:
            self.scroll_relative(y=step, animate=False)
            return
        if self.cursor is None or self.cursor not in interactive:
            # from the screen's edge: the first below the top, or the last above the bottom
            top = round(self.scroll_y)
            height = self.scrollable_content_region.height
            self._ensure_tops()
            on_screen = [e for e in interactive
                         if top <= self._tops[self.entries.index(e)] < top + height]
            choice = (on_screen[0] if step > 0 else on_screen[-1]) if on_screen else interactive[-1]
            self._set_cursor(choice)
            return
        at = interactive.index(self.cursor) + step
        if 0 <= at < len(interactive):
            self._set_cursor(interactive[at])
        else:
            self.scroll_relative(y=step, animate=False)

    def action_page(self, direction: int) -> None:
        self.scroll_relative(y=direction * max(1, self.scrollable_content_region.height - 1), animate=False)

    def action_scroll_home(self) -> None:
        self.scroll_to(y=0, animate=False)

    def action_scroll_end(self) -> None:
        self.scroll_to(y=self.max_scroll_y, animate=False)

    def action_activate(self) -> None:
        if self.cursor is not None and self.cursor.interactive:
            self.cursor.activate(self)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        entry = self._entry_at(round(self.scroll_y) + offset.y)
        if entry is not None and entry.interactive:
            event.stop()
            self._set_cursor(entry)
            entry.activate(self)

    def on_focus(self) -> None:
        self._lines.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._lines.clear()
        self.refresh()

    def entry_region_y(self, entry: ChatEntry) -> int | None:
        """Where an entry's first line is on screen (a row of the chat), None when it is not."""
        if entry not in self.entries:
            return None
        self._ensure_tops()
        y = self._tops[self.entries.index(entry)] - round(self.scroll_y)
        return y if 0 <= y < self.scrollable_content_region.height else None
