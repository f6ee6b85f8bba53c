"""Untrusted text through every widget and the dialog (docs/architecture.md §6): markup-looking strings are shown
literally, no click action appears, and no control byte reaches the terminal."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult

from tests.tui.helpers import click_actions, control_characters, screen_text
from tests.tui.session_data import NASTY, NASTY_TEXT, SHELL, T0
from tui_app.app.screens.approval import ApprovalScreen
from tui_app.runtime.display import BashOutputDisplay, FileDiffDisplay, OutputSegment
from tui_app.runtime.events import (
    AssistantText,
    AssistantTextDelta,
    FileChangedExternally,
    ModelRetry,
    PermissionRequested,
    ToolCallError,
    ToolCallProgress,
    ToolCallRequested,
    ToolCallResult,
    ToolCallStarted,
    TurnEnded,
    TurnStarted,
    Warning,
)
from widgets.chat import ChatView
from widgets.detail import DetailPane
from widgets.diff.view import DiffView
from widgets.output_view import OutputView
from widgets.text.text_view import TextView
from widgets.tool_table import ToolTable

#: what must show literally wherever a whole nasty string fits
LITERALS = ["[bold]x", "[@click=app.quit]x[/]", "[/"]
NASTY_PATH = "/p/[bold]x/[@click=app.quit]x[/].py"
NASTY_DIFF = FileDiffDisplay(path=NASTY_PATH, old_text=f"a = 1\n{NASTY_TEXT}\n", new_text=f"a = 2\n{NASTY_TEXT}!\n")


def nasty_call_events(call_id: str = "c1") -> list[Any]:
    data = {"command": NASTY_TEXT, "file_path": NASTY_PATH}
    return [
        ToolCallRequested(call_id=call_id, step=1, index=0, name="Bash[bold]", input=data, ts=T0),
        ToolCallStarted(call_id=call_id, tool="Bash[bold]", input=data, target=NASTY_TEXT, flags=SHELL, ts=T0),
        *(ToolCallProgress(call_id=call_id, kind="output", stream=s, text=t + "\n")
          for s, t in zip(["stdout", "stderr"] * 4, NASTY, strict=False)),
        ToolCallProgress(call_id=call_id, kind="message", text=NASTY_TEXT),
    ]


def nasty_result(call_id: str = "c1") -> ToolCallResult:
    display = BashOutputDisplay(command=NASTY_TEXT, segments=[OutputSegment(stream="stdout", text=NASTY_TEXT)],
                                exit_code=0)
    return ToolCallResult(call_id=call_id, tool="Bash[bold]", model_content=NASTY_TEXT, display=display, ts=T0 + 1)


def nasty_request() -> PermissionRequested:
    return PermissionRequested(
        call_id="c1", request_id="r1", tool="Bash[@click=app.quit]", input={"command": NASTY_TEXT},
        input_sha256="0" * 64, summary=NASTY_TEXT, reason=NASTY_TEXT, decided_by="rule",
        preview_kind="command", preview=NASTY_TEXT, suggested_rules=[f"Bash({NASTY_TEXT})"],
    )


class Harness(App[None]):
    def __init__(self, widget: Any) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


async def feed_table(app: Harness) -> None:
    for event in [*nasty_call_events(), nasty_result()]:
        app.widget.apply(event)


async def feed_output(app: Harness) -> None:
    app.widget.start(NASTY_TEXT)
    for text in NASTY:
        app.widget.write(text + "\n", "stderr")
        app.widget.write(text)
    app.widget.write("\n")


async def feed_diff(app: Harness) -> None:
    app.widget.load(NASTY_DIFF)


async def feed_text(app: Harness) -> None:
    app.widget.set_text(NASTY_TEXT.replace(" ", "\n"), language="json")


async def feed_chat(app: Harness) -> None:
    chat: ChatView = app.widget
    await chat.apply(TurnStarted(turn_id="t", prompt=NASTY_TEXT))
    for piece in NASTY:
        await chat.apply(AssistantTextDelta(turn_id="t", step=1, index=0, text=piece + "\n\n"))
    await chat.apply(AssistantText(turn_id="t", step=1, index=0, text="\n\n".join(NASTY) + "\n\n"))
    for event in [*nasty_call_events(), nasty_result()]:
        await chat.apply(event)
    await chat.apply(ModelRetry(attempt=1, max_attempts=2, reason=NASTY_TEXT, wait_ms=10))
    await chat.apply(Warning(code="[bold]x", message=NASTY_TEXT))
    await chat.apply(TurnEnded(turn_id="t", reason="error", message=NASTY_TEXT))


async def feed_detail(app: Harness) -> None:
    pane: DetailPane = app.widget
    for event in nasty_call_events():
        pane.apply(event)
    pane.show("c1")
    pane.apply(ToolCallError(call_id="c1", tool="Bash[bold]", phase="execute", code="execution_failed",
                             message=NASTY_TEXT, model_content=NASTY_TEXT))
    pane.apply(FileChangedExternally(path=NASTY_PATH))


CASES = {
    "tool table": (lambda: ToolTable(clock=lambda: T0), feed_table, []),
    "output view": (lambda: OutputView(), feed_output, []),
    "diff view": (lambda: DiffView(), feed_diff, []),
    "text view": (lambda: TextView(), feed_text, []),
    "chat": (lambda: ChatView(), feed_chat, []),
    "detail output": (lambda: DetailPane(), feed_detail, ["output"]),
    "detail input": (lambda: DetailPane(), feed_detail, ["input"]),
    "detail result": (lambda: DetailPane(), feed_detail, ["result"]),
    "detail events": (lambda: DetailPane(), feed_detail, ["events"]),
}


def assert_inert(app: App[Any], literals: list[str] = LITERALS, json_escaped: bool = False) -> None:
    text = screen_text(app)
    for literal in literals:
        assert literal in text, f"{literal!r} not shown literally"
    assert control_characters(app) == []
    if json_escaped:
        # the Input tab is JSON: an escape byte shows as the visible text \u001b, which is the point
        assert "\\u001b]52;c;" in text
        return
    # whole sequences are removed, not just their escape byte (which would leave the payload as text)
    for payload in ("52;c;", "SGVsbG8", "pwned title", "[2J", "[1;1H", "[5A", "[31m"):  # a table's "31ms" is no leak
        assert payload not in text, f"{payload!r} leaked"
    assert not [a for a in click_actions(app) if "quit" in a]


@pytest.mark.parametrize("case", list(CASES))
async def test_every_widget_shows_untrusted_text_literally(case):
    make, feed, tabs = CASES[case]
    app = Harness(make())
    async with app.run_test(size=(220, 50)) as pilot:
        await feed(app)
        for tab in tabs:
            app.widget.action_tab(tab)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert_inert(app, json_escaped=case == "detail input")
        await pilot.click(offset=(10, 3))
        await pilot.click(offset=(40, 5))
        assert app.is_running


async def test_the_dialog_shows_untrusted_text_literally_in_every_step():
    app = Harness(TextView("under the dialog"))
    async with app.run_test(size=(220, 50), notifications=True) as pilot:
        screen = ApprovalScreen(nasty_request(), key_guard_s=0)
        app.push_screen(screen)
        await pilot.pause()
        assert_inert(app)
        await pilot.press("a")
        assert "Bash([/ [bold]x [@click=app.quit]x[/]" in screen_text(app)
        assert_inert(app)
        await pilot.press("escape", "f")
        await pilot.pause()
        assert_inert(app)
        await pilot.click(offset=(20, 6))
        assert app.is_running


async def test_the_dialog_with_a_diff_preview_of_a_nasty_file():
    request = nasty_request().model_copy(update={"preview_kind": "diff", "preview_display": NASTY_DIFF})
    app = Harness(TextView("under"))
    async with app.run_test(size=(220, 50)) as pilot:
        app.push_screen(ApprovalScreen(request, key_guard_s=0))
        await pilot.pause()
        assert_inert(app)
        assert "[bold]x/[@click=app.quit]x[/].py" in screen_text(app)


async def test_a_notification_from_an_outside_close_is_not_markup():
    app = Harness(TextView("under"))
    async with app.run_test(size=(220, 50), notifications=True) as pilot:
        screen = ApprovalScreen(nasty_request(), key_guard_s=0)
        app.push_screen(screen)
        await pilot.pause()
        screen.close_from_outside(NASTY_TEXT)
        await pilot.pause(0.3)
        assert_inert(app, ["[bold]x", "[@click=app.quit]x[/]"])
