"""A gallery of the widgets fed with recorded session data, to look at them as a user would:

    python -m tests.tui.gallery            (e: edit approval, b: long command approval,
                                             o: output flood, d: big diff, l: light/dark, q: quit)

It is also how the widgets are meant to be wired: every event goes to table, chat and detail;
CallSelected / CallHighlighted choose what the detail pane shows.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input

from tests.tui.session_data import (
    CWD,
    NEW_STATS,
    OLD_STATS,
    T0,
    bash_request,
    edit_request,
    session_events,
)
from tui_app.app.screens.approval import ApprovalResult, ApprovalScreen
from tui_app.runtime.display import FileDiffDisplay
from tui_app.runtime.events import AssistantText, AssistantTextDelta, ToolCallProgress, TurnStarted
from widgets.chat import ChatView
from widgets.detail import DetailPane
from widgets.diff.view import DiffView
from widgets.messages import CallSelected
from widgets.tool_table import ToolTable

ANSWER = ("The failing test is **`MedianTest.test_even`**: for an even number of values `median` "
          "returns the upper middle value.\n\n```python\nreturn ordered[middle]\n```\n\n"
          "I'll change it to average the two middle values; see [the docs](https://example.com).")


class Gallery(App[None]):
    CSS = """
    #left { width: 45%; }
    #right { width: 55%; }
    ToolTable { height: 40%; border-bottom: solid $primary 30%; }
    Input { dock: bottom; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        ("e", "approve_edit", "Edit approval"), ("b", "approve_command", "Command approval"),
        ("o", "flood", "Output flood"), ("d", "big_diff", "Big diff"), ("l", "toggle_dark", "Light/dark"),
        ("q", "quit", "Quit"),
    ]

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="left"):
                yield ChatView(cwd=CWD)
                yield Input(placeholder="prompt")
            with Vertical(id="right"):
                yield ToolTable(cwd=CWD, clock=lambda: T0 + 9.0)
                yield DetailPane(cwd=CWD)
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one(ToolTable).focus()
        await self.feed(TurnStarted(turn_id="t1", prompt="Why does test_even fail? Fix it."))
        for i in range(0, len(ANSWER), 12):
            await self.feed(AssistantTextDelta(turn_id="t1", step=1, index=0, text=ANSWER[i:i + 12]))
        await self.feed(AssistantText(turn_id="t1", step=1, index=0, text=ANSWER))
        for event in session_events():
            await self.feed(event)
        self.query_one(ToolTable).select("toolu_04")
        self.query_one(DetailPane).show("toolu_04")

    async def feed(self, event: Any) -> None:
        self.query_one(ToolTable).apply(event)
        self.query_one(DetailPane).apply(event)
        await self.query_one(ChatView).apply(event)

    def on_call_selected(self, message: CallSelected) -> None:
        self.query_one(ToolTable).select(message.call_id)
        self.query_one(DetailPane).show(message.call_id)

    def on_tool_table_call_highlighted(self, message: ToolTable.CallHighlighted) -> None:
        self.query_one(DetailPane).show(message.call_id)

    def action_approve_edit(self) -> None:
        self.push_screen(ApprovalScreen(edit_request(), position=1, total=2, cwd="/home/dev/proj"), self.answered)

    def action_approve_command(self) -> None:
        command = "npm test -- " + " ".join(f"--reporter-option=path{i}/very/long/segment" for i in range(120))
        self.push_screen(ApprovalScreen(bash_request(command + "\n&& echo done"), position=2, total=2,
                                        cwd="/home/dev/proj"), self.answered)

    def answered(self, result: ApprovalResult | None) -> None:
        self.notify(repr(result), markup=False)

    async def action_flood(self) -> None:
        detail = self.query_one(DetailPane)
        detail.show("toolu_06")
        detail.action_tab("output")
        for burst in range(50):
            chunk = "".join(f"\x1b[3{i % 7 + 1}mline {burst * 200 + i}\x1b[0m building module {i}\n"
                            for i in range(200))
            await self.feed(ToolCallProgress(call_id="toolu_06", kind="output", stream="stdout", text=chunk))
            await asyncio.sleep(0.02)

    def action_big_diff(self) -> None:
        old = OLD_STATS * 400
        new = NEW_STATS * 400
        view = DiffView(FileDiffDisplay(path="calc/big.py", old_text=old, new_text=new, added=1600, removed=800))
        self.push_screen(_DiffScreen(view))

    def action_toggle_dark(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"


class _DiffScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [("escape", "app.pop_screen", "Back")]

    def __init__(self, view: DiffView) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        yield self.view
        yield Footer()

    def on_mount(self) -> None:
        self.view.focus()


if __name__ == "__main__":
    Gallery().run()
