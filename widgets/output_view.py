"""Live shell output, built for floods.

RichLog took 6-8 s and ~320 MB for 100,000 lines here; this view keeps each line as the string it
arrived as (control sequences neutralised, colour kept), renders only the lines on screen, caches
what it rendered, and drops the oldest lines past `max_lines` (the artifact holds everything).
Colour that spans lines survives: each line remembers the SGR state it starts in.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui_app.runtime.display import BashOutputDisplay
from tui_app.runtime.results.sanitize import neutralize
from widgets.text.ansi_line import sgr_segments
from widgets.text.formatting import fmt_bytes, fmt_duration
from widgets.text.line_render import fit, load_css, set_virtual_size
from widgets.text.untrusted import one_line

Stream = Literal["stdout", "stderr"]

GUTTER = 2
#: rendered lines kept; a Strip is heavy for the garbage collector, and only a screenful is shown
STRIP_CACHE = 512
MAX_LINE_CHARS = 10_000
_SGR = re.compile(r"\x1b\[([0-9;:]*)m")
#: an escape sequence cut off at the end of a chunk; it is held back until the rest arrives
_INCOMPLETE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[P^_X][^\x1b]*)?$")
_MAX_SGR_STACK = 16


def _next_sgr_state(state: tuple[str, ...], line: str) -> tuple[str, ...]:
    """The SGR sequences in force after `line`: everything since the last reset."""
    if line.startswith(("\x1b[0m", "\x1b[m"), line.rfind("\x1b[")):
        return ()  # the usual coloured line ends with a plain reset: nothing carries over
    for match in _SGR.finditer(line):
        params = match.group(1)
        first = params.split(";", 1)[0]
        if first in ("", "0"):
            rest = params[len(first) + 1:] if ";" in params else ""
            state = (f"\x1b[{rest}m",) if rest else ()
        else:
            state = (*state, match.group(0))[-_MAX_SGR_STACK:]
    return state


def _visible_width(line: str) -> int:
    if "\x1b" in line:
        line = _SGR.sub("", line)
    return len(line) if line.isascii() else cell_len(line)


class OutputView(ScrollView, can_focus=True):
    """stdout and stderr of one command, in arrival order, with a header (command, exit, time)."""

    DEFAULT_CSS = load_css("output_view")
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "output-view--header", "output-view--ok", "output-view--failed", "output-view--running",
        "output-view--stderr-mark", "output-view--paused",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("end", "follow", "Follow", show=False),
    ]
    HEADER_HEIGHT = 1

    def __init__(self, max_lines: int = 50_000, *, clock: Callable[[], float] = time.time, name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.max_lines = max_lines
        #: wall clock for a running command's time (a replay passes the moment it shows)
        self.clock = clock
        self.follow = True
        self._lines: list[str] = []
        self._starts: list[tuple[str, ...]] = []
        self._stderr: list[bool] = []
        self._dropped = 0
        self._open: dict[str, int | None] = {"stdout": None, "stderr": None}
        self._sgr: dict[str, tuple[str, ...]] = {"stdout": (), "stderr": ()}
        self._carry: dict[str, str] = {"stdout": "", "stderr": ""}
        self._width = 0
        self._bytes = 0
        self._cache: LRUCache[tuple[int, int], Strip] = LRUCache(STRIP_CACHE)
        self._base: Style | None = None
        self._auto_scrolling = False
        self.command = ""
        self.exit_code: int | None = None
        self.duration_ms: int | None = None
        self.started: float | None = None
        self.status = ""
        self.note = ""

    # ---- header -----------------------------------------------------------------------------

    def start(self, command: str, started_at: float | None = None) -> None:
        """A command began (`started_at`: its wall-clock start, from the event)."""
        self.command = command
        self.started = started_at or self.clock()
        self.exit_code = self.duration_ms = None
        self.status = "running"
        self.refresh_line(0)

    def finish(self, exit_code: int | None, duration_ms: int | None = None, *, interrupted: bool = False,
               timed_out: bool = False, truncated: bool = False, artifact: str | None = None) -> None:
        self.exit_code = exit_code
        self.duration_ms = duration_ms
        self.status = "timed out" if timed_out else "interrupted" if interrupted else "finished"
        notes = []
        if truncated:
            notes.append("output cut for the screen")
        if artifact:
            notes.append(f"full output: {artifact}")
        self.note = "; ".join(notes)
        self.refresh_line(0)

    def load_display(self, display: BashOutputDisplay) -> None:
        """Show a finished command from its display model."""
        self.clear()
        self.command = display.command
        for segment in display.segments:
            self.write(segment.text, segment.stream)
        # the display keeps a bounded part of the output; the header tells the whole size
        self._bytes = max(self._bytes, display.total_bytes)
        self.finish(display.exit_code, display.duration_ms, interrupted=display.interrupted,
                    timed_out=display.timed_out, truncated=display.truncated, artifact=display.artifact_uri)

    # ---- content ----------------------------------------------------------------------------

    @property
    def line_count(self) -> int:
        return len(self._lines)

    @property
    def dropped_lines(self) -> int:
        return self._dropped

    def plain_lines(self) -> list[str]:
        """The kept lines without colour codes (for tests and copying)."""
        return [_SGR.sub("", line) for line in self._lines]

    def clear(self) -> None:
        self._lines.clear()
        self._starts.clear()
        self._stderr.clear()
        self._dropped = self._width = self._bytes = 0
        self._open = {"stdout": None, "stderr": None}
        self._sgr = {"stdout": (), "stderr": ()}
        self._carry = {"stdout": "", "stderr": ""}
        self._cache.clear()
        self.command, self.status, self.note = "", "", ""
        self.exit_code = self.duration_ms = self.started = None
        self.follow = True
        self._update_virtual_size()
        self.refresh()

    def write(self, text: str, stream: Stream = "stdout") -> None:
        """Append a chunk as it arrived (any split: mid-line, mid-escape-sequence)."""
        if not text:
            return
        self._bytes += len(text)
        text = self._carry[stream] + text
        self._carry[stream] = ""
        tail = text.rfind("\x1b", max(0, len(text) - 256))
        if tail != -1 and _INCOMPLETE.match(text, tail):
            text, self._carry[stream] = text[:tail], text[tail:]
        text = neutralize(text, keep_sgr=True)
        if "\t" in text:
            text = text.expandtabs(8)
        # every piece but the last ended in a newline; the last is the start of a line still open
        pieces = text.split("\n")
        last_index = self._open[stream]
        is_err = stream == "stderr"
        for i, piece in enumerate(pieces):
            if i == len(pieces) - 1 and not piece:
                break
            if i == 0 and last_index is not None:
                self._extend_line(last_index, piece, stream)
            else:
                self._add_line(piece, stream, is_err)
                last_index = len(self._lines) - 1
        self._open[stream] = last_index if pieces[-1] else None
        self._prune()
        self._update_virtual_size()
        self._after_write()

    def _add_line(self, line: str, stream: str, is_err: bool) -> None:
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" … ({len(line) - MAX_LINE_CHARS:,} more characters)"
        state = self._sgr[stream]
        self._lines.append(line)
        self._starts.append(state)
        self._stderr.append(is_err)
        if "\x1b" in line:
            self._sgr[stream] = _next_sgr_state(state, line)
        self._width = max(self._width, _visible_width(line))

    def _extend_line(self, index: int, more: str, stream: str) -> None:
        line = self._lines[index]
        if len(line) < MAX_LINE_CHARS:
            line = (line + more)[: MAX_LINE_CHARS]
            self._lines[index] = line
            if "\x1b" in more:
                self._sgr[stream] = _next_sgr_state(self._sgr[stream], more)
            self._width = max(self._width, _visible_width(line))
        self._cache.discard((self._dropped + index, 0))
        self.refresh_line(index + self.HEADER_HEIGHT)

    def _prune(self) -> None:
        # in chunks, so a flood does not pay for a list shift on every write
        excess = len(self._lines) - self.max_lines
        if excess <= 0 or (excess < self.max_lines // 10 and excess < 1000):
            return
        del self._lines[:excess]
        del self._starts[:excess]
        del self._stderr[:excess]
        self._dropped += excess
        for stream, index in self._open.items():
            self._open[stream] = None if index is None or index < excess else index - excess
        if not self.follow:
            # keep the lines the user is reading where they are
            self._auto_scrolling = True
            try:
                self.scroll_to(y=max(0, self.scroll_y - excess), animate=False, force=True)
            finally:
                self._auto_scrolling = False

    def _update_virtual_size(self) -> None:
        set_virtual_size(self, Size(self._width + GUTTER, len(self._lines) + self.HEADER_HEIGHT))

    def _after_write(self) -> None:
        if self.follow:
            self._auto_scrolling = True
            try:
                self.scroll_to(y=self.max_scroll_y, animate=False, force=True)
            finally:
                self._auto_scrolling = False
        self.refresh_line(0)

    # ---- follow mode ------------------------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._auto_scrolling:
            return
        at_end = new_value >= self.max_scroll_y
        if at_end != self.follow:
            self.follow = at_end
            self.refresh_line(0)

    def action_follow(self) -> None:
        self.follow = True
        self._after_write()

    # ---- rendering --------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()
        self._base = None

    @property
    def base_style(self) -> Style:
        """This widget's rich style, kept between frames (working it out walks every ancestor)."""
        if self._base is None:
            self._base = self.rich_style
        return self._base

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.base_style
        if y < self.HEADER_HEIGHT:
            return self._header(width)
        index = round(self.scroll_y) + y - self.HEADER_HEIGHT
        if index >= len(self._lines):
            return Strip.blank(width, base)
        key = (self._dropped + index, 0)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._render_text(index)
        scroll_x = round(self.scroll_x)
        body = strip.crop_extend(scroll_x, scroll_x + width - GUTTER, base)
        if self._stderr[index]:
            mark = Segment("▌ ", self.get_component_rich_style("output-view--stderr-mark"))
        else:
            mark = Segment("  ", base)
        return Strip([mark, *body], width)

    def _render_text(self, index: int) -> Strip:
        line = self._lines[index]
        base = self.base_style
        if "\x1b" not in line and not self._starts[index]:
            return Strip([Segment(line, base)], _visible_width(line))
        if "\r" not in line:
            segments, cells = sgr_segments("".join(self._starts[index]) + line, base)
            return Strip(segments, cells)
        text = Text.from_ansi("".join(self._starts[index]) + line, style=base, no_wrap=True, end="")
        segments = list(text.render(self.app.console, end=""))
        return Strip(segments, text.cell_len)

    def _header(self, width: int) -> Strip:
        parts: list[tuple[str, str]] = []
        command = one_line(self.command, 200) if self.command else "(no command)"
        parts.append((f" $ {command}", "output-view--header"))
        if self.status == "running":
            elapsed = (self.clock() - self.started) * 1000 if self.started else None
            parts.append((f"  ▶ running {fmt_duration(elapsed)}", "output-view--running"))
        elif self.status:
            if self.status in ("timed out", "interrupted"):
                verdict, cls = self.status, "output-view--failed"
            elif self.exit_code is None:
                verdict, cls = "finished", "output-view--ok"
            else:
                verdict = f"exit {self.exit_code}"
                cls = "output-view--ok" if self.exit_code == 0 else "output-view--failed"
            if self.duration_ms is not None:
                verdict += f" · {fmt_duration(self.duration_ms)}"
            parts.append((f"  {verdict}", cls))
        info = f"  {len(self._lines):,} lines · {fmt_bytes(self._bytes)}"
        if self._dropped:
            info += f" · {self._dropped:,} earlier lines not kept"
        if self.note:
            info += f" · {one_line(self.note)}"
        parts.append((info, "output-view--header"))
        if not self.follow:
            parts.append(("  ⏸ paused (End follows)", "output-view--paused"))
        segments = []
        used = 0
        for text, cls in parts:
            text = fit(text, max(0, width - used)) if used + cell_len(text) > width else text
            segments.append(Segment(text, self.get_component_rich_style(cls)))
            used += cell_len(text)
        pad = self.get_component_rich_style("output-view--header")
        return Strip(segments, used).extend_cell_length(width, pad)

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick_clock)

    def _tick_clock(self) -> None:
        if self.status == "running":
            self.refresh_line(0)

    def apply(self, event: Any) -> None:
        """Feed the events of the call being shown (ToolCallStarted / Progress / Result / Error)."""
        kind = getattr(event, "type", "")
        if kind == "ToolCallStarted":
            command = event.input.get("command") if isinstance(event.input, dict) else None
            self.start(command if isinstance(command, str) else event.target, event.ts or None)
        elif kind == "ToolCallProgress" and event.kind == "output":
            self.write(event.text, event.stream or "stdout")
        elif kind in ("ToolCallResult", "ToolCallError"):
            display = event.display
            if isinstance(display, BashOutputDisplay):
                self.finish(display.exit_code, display.duration_ms, interrupted=display.interrupted,
                            timed_out=display.timed_out, truncated=display.truncated,
                            artifact=display.artifact_uri)
            else:
                code = event.code if kind == "ToolCallError" else ""
                self.finish(None, event.metrics.exec_ms or None, interrupted=code == "cancelled",
                            timed_out=code == "timeout")
