"""Our diff viewer for a FileDiffDisplay (or a FileDiffsDisplay: several files, each under its
own header, hunks navigated across all of them): unified or side-by-side, syntax highlighted,
word-level emphasis on replaced lines, hunk navigation, line numbers. Line API, so a 10,000-line
diff scrolls like a short one; building and highlighting a big diff runs in a thread worker.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from textual import work
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.style import Style

from tui_app.runtime.display import FileDiffDisplay, FileDiffsDisplay
from widgets.diff.highlighting import highlight_lines, language_for
from widgets.diff.model import DiffLine, DiffModel, build_diff, build_diffs, changed_spans, describe_change
from widgets.text.formatting import short_path
from widgets.text.line_render import content_segments, fit, load_css
from widgets.text.untrusted import one_line

#: texts bigger than this are diffed off the UI thread; diffs with more source rows than this are
#: highlighted off it (highlighting costs ~0.1 ms a row: 300 stay within a frame, 1,800 took 170 ms)
SYNC_CHARS = 150_000
SYNC_ROWS = 300
#: until the whole diff is highlighted, the rows on screen are: their source lines and this many
#: before them (so a construct opened just above, a docstring, colours right more often)
WINDOW_LEAD = 40
#: what the whole diff's highlighting waits for, so the first screen is drawn before it starts
FIRST_SCREEN_S = 0.05
HEADER_HEIGHT = 1
#: rendered lines kept; a Strip is heavy for the garbage collector, and only a screenful is shown
STRIP_CACHE = 512
SIGNS = {"removed": "-", "added": "+", "context": " ", "hunk": "", "note": "", "file": ""}
#: lines drawn across the whole width (no gutter, no sign)
BANNERS = ("hunk", "note", "file")


class DiffView(ScrollView, can_focus=True):
    DEFAULT_CSS = load_css("diff_view")
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff-view--header", "diff-view--hunk", "diff-view--hunk-current", "diff-view--gutter",
        "diff-view--removed", "diff-view--added", "diff-view--removed-word", "diff-view--added-word",
        "diff-view--removed-sign", "diff-view--added-sign", "diff-view--empty", "diff-view--note",
        "diff-view--separator",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right_square_bracket", "hunk(1)", "Next hunk"),
        Binding("left_square_bracket", "hunk(-1)", "Previous hunk"),
        Binding("n", "letter_hunk(1)", "Next hunk", show=False),
        Binding("p", "letter_hunk(-1)", "Previous hunk", show=False),
        Binding("s", "toggle_split", "Split/unified"),
    ]

    split: reactive[bool] = reactive(False)
    current_hunk: reactive[int] = reactive(0)

    class Ready(Message):
        """The diff is built and highlighted (posted after a background load too)."""

        def __init__(self, diff_view: DiffView) -> None:
            super().__init__()
            self.diff_view = diff_view

        @property
        def control(self) -> DiffView:
            return self.diff_view

    def __init__(self, display: FileDiffDisplay | FileDiffsDisplay | None = None, *, split: bool = False,
                 letter_keys: bool = True, cwd: str | None = None, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.cwd = cwd
        #: n/p move between hunks; off where those letters mean something else (the approval dialog)
        self.letter_keys = letter_keys
        self.model: DiffModel | None = None
        self.loading_text = ""
        self._old_hl: list[Content] | None = None
        self._new_hl: list[Content] | None = None
        #: rows on screen highlighted ahead of the whole diff: source index → line, per side
        self._window_hl: dict[str, dict[int, Content]] = {"old": {}, "new": {}}
        self._language: str | None = None
        self._window_key: tuple[Any, ...] | None = None
        self._generation = 0
        self._cache: LRUCache[tuple[Any, ...], Strip] = LRUCache(STRIP_CACHE)
        self._text_width = 0
        self.set_reactive(DiffView.split, split)
        if display is not None:
            self.load(display)

    # ---- loading ----------------------------------------------------------------------------

    def load(self, display: FileDiffDisplay | FileDiffsDisplay, *, background: bool | None = None) -> None:
        """Show `display`. Small diffs are ready at once; big ones are built in a thread and show
        "preparing" until then (`background` forces either way)."""
        self._generation += 1
        files = display.files if isinstance(display, FileDiffsDisplay) else [display]
        size = sum(len(f.old_text or "") + len(f.new_text or "") for f in files)
        if background is None:
            background = size > SYNC_CHARS
        self.model = None
        self._old_hl = self._new_hl = None
        self._cache.clear()
        self.current_hunk = 0
        if background:
            what = one_line(files[0].path) if len(files) == 1 else f"{len(files)} files"
            self.loading_text = f"preparing the diff of {what} …"
            self._update_size()
            self.refresh()
            self._build_in_thread(display, self._generation)
            return
        model = _model_of(display, self.cwd)
        if len(model.old_source) + len(model.new_source) > SYNC_ROWS:
            # shown at once, the rows on screen highlighted first; the rest follows from a thread
            # that lets that first screen be drawn before it starts (it competes for the GIL)
            self._set_model(self._generation, model, None, None)
            self._highlight_in_thread(model, self._generation, delay=FIRST_SCREEN_S)
            return
        self._set_model(self._generation, model, *highlight_model(model))

    def clear(self, message: str = "") -> None:
        """No diff; `message` says why (shown where the diff would be)."""
        self._generation += 1
        self.model = None
        self._old_hl = self._new_hl = None
        self.loading_text = message
        self._cache.clear()
        self._update_size()
        self.refresh()

    @work(thread=True, exclusive=True, group="diff-build")
    def _build_in_thread(self, display: FileDiffDisplay | FileDiffsDisplay, generation: int) -> None:
        model = _model_of(display, self.cwd)
        highlight_lines(["x = 1"], language_for(model.path))  # the lexer's first use is slow: not on the UI thread
        self.app.call_from_thread(self._set_model, generation, model, None, None)
        time.sleep(FIRST_SCREEN_S)  # the first screen (highlighted on its own) is drawn before the whole is
        self._highlight(model, generation)

    @work(thread=True, exclusive=True, group="diff-build")
    def _highlight_in_thread(self, model: DiffModel, generation: int, delay: float = 0.0) -> None:
        if delay:
            time.sleep(delay)
        self._highlight(model, generation)

    def _highlight(self, model: DiffModel, generation: int) -> None:
        self.app.call_from_thread(self._set_model, generation, model, *highlight_model(model))

    def _set_model(self, generation: int, model: DiffModel, old_hl: list[Content] | None,
                   new_hl: list[Content] | None) -> None:
        if generation != self._generation:
            return  # a newer load won
        if model is not self.model:
            self._window_hl = {"old": {}, "new": {}}
            # several files have a language each: their window is not highlighted ahead (they are small)
            self._language = language_for(model.path) if not model.sections else None
        self.model = model
        self._old_hl, self._new_hl = old_hl, new_hl
        self.loading_text = ""
        self._text_width = max((cell_len(line.text) for line in model.lines), default=0)
        self._cache.clear()
        self._update_size()
        self.refresh()
        if old_hl is not None or not model.lines:
            self.post_message(self.Ready(self))

    @property
    def is_ready(self) -> bool:
        return self.model is not None and self._new_hl is not None

    # ---- geometry ---------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        if self.model is None:
            return 1 if self.loading_text else 0
        return len(self.model.split_rows) if self.split else len(self.model.lines)

    def _number_width(self) -> int:
        return max(3, len(str(self.model.max_line_no))) if self.model else 3

    def _text_area_width(self) -> int:
        width = self.scrollable_content_region.width
        number = self._number_width()
        if self.split:
            return max(1, (width - 1) // 2 - number - 4)
        return max(1, width - 2 * number - 5)

    def _update_size(self) -> None:
        width = self.scrollable_content_region.width
        extra = max(0, self._text_width - self._text_area_width())
        self.virtual_size = Size(width + extra, self.row_count + HEADER_HEIGHT)

    def on_resize(self) -> None:
        self._update_size()

    def watch_split(self) -> None:
        self._cache.clear()
        self._update_size()
        self.scroll_to(x=0, animate=False, force=True)
        self._scroll_to_hunk(self.current_hunk)
        self.refresh()

    def watch_current_hunk(self) -> None:
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    # ---- navigation -------------------------------------------------------------------------

    def _hunk_rows(self) -> list[int]:
        if self.model is None:
            return []
        return self.model.split_hunk_rows if self.split else self.model.hunk_starts

    def _scroll_to_hunk(self, index: int) -> None:
        rows = self._hunk_rows()
        if rows:
            self.scroll_to(y=rows[max(0, min(index, len(rows) - 1))], animate=False, force=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # a disabled binding lets the key travel on to the screen's bindings
        return self.letter_keys or action != "letter_hunk"

    def action_hunk(self, step: int) -> None:
        self._go_hunk(step)

    def action_letter_hunk(self, step: int) -> None:
        self._go_hunk(step)

    def _go_hunk(self, step: int) -> None:
        rows = self._hunk_rows()
        if not rows:
            return
        self.current_hunk = max(0, min(len(rows) - 1, self.current_hunk + step))
        self._scroll_to_hunk(self.current_hunk)

    def action_toggle_split(self) -> None:
        self.split = not self.split

    # ---- rendering --------------------------------------------------------------------------

    def _vstyle(self, name: str) -> Style:
        return self.get_visual_style(f"diff-view--{name}", partial=True)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.visual_style
        if y < HEADER_HEIGHT:
            return self._header(width)
        row = round(self.scroll_y) + y - HEADER_HEIGHT
        if self.model is None:
            if row == 0 and self.loading_text:
                return Strip([Segment(fit(" " + self.loading_text, width), (base + self._vstyle("note")).rich_style)])
            return Strip.blank(width, base.rich_style)
        if row >= self.row_count:
            return Strip.blank(width, base.rich_style)
        if self._new_hl is None:
            self._highlight_window()
        if self.split:
            left, right = self.model.split_rows[row]
            return self._split_line(left, right, width)
        return self._unified_line(row, width)

    def _header(self, width: int) -> Strip:
        style = (self.visual_style + self._vstyle("header")).rich_style
        if self.model is None:
            return Strip([Segment(fit(" diff", width), style)])
        model = self.model
        hunks = len(model.hunk_starts)
        where = f"hunk {self.current_hunk + 1}/{hunks}" if hunks else "no hunks"
        mode = "side by side" if self.split else "unified"
        keys = "n/p" if self.letter_keys else "[/]"
        found = model.section_of_hunk(self.current_hunk)
        if found is not None:  # several files: the one the current hunk is in
            number, section = found
            path = one_line(short_path(section.path, self.cwd))
            text = (f" file {number + 1}/{len(model.sections)}: {path} ({section.operation})  +{section.added} "
                    f"−{section.removed}  ·  {where}  ·  {mode}  ·  {keys} hunk, s split")
        else:
            path = one_line(short_path(model.path, self.cwd))
            text = (f" {path} ({model.operation})  +{model.added} −{model.removed}  ·  {where}  ·  "
                    f"{mode}  ·  {keys} hunk, s split")
        if not self.is_ready:
            text += "  · highlighting…"
        return Strip([Segment(fit(text, width), style)])

    def _line_style(self, line: DiffLine) -> Style:
        base = self.visual_style
        if line.kind in ("removed", "added"):
            return base + self._vstyle(line.kind)
        if line.kind == "hunk":
            current = line.hunk == self.current_hunk
            return base + self._vstyle("hunk-current" if current else "hunk")
        if line.kind == "note":
            return base + self._vstyle("note")
        if line.kind == "file":
            return base + self._vstyle("header")
        return base

    def _highlight_window(self) -> None:
        """Highlight the source lines of the rows on screen (and a few before them) now, ahead of
        the whole diff: the first screen is coloured within a frame, whatever the diff's size."""
        model = self.model
        if model is None or self._new_hl is not None or not self._language:
            return
        top = round(self.scroll_y)
        height = self.scrollable_content_region.height
        key = (id(model), top, height, self.split)
        if key == self._window_key:
            return  # this screen's rows are done (render_line asks once per row)
        self._window_key = key
        rows = range(top, min(self.row_count, top + height))
        wanted: dict[str, set[int]] = {"old": set(), "new": set()}
        indices = [i for row in rows for i in (model.split_rows[row] if self.split else (row,)) if i is not None]
        for index in indices:
            line = model.lines[index]
            if line.kind in BANNERS or line.src < 0:
                continue
            side = "old" if line.kind == "removed" else "new"
            if line.src not in self._window_hl[side]:
                wanted[side].add(line.src)
        for side, srcs in wanted.items():
            if not srcs:
                continue
            source = model.old_source if side == "old" else model.new_source
            lo, hi = max(0, min(srcs) - WINDOW_LEAD), max(srcs) + 1
            done = self._window_hl[side]
            for offset, content in enumerate(highlight_lines(source[lo:hi], self._language)):
                done.setdefault(lo + offset, content)

    def _line_content(self, index: int) -> Content:
        """The text of line `index`, highlighted when ready, with its changed words emphasised."""
        assert self.model is not None
        line = self.model.lines[index]
        if line.kind in BANNERS:
            return Content(line.text)
        source = self._old_hl if line.kind == "removed" else self._new_hl
        if source is not None and 0 <= line.src < len(source):
            content = source[line.src]
        else:
            window = self._window_hl["old" if line.kind == "removed" else "new"]
            content = window.get(line.src) or Content(line.text)
        if line.pair is not None:
            partner = self.model.lines[line.pair]
            old, new = (line.text, partner.text) if line.kind == "removed" else (partner.text, line.text)
            old_spans, new_spans = changed_spans(old, new)
            spans = old_spans if line.kind == "removed" else new_spans
            word = self._vstyle(f"{line.kind}-word")
            for start, end in spans:
                content = content.stylize(word, start, end)
        return content

    def _text_strip(self, index: int) -> Strip:
        """The whole (uncropped) text of a line, cached."""
        assert self.model is not None
        line = self.model.lines[index]
        side = "old" if line.kind == "removed" else "new"
        key = ("text", index, self._new_hl is not None or line.src in self._window_hl[side])
        strip = self._cache.get(key)
        if strip is None:
            assert self.model is not None
            style = self._line_style(self.model.lines[index])
            content = self._line_content(index)
            strip = self._cache[key] = Strip(content_segments(content, style), content.cell_length)
        return strip

    def _cell(self, index: int | None, text_width: int, number_width: int, side: str) -> list[Segment]:
        """Gutter (line number and sign) plus the horizontally scrolled text of one side."""
        base = self.visual_style
        if index is None:
            empty = (base + self._vstyle("empty")).rich_style
            return [Segment(" " * (number_width + 4 + text_width), empty)]
        assert self.model is not None
        line = self.model.lines[index]
        style = self._line_style(line)
        if line.kind in BANNERS:
            return [Segment(fit(" " + line.text, number_width + 4 + text_width), style.rich_style)]
        number = line.old_no if side == "old" else line.new_no
        gutter = (base + self._vstyle("gutter")).rich_style
        sign_style = style + self._vstyle(f"{line.kind}-sign") if line.kind != "context" else style
        scroll_x = round(self.scroll_x)
        body = self._text_strip(index).crop_extend(scroll_x, scroll_x + text_width, style.rich_style)
        return [
            Segment(f"{number if number is not None else '':>{number_width}} ", gutter),
            Segment(f"{SIGNS[line.kind]} ", sign_style.rich_style),
            *body,
            Segment(" ", style.rich_style),
        ]

    def _unified_line(self, index: int, width: int) -> Strip:
        assert self.model is not None
        line = self.model.lines[index]
        number_width = self._number_width()
        text_width = self._text_area_width()
        if line.kind in BANNERS:
            style = self._line_style(line).rich_style
            return Strip([Segment(fit(" " + line.text, width), style)])
        base = self.visual_style
        gutter = (base + self._vstyle("gutter")).rich_style
        old = f"{line.old_no:>{number_width}} " if line.old_no is not None else " " * (number_width + 1)
        segments = [Segment(old, gutter), *self._cell(index, text_width, number_width, "new")]
        return Strip(segments).crop_extend(0, width, base.rich_style)

    def _split_line(self, left: int | None, right: int | None, width: int) -> Strip:
        assert self.model is not None
        number_width = self._number_width()
        text_width = self._text_area_width()
        if left is not None and left == right and self.model.lines[left].kind in BANNERS:
            style = self._line_style(self.model.lines[left]).rich_style
            return Strip([Segment(fit(" " + self.model.lines[left].text, width), style)])
        separator = Segment("│", (self.visual_style + self._vstyle("separator")).rich_style)
        segments = [*self._cell(left, text_width, number_width, "old"), separator,
                    *self._cell(right, text_width, number_width, "new")]
        return Strip(segments).crop_extend(0, width, self.visual_style.rich_style)

    def summary(self) -> str:
        """Plain words for what the diff does ("1 line replaced", "3 lines added, 1 removed")."""
        if self.model is None:
            return ""
        return describe_change(self.model.added, self.model.removed, self.model.operation)



def _model_of(display: FileDiffDisplay | FileDiffsDisplay, cwd: str | None = None) -> DiffModel:
    return build_diffs(display.files, cwd=cwd) if isinstance(display, FileDiffsDisplay) else build_diff(display)


def highlight_model(model: DiffModel) -> tuple[list[Content], list[Content]]:
    """Both sources highlighted, each file's part in its own language."""
    if not model.sections:
        language = language_for(model.path)
        return highlight_lines(model.old_source, language), highlight_lines(model.new_source, language)
    old_hl: list[Content] = []
    new_hl: list[Content] = []
    bounds = [*model.sections[1:], None]
    for section, following in zip(model.sections, bounds, strict=True):
        language = language_for(section.path)
        old_end = following.old_src if following is not None else len(model.old_source)
        new_end = following.new_src if following is not None else len(model.new_source)
        old_hl += highlight_lines(model.old_source[section.old_src:old_end], language)
        new_hl += highlight_lines(model.new_source[section.new_src:new_end], language)
    return old_hl, new_hl
