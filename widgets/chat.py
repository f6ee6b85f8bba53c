"""The chat pane: prompts, the assistant's text streamed as Markdown, one line per tool call
(Enter or click opens it), and errors.

It keeps the latest MAX_ENTRIES entries mounted: every mount walks the chat's children, so a
chat of thousands of widgets made each new line slower and a long replay took seconds to open.
Older entries give way to a line that says how many are not shown (the table lists every call,
Export transcript has the whole conversation).

Model text is untrusted: control sequences are neutralised before it reaches the Markdown parser,
Markdown builds plain Content (no Textual markup), and a link click never opens anything.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

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
from widgets.compaction_divider import CompactionDivider
from widgets.messages import CallSelected
from widgets.subagent_card import SubagentCard, SubagentProgress, fold_subagents
from widgets.text.formatting import fmt_bytes, fmt_duration, short_path
from widgets.text.line_render import load_css
from widgets.text.untrusted import one_line, plain
from widgets.tool_rows import STATE_GLYPHS, ToolRow, ToolRows
from widgets.user_notes import user_message_note

#: the entries the chat keeps mounted (bench/replay_timeline.py)
MAX_ENTRIES = 150
#: a live chat drops its oldest entries this many at a time, not one per new line
TRIM_STEP = 50
#: lines of the model's thinking shown before it is opened
THINKING_LINES = 3

STATE_STYLES = {
    "queued": "$foreground 60%", "awaiting approval": "bold $text-warning", "running": "bold $text-primary",
    "done": "$text-success", "failed": "bold $text-error", "denied": "$text-error",
    "cancelled": "italic $foreground 50%",
}


class ChatPrompt(Static):
    """What the user asked."""

    def __init__(self, text: str) -> None:
        super().__init__(Content.assemble(("› ", "bold $text-primary"), plain(text)))


class ChatNotice(Static):
    """An error, a warning or a retry, in one short block."""

    def __init__(self, text: str, kind: str = "error") -> None:
        glyph = {"error": "✗ ", "warning": "⚠ ", "info": "· "}.get(kind, "")
        super().__init__(Content.assemble((glyph, "bold"), plain(text)), classes=kind)


class AssistantMarkdown(Markdown):
    """Assistant text. Links are inert: a click shows where it points and opens nothing."""

    def __init__(self, text: str = "") -> None:
        super().__init__(neutralize(text), open_links=False)

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        event.stop()
        self.notify(f"Links are not opened from the chat: {one_line(event.href, 300)}", markup=False)


class CallLine(Static, can_focus=True):
    """One tool call in one line: state, tool, target, time. Enter or click opens it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "open", "Open call", show=False)]

    def __init__(self, row: ToolRow, cwd: str | None = None) -> None:
        super().__init__(Content(""))
        self.call_id = row.call_id
        self.cwd = cwd
        self._shown: tuple[str, ...] = ()
        self.set_row(row)

    def set_row(self, row: ToolRow) -> None:
        parts: list[Any] = [
            (f"{STATE_GLYPHS[row.state]} ", STATE_STYLES[row.state]),
            (one_line(row.tool, 40), "bold"), " ", plain(one_line(short_path(row.target, self.cwd), 160)),
        ]
        tail = [row.state if row.state != "done" else ""]
        if row.error_code and row.state == "failed":
            tail = [row.error_code]
        if row.duration_ms is not None:
            tail.append(fmt_duration(row.duration_ms))
        if row.output_bytes and row.settled:
            tail.append(fmt_bytes(row.output_bytes))
        tail_text = " · ".join(t for t in tail if t)
        # an output chunk changes the row but rarely this line: an update asks for a relayout
        shown = (row.state, row.tool, row.target, tail_text)
        if shown == self._shown:
            return
        self._shown = shown
        if tail_text:
            parts.append((f"  {tail_text}", STATE_STYLES[row.state]))
        self.update(Content.assemble(*parts))

    def action_open(self) -> None:
        self.post_message(CallSelected(self.call_id))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(CallSelected(self.call_id))


class ThinkingNote(Static, can_focus=True):
    """The model's thinking, dimmed: its first lines, and all of it on Enter or a click."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "toggle", "Show all", show=False)]

    def __init__(self, raw: dict[str, Any]) -> None:
        super().__init__(Content(""))
        self.expanded = False
        self.finish(raw)

    def finish(self, raw: dict[str, Any]) -> None:
        """The whole block: it replaces what streamed."""
        text = thinking_text(raw)
        self.streamed: list[str] = []
        self.lines = neutralize(text).strip().splitlines() if text is not None else []
        self.redacted = text is None
        self.show()

    def append(self, piece: str) -> None:
        """A piece streamed in: the note shows the thinking so far."""
        self.streamed.append(piece)
        self.redacted = False
        self.lines = neutralize("".join(self.streamed)).strip().splitlines()
        self.show()

    def show(self) -> None:
        if self.redacted:
            self.update(Content("✻ thinking (redacted by the provider)"))
            return
        shown = self.lines if self.expanded else self.lines[:THINKING_LINES]
        more = len(self.lines) - len(shown)
        head = "✻ thinking" + (f" · {more} more line{'s' if more != 1 else ''}, enter shows them" if more else "")
        self.update(Content("\n".join([head, *shown])))

    def action_toggle(self) -> None:
        self.expanded = not self.expanded
        self.show()

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_toggle()


class EarlierEntries(Static):
    """The first line of a chat whose oldest entries gave way."""

    def show(self, count: int) -> None:
        self.update(Content(f"⋯ {count:,} earlier entr{'y' if count == 1 else 'ies'} not shown here: every call "
                            "is in the table, the whole conversation in Export transcript (ctrl+p)"))


class ChatView(VerticalScroll):
    DEFAULT_CSS = load_css("chat")

    def __init__(self, *, cwd: str | None = None, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.cwd = cwd
        self._streams: dict[tuple[Any, ...], tuple[AssistantMarkdown, MarkdownStream, list[str]]] = {}
        #: thinking notes still streaming, by (turn, step, block)
        self._thinking: dict[tuple[Any, ...], ThinkingNote] = {}
        #: widgets waiting to be mounted together (inside `mounting_together`)
        self._pending: list[Any] | None = None
        self._start_empty()

    def _start_empty(self) -> None:
        """What the chat knows before its first event (its children are the caller's business)."""
        self.rows = ToolRows()
        self._call_lines: dict[str, CallLine] = {}
        #: one card per subagent, by its id (its own events update the card, never the chat)
        self._cards: dict[str, SubagentCard] = {}
        self._last_error = ""
        #: events seen so far; each widget remembers after how many it appeared (for `rewind`)
        self.applied = 0
        #: entries that gave way to newer ones, the calls among them, and the newest position among them
        self.hidden = 0
        self._hidden_calls: set[str] = set()
        self._hidden_upto = 0
        self._earlier: EarlierEntries | None = None

    def on_mount(self) -> None:
        self.anchor()

    async def on_unmount(self) -> None:
        # a stream still appending would mount into a widget that is going away
        for _, stream, _ in list(self._streams.values()):
            await stream.stop()
        self._streams.clear()

    async def apply(self, event: Any) -> None:
        """Fold one session event into the conversation."""
        self.applied += 1
        if getattr(event, "agent_id", None) is not None:
            await self._subagent_event(event)
        elif isinstance(event, ConversationCompacted):
            await self._add(CompactionDivider(event))
        elif isinstance(event, AssistantTextDelta):
            await self._delta(event)
        elif isinstance(event, AssistantText):
            await self._final_text(event)
        elif isinstance(event, TurnStarted):
            await self._add(ChatPrompt(event.prompt))
        elif isinstance(event, AssistantThinkingDelta):
            await self._thinking_delta(event)
        elif isinstance(event, AssistantThinking):
            note = self._thinking.pop(self._key(event), None)
            if note is not None:
                note.finish(event.raw)
            else:
                await self._add(ThinkingNote(event.raw))
        elif isinstance(event, UserMessage) and event.source != "user":
            if (note := user_message_note(event)) is not None:
                await self.add_notice(note, "info")
        elif isinstance(event, TurnEnded) and event.reason in ("error", "rejected", "max_turns"):
            if not (event.message and event.message == self._last_error):  # the step already said it
                await self.add_notice(event.message or f"turn ended: {event.reason}", "error")
        elif isinstance(event, TurnEnded) and event.reason == "interrupted":
            await self.add_notice("interrupted", "warning")
        elif isinstance(event, ModelStepEnded) and event.error:
            self._last_error = event.error
            await self.add_notice(event.error, "error")
        elif isinstance(event, ModelRetry):
            await self._drop_live_thinking()
            await self.add_notice(f"model retry {event.attempt}/{event.max_attempts}: {event.reason} "
                                  f"(waiting {fmt_duration(event.wait_ms)})", "warning")
        elif isinstance(event, Warning):
            await self.add_notice(f"{event.code}: {event.message}", "warning")
        elif isinstance(event, FileChangedExternally):
            await self.add_notice(f"{short_path(event.path, self.cwd)} changed outside Vigil ({event.change})",
                                  "warning")
        else:
            row = self.rows.apply(event)
            if row is not None:
                await self._call_changed(row)

    async def add_notice(self, text: str, kind: str = "error") -> None:
        await self._add(ChatNotice(text, kind))

    async def _subagent_event(self, event: Any) -> None:
        if isinstance(event, SubagentStarted):
            card = self._cards[event.agent_id or ""] = SubagentCard(SubagentProgress.started(event))
            await self._add(card)
            return
        card = self._cards.get(event.agent_id)
        if card is not None and card.progress.apply(event):
            card.show()

    @asynccontextmanager
    async def mounting_together(self) -> AsyncIterator[None]:
        """Widgets added inside are mounted in one go at the end. Each mount walks every child of
        the chat, so a long log (a resume, a replay) mounted one widget at a time took quadratic
        time: 1,100 widgets of a 5,300-event log took 14 s, against 4.3 s together
        (bench/replay_timeline.py)."""
        if self._pending is not None:  # nested: the outer one mounts
            yield
            return
        self._pending = []
        try:
            yield
        finally:
            await self._flush()
            self._pending = None

    async def _add(self, widget: Any) -> None:
        widget.chat_position = self.applied
        if self._pending is not None:
            self._pending.append(widget)
        else:
            await self.mount(widget)
            await self._trim(MAX_ENTRIES + TRIM_STEP)

    async def _flush(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, []
            cut = len(pending) > MAX_ENTRIES
            if cut:  # what would give way at once is never mounted
                self._forget(pending[:-MAX_ENTRIES])
                pending = pending[-MAX_ENTRIES:]
            await self.mount_all(pending)
            if not await self._trim(MAX_ENTRIES) and cut:
                await self._show_hidden()

    @property
    def entries(self) -> list[Any]:
        return [child for child in self.children if child is not self._earlier]

    async def _trim(self, limit: int) -> bool:
        """Over `limit` entries: the oldest give way until MAX_ENTRIES are left (a text still
        streaming stays). True when any did."""
        entries = self.entries
        if len(entries) <= limit:
            return False
        streaming = {markdown for markdown, _, _ in self._streams.values()} | set(self._thinking.values())
        oldest = [w for w in entries[:len(entries) - MAX_ENTRIES] if w not in streaming]
        self._forget(oldest)
        await self.remove_children(oldest)
        await self._show_hidden()
        return True

    def _forget(self, widgets: Sequence[Any]) -> None:
        for widget in widgets:
            if isinstance(widget, CallLine):
                self._call_lines.pop(widget.call_id, None)
                self._hidden_calls.add(widget.call_id)
            elif isinstance(widget, SubagentCard):
                self._cards.pop(widget.agent_id, None)
            self._hidden_upto = max(self._hidden_upto, getattr(widget, "chat_position", 0))
        self.hidden += len(widgets)

    async def _show_hidden(self) -> None:
        if not self.hidden:
            if self._earlier is not None:
                await self._earlier.remove()
                self._earlier = None
            return
        if self._earlier is None:
            self._earlier = EarlierEntries()
            await self.mount(self._earlier, before=0)
        self._earlier.show(self.hidden)

    async def _call_changed(self, row: ToolRow) -> None:
        if row.call_id in self._hidden_calls:
            return  # its line gave way; the table still shows it
        line = self._call_lines.get(row.call_id)
        if line is None:
            line = self._call_lines[row.call_id] = CallLine(row, self.cwd)
            await self._add(line)
        else:
            line.set_row(row)

    def _key(self, event: Any) -> tuple[Any, ...]:
        return (event.turn_id, event.step, event.index)

    async def _thinking_delta(self, event: AssistantThinkingDelta) -> None:
        note = self._thinking.get(self._key(event))
        if note is None:
            note = self._thinking[self._key(event)] = ThinkingNote({"type": "thinking", "thinking": ""})
            await self._add(note)
        note.append(event.text)

    async def _drop_live_thinking(self) -> None:
        """A retried request starts its thinking over."""
        live, self._thinking = list(self._thinking.values()), {}
        mounted = [note for note in live if note.parent is self]
        if mounted:
            await self.remove_children(mounted)

    async def _delta(self, event: AssistantTextDelta) -> None:
        key = self._key(event)
        entry = self._streams.get(key)
        if entry is None:
            markdown = AssistantMarkdown()
            markdown.chat_position = self.applied
            await self._flush()  # a stream needs its widget on screen, after what came before it
            await self.mount(markdown)
            entry = self._streams[key] = (markdown, Markdown.get_stream(markdown), [])
        text = neutralize(event.text)
        entry[2].append(text)
        await entry[1].write(text)

    async def _final_text(self, event: AssistantText) -> None:
        entry = self._streams.pop(self._key(event), None)
        final = neutralize(event.text)
        if entry is None:
            if final.strip():
                await self._add(AssistantMarkdown(final))
            return
        markdown, stream, parts = entry
        await stream.stop()
        if "".join(parts) != final:
            await markdown.update(final)

    async def rewind(self, events: Sequence[Any]) -> None:
        """Back to how the chat was after `events` (the first ones it was given): what appeared
        later is removed, and the call lines show their calls as they were then. Going back past
        entries that gave way builds the chat again from `events` (only the latest are mounted)."""
        for _, stream, _ in list(self._streams.values()):
            await stream.stop()
        self._streams.clear()
        self._thinking.clear()
        position = len(events)
        if self.hidden and position < self._hidden_upto:
            await self._rebuild(events)
            return
        later = [child for child in self.entries if getattr(child, "chat_position", 0) > position]
        if later:
            await self.remove_children(later)
        self.rows = ToolRows()
        self._last_error = ""
        for event in events:
            self.rows.apply(event)
            if isinstance(event, ModelStepEnded) and event.error:
                self._last_error = event.error
        gone = set(later)
        self._call_lines = {call_id: line for call_id, line in self._call_lines.items() if line not in gone}
        self._cards = {agent_id: card for agent_id, card in self._cards.items() if card not in gone}
        if self._cards:
            progress = fold_subagents(events)
            for agent_id, card in self._cards.items():
                if agent_id in progress:
                    card.show(progress[agent_id])
        for call_id, line in self._call_lines.items():
            row = self.rows.get(call_id)
            if row is not None:
                line.set_row(row)
        self.applied = position

    async def _rebuild(self, events: Sequence[Any]) -> None:
        await self.remove_children()
        self._start_empty()
        async with self.mounting_together():
            for event in events:
                await self.apply(event)
        await self._show_hidden()

    def call_line(self, call_id: str) -> CallLine | None:
        return self._call_lines.get(call_id)
