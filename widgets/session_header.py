"""The one-line header of the main screen: session, model, permission mode, cwd, tokens, and
whether a turn is running. `HeaderState` (tui_app/view_model/header.py) folds the session events;
`SessionHeader` shows it.
"""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Static

from tui_app.view_model.header import HeaderState
from widgets.text.formatting import tilde
from widgets.text.line_render import load_css
from widgets.text.untrusted import one_line

MODE_STYLES = {
    "default": "$text-success",
    "acceptEdits": "bold $text-warning",
    "plan": "bold $text-primary",
    "dontAsk": "bold $text-warning",
    "bypassPermissions": "bold $text-error",
}


#: said in the header when Bash commands do not run in a sandbox
SANDBOX_LABELS = {"unavailable": ("⚠ no sandbox", "bold $text-error"), "off": ("sandbox off", "bold $text-warning")}


def fmt_tokens(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def header_content(state: HeaderState, cwd_label: str | None = None) -> Content:
    """The header's one line for `state` (`cwd_label`: shown instead of the real cwd)."""
    sep = (" · ", "$foreground 60%")
    parts: list[Any] = [(" Vigil ", "bold $text-primary")]
    if state.log_failure:  # first: the one thing that must not be cut off
        parts += [(f"⚠ LOG NOT SAVED ({one_line(state.log_failure, 40)}) ", "bold $text-error")]
    if state.tag:
        parts += [(f"[{state.tag}] ", "bold $text-warning")]
    parts += [(one_line(state.session_id or "starting…", 40), "$foreground 80%"), sep]
    if state.agent:
        parts += [(one_line(state.agent, 20), "bold $text-accent"), (" ", "")]
    parts += [(one_line(state.model or ("?" if not state.agent else "its default model"), 40), "bold"), sep,
              ("mode ", "$foreground 60%"), (state.mode, MODE_STYLES.get(state.mode, "bold")), sep]
    if state.agent_mode:  # the agent's own mode decides what it asks Vigil at all
        parts[-1:-1] = [(" · agent ", "$foreground 60%"), (one_line(state.agent_mode, 30), "bold")]
    if state.sandbox in SANDBOX_LABELS:
        parts += [SANDBOX_LABELS[state.sandbox], sep]
    if state.ended:
        parts.append(("ended", "$foreground 60%"))
    elif state.waiting:
        parts.append((f"◆ waiting for you ({state.waiting})", "bold $text-warning"))
    elif state.running:
        parts.append(("▶ working", "bold $text-primary"))
    else:
        parts.append(("idle", "$foreground 60%"))
    # the cwd last: on a narrow terminal it is what gets cut
    parts += [sep, (f"tokens {fmt_tokens(state.input_tokens)} in / {fmt_tokens(state.output_tokens)} out",
                    "$foreground 70%"), sep,
              (one_line(cwd_label if cwd_label is not None else tilde(state.cwd), 200), "$foreground 80%")]
    return Content.assemble(*parts)


class SessionHeader(Static):
    DEFAULT_CSS = load_css("session_header")

    def __init__(self, state: HeaderState | None = None, *, cwd_label: str | None = None,
                 id: str | None = None) -> None:
        super().__init__(Content(""), id=id)
        self.state = state or HeaderState()
        #: shown instead of the real cwd (a demo's temp copy, a snapshot's fixed path)
        self.cwd_label = cwd_label

    def on_mount(self) -> None:
        self.redraw()

    def apply(self, events: Any) -> None:
        if any([self.state.apply(event) for event in events]):
            self.redraw()

    def redraw(self) -> None:
        self.update(header_content(self.state, self.cwd_label))
