"""The detail pane of the selected call: Diff | Output | Input | Result | Events.

It shows one call (`show`) of the call records a screen's view model folds (`show_change`: what
an event changed), or of its own records when it is used alone (`apply` folds the event first);
only the shown call's views are touched by an event, and live output is appended, not reloaded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static, TabbedContent, TabPane

from tui_app.runtime.events import ToolCallError, ToolCallProgress, ToolCallResult, ToolCallStarted
from tui_app.view_model.call_records import CallRecord, CallRecords
from tui_app.view_model.tool_rows import state_of_error
from widgets.diff.view import DiffView
from widgets.output_view import OutputView
from widgets.text.formatting import fmt_duration, short_path
from widgets.text.line_render import load_css
from widgets.text.text_view import TextView
from widgets.text.untrusted import clean, one_line

TABS = ("diff", "output", "input", "result", "events")


def timeline_lines(record: CallRecord) -> list[Content]:
    """The call's events, timed from its request, then permission-wait and exec times."""
    if not record.timeline:
        return [Content("(no events yet)")]
    origin = next((e.ts for e in record.timeline if e.ts), 0.0)
    lines = []
    for entry in record.timeline:
        offset = f"{entry.ts - origin:>+9.3f}s" if entry.ts and origin else " " * 10
        lines.append(Content.assemble(
            (offset, "$foreground 50%"), "  ", (f"{entry.label:<26}", "bold"), Content(clean(one_line(entry.detail))),
        ))
    wait, exec_ms = record.wait_and_exec()
    lines.append(Content(""))
    lines.append(Content.assemble(
        ("permission wait ", "$foreground 60%"), (fmt_duration(wait) if wait is not None else "–", "bold"),
        ("   exec ", "$foreground 60%"), (fmt_duration(exec_ms) if exec_ms is not None else "–", "bold"),
    ))
    if record.output_chunks:
        lines.append(Content(f"{record.output_chunks:,} output chunks"))
    return lines


def state_label(record: CallRecord) -> str:
    outcome = record.outcome
    if isinstance(outcome, ToolCallResult):
        return "done"
    if isinstance(outcome, ToolCallError):
        return state_of_error(outcome)
    if record.started is not None:
        return "running"
    if record.permission is not None and record.resolution is None:
        return "awaiting approval"
    return "queued"


class DetailPane(Vertical):
    DEFAULT_CSS = load_css("detail")
    BINDINGS: ClassVar = [
        ("1", "tab('diff')", "Diff"), ("2", "tab('output')", "Output"), ("3", "tab('input')", "Input"),
        ("4", "tab('result')", "Result"), ("5", "tab('events')", "Events"),
    ]

    def __init__(self, records: CallRecords | None = None, *, cwd: str | None = None, artifact_hint: str = "",
                 clock: Callable[[], float] = time.time, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.cwd = cwd
        #: for a running command's time in the Output tab
        self.clock = clock
        #: how to open an artifact from here, said under the result that has one
        self.artifact_hint = artifact_hint
        self.records = records if records is not None else CallRecords()
        self.call_id: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content("No call selected"), id="detail-title")
        yield Static(Content(""), id="detail-flag")
        with TabbedContent(id="detail-tabs"):
            with TabPane("Diff", id="tab-diff"):
                yield DiffView(cwd=self.cwd, id="detail-diff")
            with TabPane("Output", id="tab-output"):
                yield OutputView(clock=self.clock, id="detail-output")
            with TabPane("Input", id="tab-input"):
                yield TextView(id="detail-input", line_numbers=True)
            with TabPane("Result", id="tab-result"):
                yield TextView(id="detail-result")
            with TabPane("Events", id="tab-events"):
                yield TextView(id="detail-events")

    @property
    def record(self) -> CallRecord | None:
        return self.records.get(self.call_id) if self.call_id else None

    @property
    def active_tab(self) -> str:
        return (self.query_one(TabbedContent).active or "tab-diff").removeprefix("tab-")

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = f"tab-{name}"

    # ---- feeding ----------------------------------------------------------------------------

    def apply(self, event: Any) -> None:
        """Fold one event into the pane's records and show what it changed (a pane on its own; a
        screen folds into its session's view model and calls `show_change`)."""
        self.show_change(event, self.records.apply(event))

    def show_change(self, event: Any, changed: Sequence[CallRecord]) -> None:
        """`event` changed these records (already folded): redraw the call shown if it is one."""
        if self.call_id is None or not any(r.call_id == self.call_id for r in changed):
            return
        record = self.record
        assert record is not None
        output = self.query_one("#detail-output", OutputView)
        if isinstance(event, ToolCallProgress):
            if event.kind == "output":
                output.write(event.text, event.stream or "stdout")
            return
        if isinstance(event, ToolCallStarted):
            output.apply(event)
        elif isinstance(event, ToolCallResult | ToolCallError):
            if record.bash is not None:
                output.load_display(record.bash)
            else:
                output.apply(event)
            self._show_result(record)
            self._show_diff(record)
        elif event.type == "PermissionRequested":
            self._show_diff(record)
            self._show_input(record)
        self._show_header(record)
        self.query_one("#detail-events", TextView).set_lines(timeline_lines(record))

    def replace_records(self, records: CallRecords) -> None:
        """Other records in one go (a replay stepping back); the call shown stays when it is
        among them, else the pane is as it was before any call."""
        self.records = records
        if self.call_id is not None and records.get(self.call_id) is not None:
            self.show(self.call_id)
            return
        self.show(None)
        self.query_one("#detail-diff", DiffView).clear()
        self.query_one("#detail-output", OutputView).clear()
        for name in ("input", "result", "events"):
            self.query_one(f"#detail-{name}", TextView).set_text("")
        self.action_tab("diff")

    def show(self, call_id: str | None) -> None:
        """Show one call (None: nothing). Picks the tab that says most about it."""
        self.call_id = call_id
        record = self.record
        if record is None:
            self.query_one("#detail-title", Static).update(Content("No call selected"))
            self.query_one("#detail-flag", Static).display = False
            return
        self._show_header(record)
        self._show_diff(record)
        self._show_output(record)
        self._show_input(record)
        self._show_result(record)
        self.query_one("#detail-events", TextView).set_lines(timeline_lines(record))
        never_ran = record.outcome is not None and record.started is None
        tab = ("diff" if record.diff else "result" if never_ran else "output" if record.has_output
               else "result" if record.outcome else "input")
        self.action_tab(tab)

    # ---- the parts --------------------------------------------------------------------------

    def _show_header(self, record: CallRecord) -> None:
        state = state_label(record)
        target = short_path(record.path, self.cwd) if record.path else record.command or ""
        title = Content.assemble(
            (one_line(record.tool or "?"), "bold"), "  ", Content(one_line(target, 300)), "  ",
            (f"· {state}", "$text-error" if state in ("failed", "denied") else "$foreground 70%"),
        )
        self.query_one("#detail-title", Static).update(title)
        flag = self.query_one("#detail-flag", Static)
        if record.external_change:
            flag.update(Content.assemble(
                ("⚠ file changed outside Vigil", "bold"), f" ({record.external_change}): ",
                Content(one_line(short_path(record.path or "", self.cwd))),
            ))
        flag.display = bool(record.external_change)

    def _show_diff(self, record: CallRecord) -> None:
        diff_view = self.query_one("#detail-diff", DiffView)
        if record.diff is not None:
            diff_view.load(record.diff)
        else:
            diff_view.clear("No diff for this call.")

    def _show_output(self, record: CallRecord) -> None:
        output = self.query_one("#detail-output", OutputView)
        if record.bash is not None:
            output.load_display(record.bash)
            return
        output.clear()
        if record.started is None:
            output.command = record.command or ""
            output.note = f"not run ({state_label(record)})" if record.outcome is not None else "not started yet"
            output.refresh_line(0)
            return
        output.apply(record.started)
        for stream, text in record.live_output:
            output.write(text, stream)  # type: ignore[arg-type]
        if record.dropped_bytes:
            output.note = f"{record.dropped_bytes:,} earlier bytes not kept on screen"
        if record.outcome is not None:
            output.apply(record.outcome)

    def _show_input(self, record: CallRecord) -> None:
        self.query_one("#detail-input", TextView).set_text(record.input_json(), language="json")

    def _show_result(self, record: CallRecord) -> None:
        text = record.result_text(self.artifact_hint) if record.outcome else "(no result yet)"
        self.query_one("#detail-result", TextView).set_text(text)
