"""The artifact viewer: any file, any size, on screen at once.

`ArtifactViewer` holds the scrolling lines (`ArtifactLines`), a status line with the index's
progress bar, and a one-line prompt for `:` (go to line), `/` and `?` (search forwards and
backwards). Keys: g/G top and bottom, n/N next and previous match, w wrap, f follow a growing
file, v select lines (or shift+arrows, or drag), c copy, o `$PAGER`, e `$EDITOR`.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Input, ProgressBar, Static

from widgets.text.external_open import external_command
from widgets.viewer.artifact_lines import ArtifactLines
from widgets.viewer.line_index import LineIndex
from widgets.viewer.line_search import Match, Query, SearchError, SearchRun

STYLES = Path(__file__).resolve().parents[2] / "styles"

PROMPTS = {
    "goto": "go to line: ",
    "search": "search forwards (regex): ",
    "search_back": "search backwards (regex): ",
}


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"  # pragma: no cover


@dataclass
class SearchState:
    query: Query
    forward: bool
    run: SearchRun | None = None
    count: int | None = None
    scanned: int = 0
    done: bool = False
    found: bool | None = None
    wrapped: bool = False


class ArtifactViewer(Vertical):
    DEFAULT_CSS = (STYLES / "artifact_viewer.tcss").read_text(encoding="utf-8")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("shift+up", "cursor(-1, True)", "Select up", show=False),
        Binding("shift+down", "cursor(1, True)", "Select down", show=False),
        Binding("pageup,b", "page(-1)", "Page up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("left,h", "pan(-8)", "Left", show=False),
        Binding("right,l", "pan(8)", "Right", show=False),
        Binding("g,home", "top", "Top"),
        Binding("G,end", "bottom", "Bottom"),
        Binding("colon", "prompt('goto')", "Go to line"),
        Binding("slash", "prompt('search')", "Search"),
        Binding("question_mark", "prompt('search_back')", "Search back", show=False),
        Binding("n", "next_match(True)", "Next"),
        Binding("N", "next_match(False)", "Prev", show=False),
        Binding("w", "toggle_wrap", "Wrap"),
        Binding("f", "toggle_follow", "Follow"),
        Binding("v", "toggle_select", "Select", show=False),
        Binding("c", "copy", "Copy"),
        Binding("o", "open_external('pager')", "Pager"),
        Binding("e", "open_external('editor')", "Editor", show=False),
        Binding("escape", "escape", "Clear", show=False),
    ]

    @dataclass
    class SearchFound(Message):
        run: SearchRun
        match: Match | None
        wrapped: bool

    @dataclass
    class SearchCounted(Message):
        run: SearchRun
        count: int
        scanned: int
        done: bool

    def __init__(self, path: str | os.PathLike[str] | None = None, *, follow: bool = False,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.path: Path | None = None
        self._initial = (path, follow)
        self.search: SearchState | None = None
        self.pending: tuple[str, int] | None = None
        self.message: str = ""
        #: the status line as last shown
        self.status = Text()
        self._prompt_kind: str | None = None
        self._selecting = False

    def compose(self) -> ComposeResult:
        yield ArtifactLines(id="artifact-lines")
        with Horizontal(id="artifact-status"):
            yield Static(id="artifact-status-text")
            yield ProgressBar(total=100, show_eta=False, id="artifact-progress")
        yield Input(id="artifact-prompt")

    def on_mount(self) -> None:
        self.query_one("#artifact-prompt", Input).display = False
        path, follow = self._initial
        if path is not None:
            self.open(path, follow=follow)
        else:
            self.update_status()

    @property
    def lines(self) -> ArtifactLines:
        return self.query_one(ArtifactLines)

    @property
    def index(self) -> LineIndex | None:
        return self.lines.index

    # ----------------------------------------------------------------- opening

    def open(self, path: str | os.PathLike[str], *, follow: bool = False) -> bool:
        """Show a file. False (and the reason in the status line) when it cannot be opened."""
        try:
            index = LineIndex(path)
        except OSError as exc:
            self.lines.detach()
            self.path = Path(path)
            self.message = f"cannot open: {exc.strerror or exc}"
            self.update_status()
            return False
        self.open_index(index, follow=follow)
        return True

    def open_index(self, index: LineIndex, *, follow: bool = False) -> None:
        """Show a file through an index built by the caller (started here)."""
        self._cancel_search()
        self.search, self.pending, self.message = None, None, ""
        self.path = Path(index.path)
        lines = self.lines
        lines.query, lines.match, lines.follow = None, None, follow
        lines.attach(index)
        if follow:
            self.call_after_refresh(self.action_bottom)
        self.update_status()

    def on_unmount(self) -> None:
        self._cancel_search()

    # ----------------------------------------------------------------- status

    def on_artifact_lines_changed(self, message: ArtifactLines.Changed) -> None:
        message.stop()
        self._resolve_pending()
        self.update_status()

    def update_status(self) -> None:
        lines, index = self.lines, self.index
        text = Text(no_wrap=True, overflow="ellipsis")
        bar = self.query_one("#artifact-progress", ProgressBar)
        if self.path is not None:
            text.append(self.path.name, style="bold")
        if index is None:
            bar.display = False
            if self.message:
                text.append(f"  {self.message}", style="red")
            self._show_status(text)
            return
        progress = lines.virtual.progress if lines.virtual else index.progress()
        text.append(f"  {human_size(progress.size)}  ")
        if progress.complete:
            text.append(f"{lines.total:,} lines")
        else:
            text.append(f"indexing {progress.newlines:,}+ lines", style="italic")
        bar.display = not progress.complete
        bar.update(progress=round(progress.fraction * 100, 1))
        if lines.total:
            known = progress.complete or (lines.virtual is not None and lines.virtual.exact) \
                or lines.cursor <= progress.newlines
            text.append(f"  line {lines.cursor + 1:,}" if known else "  line ?")
            low, high = lines.selection_range()
            if high > low:
                text.append(f"  {high - low + 1:,} selected")
        for flag, on in (("wrap", lines.wrap), ("follow", lines.follow)):
            if on:
                text.append(f"  [{flag}]", style="bold")
        if self.search is not None:
            text.append("  ")
            text.append_text(self._search_text(self.search, progress.size))
        if self.pending is not None:
            text.append(f"  going to line {self.pending[1] + 1:,} when indexed…" if self.pending[0] == "line"
                        else "  match found; locating its line…", style="italic")
        if self.message:
            text.append(f"  {self.message}", style="yellow")
        self._show_status(text)

    def _show_status(self, text: Text) -> None:
        self.status = text
        self.query_one("#artifact-status-text", Static).update(text)

    @staticmethod
    def _search_text(search: SearchState, size: int) -> Text:
        out = Text("/" if search.forward else "?", style="bold")
        out.append(search.query.text)
        if search.found is False:
            out.append("  no match", style="red")
        if search.count is not None:
            noun = "match" if search.count == 1 else "matches"
            out.append(f"  {search.count:,} {noun}")
            if not search.done:
                out.append(f" (scanning {100 * search.scanned // max(size, 1)}%)", style="italic")
        if search.wrapped:
            out.append("  wrapped", style="italic")
        return out

    # ----------------------------------------------------------------- moving

    def action_cursor(self, delta: int, extend: bool = False) -> None:
        self._leave_follow(delta < 0)
        lines = self.lines
        shown = [row.y for row in lines.current_page()]
        target = lines.cursor + delta
        if shown and not shown[0] <= lines.cursor <= shown[-1] and not (extend or self._selecting):
            # the wheel or the scrollbar moved the view away: start from what is on screen
            target = shown[0] if delta > 0 else shown[-1]
        lines.move_cursor(target, extend=extend or self._selecting)

    def action_page(self, direction: int) -> None:
        height = max(1, self.lines.scrollable_content_region.height - 1)
        self._leave_follow(direction < 0)
        self.lines.scroll_to(y=round(self.lines.scroll_y) + direction * height, animate=False)
        self.lines.move_cursor(self.lines.cursor + direction * height, extend=self._selecting)

    def action_pan(self, delta: int) -> None:
        if not self.lines.wrap:
            self.lines.scroll_to(x=max(0, round(self.lines.scroll_x) + delta), animate=False)

    def action_top(self) -> None:
        self._leave_follow(True)
        self.lines.scroll_to(y=0, animate=False)
        self.lines.move_cursor(0, extend=self._selecting)

    def action_bottom(self) -> None:
        lines = self.lines
        lines.scroll_to(y=lines.max_scroll_y, animate=False)
        lines.move_cursor(lines.total - 1, extend=self._selecting)

    def action_toggle_wrap(self) -> None:
        lines = self.lines
        lines.wrap = not lines.wrap
        lines.scroll_to(x=0, animate=False)
        if lines.index is not None:
            lines._relayout(lines.index.progress())
        lines.show_line(lines.cursor)
        self.update_status()

    def action_toggle_follow(self) -> None:
        self.lines.follow = not self.lines.follow
        if self.lines.follow:
            self.action_bottom()
        self.update_status()

    def _leave_follow(self, moving_up: bool) -> None:
        if moving_up and self.lines.follow:
            self.lines.follow = False

    # ----------------------------------------------------------------- selection and copy

    def action_toggle_select(self) -> None:
        lines = self.lines
        self._selecting = not self._selecting
        lines.anchor = lines.cursor if self._selecting else None
        lines.refresh()
        self.update_status()

    def action_copy(self) -> None:
        text, count, cut = self.lines.selected_text()
        if not count:
            return
        self.app.copy_to_clipboard(text)
        noun = "line" if count == 1 else "lines"
        self.message = f"copied {count:,} {noun}" + (f" (first {human_size(len(text.encode()))})" if cut else "")
        self.lines.anchor, self._selecting = None, False
        self.lines.refresh()
        self.update_status()

    def action_escape(self) -> None:
        if self._prompt_kind is not None:
            self._close_prompt()
            return
        self._selecting = False
        self.lines.anchor = None
        self.lines.refresh()
        self.message = ""
        self.update_status()

    # ----------------------------------------------------------------- prompt

    def action_prompt(self, kind: str) -> None:
        if self.index is None:
            return
        prompt = self.query_one("#artifact-prompt", Input)
        self._prompt_kind = kind
        prompt.placeholder = PROMPTS[kind]
        prompt.value = ""
        prompt.type = "integer" if kind == "goto" else "text"
        prompt.display = True
        prompt.focus()

    def _close_prompt(self) -> None:
        self._prompt_kind = None
        prompt = self.query_one("#artifact-prompt", Input)
        prompt.display = False
        self.lines.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        kind, value = self._prompt_kind, event.value.strip()
        self._close_prompt()
        if not value:
            return
        if kind == "goto":
            self.go_to_line(int(value) if value.lstrip("-").isdigit() else 0)
        elif kind in ("search", "search_back"):
            self.start_search(event.value, forward=kind == "search")

    def go_to_line(self, number: int) -> None:
        """Show line `number` (1-based) with the cursor on it, now or as soon as it is indexed."""
        self.message = ""
        if number < 1:
            self.message = "line numbers start at 1"
        else:
            self.pending = ("line", number - 1)
            self._leave_follow(True)
            self._resolve_pending()
        self.update_status()

    def _resolve_pending(self) -> None:
        lines, index = self.lines, self.index
        if self.pending is None or index is None or lines.virtual is None:
            return
        kind, value = self.pending
        progress = lines.virtual.progress
        if kind == "line":
            if progress.complete and value >= lines.total:
                self.message = f"the file has {lines.total:,} lines"
                value = lines.total - 1
            elif not (value <= progress.newlines or (lines.virtual.exact and value < lines.total)):
                return
        else:
            line = index.line_of_offset(value)
            if line is None:
                return
            value = line
        self.pending = None
        lines.anchor = None
        lines.cursor = value
        lines.show_line(value, place="third")
        lines.refresh()

    # ----------------------------------------------------------------- search

    def start_search(self, text: str, forward: bool = True) -> None:
        self.message = ""
        try:
            query = Query.parse(text)
        except SearchError as exc:
            self.message = str(exc)
            self.update_status()
            return
        self.lines.query = query
        self.lines.match = None
        self.lines.refresh()
        self.search = SearchState(query, forward)
        self._run_search(forward, count=True)

    def action_next_match(self, forward: bool) -> None:
        if self.search is None:
            return
        direction = forward if self.search.forward else not forward
        self._run_search(direction, count=False)

    def _run_search(self, forward: bool, count: bool) -> None:
        search, index = self.search, self.index
        if search is None or index is None:
            return
        self._cancel_search()
        buffer, size = index.snapshot()
        run: SearchRun | None = None

        def found(match: Match | None, wrapped: bool) -> None:
            assert run is not None
            self.post_message(self.SearchFound(run, match, wrapped))

        def counted(total: int, scanned: int, done: bool) -> None:
            assert run is not None
            self.post_message(self.SearchCounted(run, total, scanned, done))

        run = SearchRun(buffer, size, search.query, self._search_origin(forward), forward, found,
                        counted if count else None, still_readable=lambda: index.covers(size))
        search.run, search.found, search.wrapped = run, None, False
        run.start()
        self.update_status()

    def _search_origin(self, forward: bool) -> int:
        lines, index = self.lines, self.index
        assert index is not None
        cursor_start = lines.start_of(lines.cursor) or 0
        match = lines.match
        if match is not None and index.start_of_line_at(match.start) == cursor_start:
            return match.start + 1 if forward else match.start
        return cursor_start

    def on_artifact_viewer_search_found(self, message: SearchFound) -> None:
        search = self.search
        if search is None or message.run is not search.run:
            return
        search.found, search.wrapped = message.match is not None, message.wrapped
        if message.match is not None:
            self.lines.match = message.match
            self.pending = ("match", message.match.start)
            self._leave_follow(True)
            self._resolve_pending()
        self.update_status()

    def on_artifact_viewer_search_counted(self, message: SearchCounted) -> None:
        search = self.search
        if search is None or message.run is not search.run:
            return
        search.count, search.scanned, search.done = message.count, message.scanned, message.done
        self.update_status()

    def _cancel_search(self) -> None:
        if self.search is not None and self.search.run is not None:
            self.search.run.cancel()

    # ----------------------------------------------------------------- outside programs

    def action_open_external(self, kind: str) -> None:
        if self.path is None:
            return
        lines = self.lines
        known = lines.virtual is not None and (lines.virtual.exact or lines.cursor <= lines.virtual.progress.newlines)
        argv = external_command(kind, self.path, lines.cursor + 1 if known else None)
        try:
            with self.app.suspend():
                subprocess.run(argv, check=False)
        except SuspendNotSupported:
            self.message = "this terminal cannot hand the screen to another program"
        except OSError as exc:
            self.message = f"cannot run {argv[0]}: {exc.strerror or exc}"
        else:
            self.message = ""
        self.update_status()
        self.lines.refresh()
