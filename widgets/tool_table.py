"""The live tool-call table, on the Line API.

A DataTable of 1,000 rows under 200 `update_cell` calls/s rendered ~100 ms frames here; this
table redraws only the lines whose row changed, from a line cache keyed on the row's version,
so a flood of progress events costs one short line render each.

A subagent's calls are nested under the Agent call that started it (`└` in the tool column);
space folds and unfolds them (← → belong to the replay's timeline).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, ClassVar

from rich.segment import Segment
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui_app.view_model.tool_rows import STATE_GLYPHS, ToolRow, ToolRows
from widgets.messages import CallSelected
from widgets.text.formatting import fmt_bytes, fmt_duration, looks_like_path, short_path
from widgets.text.line_render import fit, load_css, set_virtual_size
from widgets.text.untrusted import one_line

#: (name, title, width or 0 for "the rest", align, dropped below this table width)
COLUMNS: tuple[tuple[str, str, int, str, int], ...] = (
    ("number", "#", 4, "right", 0),
    ("tool", "tool", 12, "left", 0),
    ("target", "target", 0, "left", 0),
    ("state", "state", 19, "left", 0),
    ("group", "group", 6, "left", 70),
    ("duration", "time", 7, "right", 50),
    ("size", "size", 8, "right", 60),
)
MIN_TARGET = 10
#: rendered lines kept; a Strip is heavy for the garbage collector, and only a screenful is shown
STRIP_CACHE = 512

#: what `f` steps through
STATE_FILTERS: tuple[frozenset[str] | None, ...] = (
    None,
    frozenset({"awaiting approval"}),
    frozenset({"running"}),
    frozenset({"failed", "denied"}),
    frozenset({"done"}),
    frozenset({"cancelled"}),
)


#: below this table width the state and tool columns narrow (the state reads "◆ awaiting…")
NARROW = 70
NARROW_SIZES = {"state": 11, "tool": 10}


def layout(width: int) -> list[tuple[str, str, int, str]]:
    columns = [c for c in COLUMNS if width >= c[4]]
    sizes = {name: (NARROW_SIZES.get(name, size) if width < NARROW else size) for name, _, size, _, _ in columns}
    fixed = sum(sizes.values()) + len(columns) - 1
    rest = max(MIN_TARGET, width - fixed)
    return [(name, title, sizes[name] or rest, align) for name, title, _, align, _ in columns]


class ToolTable(ScrollView, can_focus=True):
    """One line per tool call, updated live from session events (`apply`)."""

    DEFAULT_CSS = load_css("tool_table")
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tool-table--header", "tool-table--filter", "tool-table--dim", "tool-table--tool",
        "tool-table--cursor", *(f"tool-table--{s.replace(' ', '-')}" for s in STATE_GLYPHS),
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("enter", "select", "Open call"),
        Binding("f", "cycle_state_filter", "Filter state"),
        Binding("t", "toggle_tool_filter", "Filter tool"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("space", "toggle_children", "Fold subagent", show=False),
    ]

    class CallHighlighted(Message):
        """The cursor moved onto a call (the detail pane may follow it)."""

        def __init__(self, call_id: str) -> None:
            super().__init__()
            self.call_id = call_id

    def __init__(self, rows: ToolRows | None = None, *, cwd: str | None = None,
                 clock: Callable[[], float] = time.time, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        #: paths inside the project are shown relative to it
        self.cwd = cwd
        self.rows = rows if rows is not None else ToolRows()
        #: wall clock for the live duration of running calls (event timestamps are wall time)
        self.clock = clock
        self.state_filter: frozenset[str] | None = None
        self.tool_filter: str | None = None
        self.cursor_id: str | None = None
        #: Agent calls whose subagents' rows are folded away
        self.folded: set[str] = set()
        self._view: list[ToolRow] = []
        self._position: dict[str, int] = {}
        self._line_cache: LRUCache[tuple[Any, ...], Strip] = LRUCache(STRIP_CACHE)
        self._styles: dict[str, Any] = {}
        self._stale = False
        self._rebuild_view()

    # ---- feeding ----------------------------------------------------------------------------
    # A screen folds each event once into its session's view model and tells the table which row
    # changed (`show_row`, `show_rows`, `mark_stale`); alone, the table folds events itself (`apply`).

    def apply(self, event: Any) -> ToolRow | None:
        """Fold one session event into the table's rows and redraw what it changed."""
        row = self.rows.apply(event)
        if row is not None:
            self.show_row(row)
        return row

    def apply_many(self, batch: Iterable[Any]) -> None:
        """Fold a batch of events (a replay, a burst) into the table's rows, with a single relayout."""
        self.show_rows([row for event in batch if (row := self.rows.apply(event)) is not None])

    def show_rows(self, changed: Sequence[ToolRow]) -> None:
        """Rows changed by a batch (already folded): one relayout."""
        if changed:
            self._rebuild_view()
            self.refresh()

    def mark_stale(self) -> None:
        """The rows changed and the table is not laid out yet (a replay catching up: a layout per
        batch made a long catch-up quadratic); `settle` lays it out once at the end."""
        self._stale = True

    def settle(self) -> None:
        if self._stale:
            self._stale = False
            self._rebuild_view()
            self.refresh()

    def replace_rows(self, rows: ToolRows) -> None:
        """Show other rows in one go (a replay stepping back): the filter stays; so does the
        cursor, when its call is among them."""
        self.rows = rows
        if self.cursor_id is not None and rows.get(self.cursor_id) is None:
            self.cursor_id = None
        self._line_cache.clear()
        self._rebuild_view()
        self.refresh()

    def show_row(self, row: ToolRow) -> None:
        """One row changed (already folded): redraw its line, or lay out again when it is new."""
        index = self._position.get(row.call_id)
        visible = self._passes(row)
        if row.parent is not None and index is None:
            # a subagent's new call goes under its Agent call, whose count changed too
            at_end = self.is_vertical_scroll_end
            self._rebuild_view()
            if at_end:
                self.scroll_to(y=self.max_scroll_y, animate=False, force=True)
            self.refresh()
            return
        if index is None and visible:
            at_end = self.is_vertical_scroll_end
            if row is not (self.rows.rows[-1] if self.rows.rows else None):
                self._rebuild_view()
            else:
                self._position[row.call_id] = len(self._view)
                self._view.append(row)
                self._resize()
            if at_end:
                self.scroll_to(y=self.max_scroll_y, animate=False, force=True)
            self.refresh()
        elif index is not None and not visible:
            self._rebuild_view()
            self.refresh()
        elif index is not None:
            self.refresh_line(index + self.header_height)

    # ---- filtering and selection ------------------------------------------------------------

    def set_filter(self, states: Collection[str] | None = None, tool: str | None = None) -> None:
        self.state_filter = frozenset(states) if states else None
        self.tool_filter = tool or None
        self._rebuild_view()
        self._scroll_to_cursor()
        self.refresh()

    @property
    def visible_call_ids(self) -> list[str]:
        return [r.call_id for r in self._view]

    def select(self, call_id: str) -> None:
        """Move the cursor onto a call (clearing a filter that hides it)."""
        row = self.rows.get(call_id)
        if row is None:
            return
        if row.parent is not None and row.parent in self.folded:
            self.fold(row.parent, False)  # a subagent's call asked for by name is shown
        if not self._passes(row):
            self.set_filter(None, None)
        self._move_cursor_to(self._position[call_id])

    def _passes(self, row: ToolRow) -> bool:
        if row.parent is not None and row.parent in self.folded and self.state_filter is None \
                and self.tool_filter is None:
            return False  # folded under its Agent call (a filter shows every match)
        if self.state_filter is not None and row.state not in self.state_filter:
            return False
        return self.tool_filter is None or row.tool == self.tool_filter

    def _rebuild_view(self) -> None:
        rows = self.rows.rows
        children: dict[str, list[ToolRow]] = {}
        for row in rows:
            if row.parent is not None and row.parent in self.rows.by_id:
                children.setdefault(row.parent, []).append(row)
        ordered: list[ToolRow] = []
        for row in rows:
            if row.parent is not None and row.parent in self.rows.by_id:
                continue
            ordered.append(row)
            ordered.extend(children.get(row.call_id, ()))
        self._view = [r for r in ordered if self._passes(r)]
        self._position = {r.call_id: i for i, r in enumerate(self._view)}
        self._resize()

    @property
    def header_height(self) -> int:
        return 2 if (self.state_filter is not None or self.tool_filter is not None) else 1

    def _resize(self) -> None:
        set_virtual_size(self, Size(self.scrollable_content_region.width, self.header_height + len(self._view)))

    def on_resize(self, _: events.Resize) -> None:
        self._resize()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._line_cache.clear()

    # ---- actions ----------------------------------------------------------------------------

    def _cursor_index(self) -> int | None:
        return None if self.cursor_id is None else self._position.get(self.cursor_id)

    def _move_cursor_to(self, index: int) -> None:
        if not self._view:
            return
        index = max(0, min(len(self._view) - 1, index))
        old = self._cursor_index()
        self.cursor_id = self._view[index].call_id
        if old is not None:
            self.refresh_line(old + self.header_height)
        self.refresh_line(index + self.header_height)
        self._scroll_to_cursor()
        self.post_message(self.CallHighlighted(self.cursor_id))

    def _scroll_to_cursor(self) -> None:
        index = self._cursor_index()
        if index is None:
            return
        rows_shown = max(1, self.scrollable_content_region.height - self.header_height)
        top = round(self.scroll_y)
        if index < top:
            self.scroll_to(y=index, animate=False, force=True)
        elif index >= top + rows_shown:
            self.scroll_to(y=index - rows_shown + 1, animate=False, force=True)

    def action_cursor(self, delta: int) -> None:
        index = self._cursor_index()
        self._move_cursor_to((len(self._view) - 1 if delta < 0 else 0) if index is None else index + delta)

    def action_page(self, direction: int) -> None:
        page = max(1, self.scrollable_content_region.height - self.header_height - 1)
        index = self._cursor_index() or 0
        self._move_cursor_to(index + direction * page)

    def action_first(self) -> None:
        self._move_cursor_to(0)

    def action_last(self) -> None:
        self._move_cursor_to(len(self._view) - 1)

    def action_select(self) -> None:
        if self.cursor_id is not None:
            self.post_message(CallSelected(self.cursor_id))

    def action_cycle_state_filter(self) -> None:
        current = STATE_FILTERS.index(self.state_filter) if self.state_filter in STATE_FILTERS else 0
        self.set_filter(STATE_FILTERS[(current + 1) % len(STATE_FILTERS)], self.tool_filter)

    def action_toggle_tool_filter(self) -> None:
        if self.tool_filter is not None:
            self.set_filter(self.state_filter, None)
            return
        row = self.rows.get(self.cursor_id) if self.cursor_id else None
        if row is not None:
            self.set_filter(self.state_filter, row.tool)

    def action_clear_filter(self) -> None:
        self.set_filter(None, None)

    def _agent_row(self) -> ToolRow | None:
        """The Agent call under the cursor, or the one whose subagent made the call under it."""
        row = self.rows.get(self.cursor_id) if self.cursor_id else None
        if row is not None and row.parent is not None:
            row = self.rows.get(row.parent)
        return row if row is not None and row.children else None

    def action_toggle_children(self) -> None:
        row = self._agent_row()
        if row is not None:
            self.fold(row.call_id, row.call_id not in self.folded)

    def fold(self, call_id: str, fold: bool = True) -> None:
        """Hide (or show again) the rows of the subagents an Agent call started."""
        row = self.rows.get(call_id)
        if row is None or (call_id in self.folded) == fold:
            return
        if fold:
            self.folded.add(call_id)
            if self.cursor_id is not None and (self.rows.get(self.cursor_id) or row).parent == call_id:
                self.cursor_id = call_id  # the cursor moves up to the Agent call, not off the table
        else:
            self.folded.discard(call_id)
        row.version += 1
        self._rebuild_view()
        self._scroll_to_cursor()
        self.refresh()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Esc clears a filter; with none set it travels on (the screen interrupts the turn)
        if action == "clear_filter":
            return self.state_filter is not None or self.tool_filter is not None
        if action == "toggle_children":
            return self._agent_row() is not None  # elsewhere the key travels on
        return True

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = round(self.scroll_y) + offset.y - self.header_height
        if offset.y >= self.header_height and 0 <= index < len(self._view):
            self._move_cursor_to(index)
            self.post_message(CallSelected(self._view[index].call_id))

    def on_mount(self) -> None:
        # running rows show a live clock; only lines whose text changes are redrawn
        self.set_interval(0.5, self._tick)

    def _tick(self) -> None:
        top = round(self.scroll_y)
        shown = self.scrollable_content_region.height - self.header_height
        for index, row in enumerate(self._view[top: top + shown], top):
            if row.state == "running":
                self.refresh_line(index + self.header_height)

    # ---- rendering --------------------------------------------------------------------------

    def _style(self, name: str, cursor: bool = False) -> Any:
        key = f"{name}|{cursor}"
        style = self._styles.get(key)
        if style is None:
            base = self.visual_style
            if cursor:
                base = base + self.get_visual_style("tool-table--cursor")
            style = base if name == "base" else base + self.get_visual_style(f"tool-table--{name}", partial=True)
            if cursor and name != "base":
                style = style + self.get_visual_style("tool-table--cursor", partial=True)
            self._styles[key] = style = style.rich_style
        return style

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y < self.header_height:
            return self._header_line(y, width)
        index = round(self.scroll_y) + y - self.header_height
        if index >= len(self._view):
            return Strip.blank(width, self._style("base"))
        row = self._view[index]
        cursor = row.call_id == self.cursor_id
        elapsed = fmt_duration(row.elapsed_ms(self.clock()))
        key = (row.call_id, row.version, width, cursor, self.has_focus, elapsed)
        strip = self._line_cache.get(key)
        if strip is None:
            strip = self._line_cache[key] = self._row_line(row, width, cursor, elapsed)
        return strip

    def _header_line(self, y: int, width: int) -> Strip:
        if y == 1:
            states = "/".join(sorted(self.state_filter)) if self.state_filter else "any state"
            tool = one_line(self.tool_filter, 40) if self.tool_filter else "any tool"
            count = f"{len(self._view)} of {len(self.rows)}"
            text = f" filter: {states} · {tool} · {count}  (f: state, t: tool, esc: clear)"
            return Strip([Segment(fit(text, width), self._style("filter"))], width)
        style = self._style("header")
        cells = [fit(title, size, align) for _, title, size, align in layout(width)]
        return Strip([Segment(fit(" ".join(cells), width), style)], width)

    def _row_line(self, row: ToolRow, width: int, cursor: bool, elapsed: str) -> Strip:
        state_name = row.state.replace(" ", "-")
        state = f"{STATE_GLYPHS[row.state]} {row.state}"
        if row.state == "running" and row.progress is not None:
            state += f" {int(row.progress * 100)}%"
        elif row.error_code and row.state == "failed":
            state = f"{STATE_GLYPHS[row.state]} {row.error_code}"
        tool = one_line(row.tool_label)
        if row.parent is not None:
            tool = f"└ {tool}"
        elif row.children:
            tool = f"{'▸' if row.call_id in self.folded else '▾'} {tool} {row.children}"
        values = {
            "number": (str(row.number), "dim"),
            "tool": (tool, "tool"),
            "target": (one_line(short_path(row.target, self.cwd)), "base"),
            "state": (state, state_name),
            "group": (row.group, "dim"),
            "duration": (elapsed, "base"),
            "size": (fmt_bytes(row.output_bytes) if row.output_bytes else "", "dim"),
        }
        segments: list[Segment] = []
        gap = Segment(" ", self._style("base", cursor))
        for i, (name, _, size, align) in enumerate(layout(width)):
            if i:
                segments.append(gap)
            text, style = values[name]
            keep_end = name == "target" and looks_like_path(text)
            segments.append(Segment(fit(text, size, align, keep_end), self._style(style, cursor)))
        return Strip(segments).crop_extend(0, width, self._style("base", cursor))
