"""The approval dialog: what a call will do, why Vigil asks, the full preview, and keyboard-first
answers. It is fed a PermissionRequested event and returns a plain ApprovalResult via `dismiss`.

Accidental approvals are the complaint users have about peers: keys pressed in the first
`key_guard_s` after the dialog opens (or after it changes step) are ignored (the guard of
`GuardedModal`), the dialog takes focus away from any prompt box without touching what was typed
there, Deny is always `n` and Esc, and "always allow" shows the exact rule text before a second
confirmation saves it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Literal

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Input, Static

from tui_app.app.screens.guarded_modal import KEY_GUARD_S, GuardedModal
from tui_app.runtime.commands import AnswerApproval
from tui_app.runtime.display import FileDiffDisplay, FileDiffsDisplay
from tui_app.runtime.events import PermissionRequested
from tui_app.runtime.permissions.broker import ApprovalAnswer
from widgets.approval_text import describe_action, describe_always, describe_facts, describe_reason
from widgets.diff.view import DiffView
from widgets.text.line_render import load_css
from widgets.text.text_view import TextView
from widgets.text.untrusted import one_line, plain

#: the share of the screen's height the dialog may take
DIALOG_HEIGHT_SHARE = 0.9
PREVIEW_LANGUAGES = {"command": "bash", "json": "json", "diff": "diff"}
RISK_STYLES = {"low": "$text-success", "medium": "$text-warning", "high": "bold $text-error"}


@dataclass(frozen=True)
class ApprovalResult:
    request_id: str
    decision: Literal["allow", "deny", "closed"]
    #: the hash of the input the user was shown; the broker refuses an answer for anything else
    input_sha256: str
    always: bool = False
    rules: tuple[str, ...] = ()
    feedback: str | None = None
    #: why the dialog was closed from outside (a hook answered first)
    closed_reason: str = ""
    #: denied with Esc rather than n
    escaped: bool = False

    def to_command(self) -> AnswerApproval | None:
        """The answer as a command of the session port (None when someone else decided)."""
        if self.decision == "closed":
            return None
        return AnswerApproval(request_id=self.request_id, decision=self.decision, input_sha256=self.input_sha256,
                              feedback=self.feedback, always=self.always, rules=list(self.rules), escaped=self.escaped)

    def to_answer(self) -> ApprovalAnswer | None:
        """The broker's answer (None when the dialog was closed because someone else decided)."""
        if self.decision == "closed":
            return None
        return ApprovalAnswer(decision=self.decision, decided_by="user", input_sha256=self.input_sha256,
                              feedback=self.feedback, always=self.always, rules=self.rules, escaped=self.escaped)


class ApprovalScreen(GuardedModal[ApprovalResult]):
    CLOSED_TITLE = "Approval closed"
    DEFAULT_CSS = load_css("approval")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "allow", "Allow once"),
        Binding("a", "always", "Always allow"),
        Binding("n", "deny", "Deny"),
        Binding("f", "feedback", "Deny with feedback"),
        Binding("escape", "escape", "Deny / back"),
    ]

    def __init__(self, request: PermissionRequested, *, position: int = 1, total: int = 1, cwd: str | None = None,
                 key_guard_s: float = KEY_GUARD_S, ring_bell: bool = True,
                 clock: Callable[[], float] = time.monotonic,
                 forward_keys: Callable[[str], None] | None = None, asked_by: str | None = None,
                 on_answer: Callable[[ApprovalResult], None] | None = None) -> None:
        super().__init__(key_guard_s=key_guard_s, ring_bell=ring_bell, clock=clock, forward_keys=forward_keys)
        #: told the answer the moment it is given, before the screen is popped (the agent waits on
        #: it; popping and restyling the screen below can take a frame or more)
        self.on_answer = on_answer
        self.request = request
        #: which subagent's call this is (None: the session's own agent)
        self.asked_by = asked_by
        self.position = position
        self.total = total
        self.cwd = cwd
        self.step: Literal["choose", "confirm_always", "feedback"] = "choose"

    # ---- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="approval-dialog"):
            yield Static(self._title(), id="approval-title")
            yield Static(plain(describe_action(request, self.cwd)), id="approval-what")
            yield Static(Content.assemble(plain(describe_reason(request)), "\n",
                                          (describe_facts(request), RISK_STYLES.get(request.risk, ""))),
                         id="approval-why")
            yield self._preview()
            yield Static(Content(""), id="approval-confirm")
            yield Input(placeholder="Tell the model what to do instead (Enter sends, Esc goes back)",
                        id="approval-feedback")
            yield Static(self._keys(), id="approval-keys")

    def _preview(self) -> Widget:
        request = self.request
        if self._is_diff:
            assert isinstance(request.preview_display, FileDiffDisplay | FileDiffsDisplay)
            return DiffView(request.preview_display, letter_keys=False, cwd=self.cwd, id="approval-preview")
        text = request.preview
        if not text and isinstance(request.input, dict) and isinstance(request.input.get("command"), str):
            text = request.input["command"]
        language = PREVIEW_LANGUAGES.get(request.preview_kind)
        return TextView(text or "(no preview)", language=language, line_numbers=request.preview_kind != "text",
                        id="approval-preview")

    def _title(self) -> Content:
        queue = f"{self.position} of {self.total}" if self.total > 1 else ""
        who: Content | str = ""
        if self.asked_by:
            who = Content.assemble(("   asked by ", "$foreground 70%"), plain(one_line(self.asked_by, 80), "bold"))
        return Content.assemble(("Approve ", "bold"), (one_line(self.request.tool, 60), "bold $text-primary"),
                                ("?", "bold"), who, ("   " + queue, "$text-warning bold") if queue else "")

    def _keys(self) -> Content:
        if self.step == "confirm_always":
            return Content.from_markup("[b]a[/b] save rule and allow   [b]esc[/b] back")
        if self.step == "feedback":
            return Content.from_markup("[b]enter[/b] deny and send feedback   [b]esc[/b] back")
        view = "s: split/unified   [ ]: previous/next hunk   arrows, pgup/pgdn: scroll" if self._is_diff \
            else "arrows, pgup/pgdn: scroll"
        return Content.from_markup(
            "[b]y[/b] allow once   [b]a[/b] always allow…   [b]n[/b] deny   [b]f[/b] deny with feedback   "
            "[b]esc[/b] deny\n[dim]$view[/dim]", view=view,
        )

    @property
    def _is_diff(self) -> bool:
        return isinstance(self.request.preview_display, FileDiffDisplay | FileDiffsDisplay)

    def on_mount(self) -> None:
        if self.done:  # decided elsewhere before it was even on screen: it is on its way out
            return
        self.query_one("#approval-confirm").display = False
        self.query_one("#approval-feedback").display = False
        preview = self.query_one("#approval-preview")
        preview.focus()
        self.watch(preview, "scroll_y", self._show_scroll_position)
        self.watch(preview, "virtual_size", self._show_scroll_position)
        self.watch(preview, "virtual_size", self._fit_to_preview)
        # the preview's rows are only known once it has its width
        self.call_after_refresh(self._show_scroll_position)
        self.call_after_refresh(self._fit_to_preview)
        self.opened()

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_to_preview)

    def _fit_to_preview(self) -> None:
        """A preview that fits gets a dialog just as tall as it; a longer one fills the dialog and scrolls."""
        dialog = self.query_one("#approval-dialog")
        preview = self.query_one("#approval-preview")
        if not dialog.outer_size.height:
            return
        chrome = dialog.outer_size.height - preview.outer_size.height
        room = int(self.size.height * DIALOG_HEIGHT_SHARE) - chrome - preview.styles.gutter.height
        self.set_class(0 < preview.virtual_size.height <= room, "-fits")

    def _show_scroll_position(self) -> None:
        """Say on the preview's border how much of it is in view, so nothing can hide below it."""
        preview = self.query_one("#approval-preview")
        total = preview.virtual_size.height
        shown = preview.scrollable_content_region.height
        if total <= shown or shown <= 0:
            preview.border_subtitle = ""
            return
        top = round(preview.scroll_y)
        more = " ↓ more below" if top + shown < total else ""
        preview.border_subtitle = f"rows {top + 1}–{min(total, top + shown)} of {total}{more}"

    # ---- state ------------------------------------------------------------------------------

    def set_queue(self, position: int, total: int) -> None:
        """More requests arrived (or were answered) while this one is shown."""
        self.position, self.total = position, total
        # a dialog still being composed takes the new numbers from `compose`
        for title in self.query("#approval-title").results(Static):
            title.update(self._title())

    def _set_step(self, step: Literal["choose", "confirm_always", "feedback"]) -> None:
        self.step = step
        # a new step gets its own guard, so a double tap cannot pass two steps at once
        self.arm()
        confirm = self.query_one("#approval-confirm", Static)
        feedback = self.query_one("#approval-feedback", Input)
        confirm.display = step == "confirm_always"
        feedback.display = step == "feedback"
        if step == "confirm_always":
            confirm.update(plain(describe_always(list(self.request.suggested_rules))))
        if step == "feedback":
            feedback.focus()
        else:
            self.query_one("#approval-preview").focus()
        self.query_one("#approval-keys", Static).update(self._keys())
        self.call_after_refresh(self._fit_to_preview)

    def answered(self, result: ApprovalResult) -> None:
        if self.on_answer is not None:
            self.on_answer(result)

    def _result(self, decision: Literal["allow", "deny", "closed"], **extra: object) -> ApprovalResult:
        return ApprovalResult(request_id=self.request.request_id, decision=decision,
                              input_sha256=self.request.input_sha256, **extra)  # type: ignore[arg-type]

    def closed_result(self, reason: str) -> ApprovalResult:
        """Someone else decided (a PermissionRequest hook answered first)."""
        return self._result("closed", closed_reason=reason)

    def guards(self, event: events.Key) -> bool:
        return self.step != "feedback"  # the feedback is typed text

    # ---- actions ----------------------------------------------------------------------------

    def action_allow(self) -> None:
        if self.armed and self.step == "choose":
            self.finish(self._result("allow"))

    def action_always(self) -> None:
        if not self.armed:
            return
        if self.step == "choose":
            if not self.request.suggested_rules:
                self.app.notify("There is no rule to save for this call; use y to allow once.", markup=False)
                return
            self._set_step("confirm_always")
        elif self.step == "confirm_always":
            self.finish(self._result("allow", always=True, rules=tuple(self.request.suggested_rules)))

    def action_deny(self) -> None:
        if self.armed and self.step == "choose":
            self.finish(self._result("deny"))

    def action_feedback(self) -> None:
        if self.armed and self.step == "choose":
            self._set_step("feedback")

    def action_escape(self) -> None:
        if not self.armed:
            return
        if self.step == "choose":
            self.finish(self._result("deny", escaped=True))
        else:
            self._set_step("choose")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.step == "feedback":
            text = event.value.strip()
            self.finish(self._result("deny", feedback=text or None))
