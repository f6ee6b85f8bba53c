"""The chat pane: prompts, streamed assistant Markdown, tool-call summaries you can open, errors;
a virtual, line-based view that keeps every entry and renders only what is on screen."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tests.tui.helpers import click_actions, find_text, screen_text, wait_until
from tests.tui.session_data import CWD, session_events
from tui_app.runtime.events import (
    AssistantText,
    AssistantTextDelta,
    AssistantThinking,
    AssistantThinkingDelta,
    ModelRetry,
    ToolCallRequested,
    ToolCallResult,
    TurnEnded,
    TurnStarted,
)
from widgets.chat import CallEntry, ChatView, MarkdownEntry, PromptEntry, ThinkingEntry
from widgets.messages import CallSelected

ANSWER = "The fix is in **`median`**:\n\n- average the two middle values\n- see [docs](https://example.com/x)\n"


class ChatApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.selected: list[str] = []
        self.opened: list[str] = []

    def compose(self) -> ComposeResult:
        yield ChatView(cwd=CWD)

    def on_call_selected(self, message: CallSelected) -> None:
        self.selected.append(message.call_id)

    def open_url(self, url: str, *, new_tab: bool = True) -> None:
        self.opened.append(url)


async def stream(chat: ChatView, text: str, size: int = 7) -> None:
    for i in range(0, len(text), size):
        await chat.apply(AssistantTextDelta(turn_id="t1", step=1, index=0, text=text[i:i + size]))


async def test_a_prompt_and_streamed_markdown_answer():
    app = ChatApp()
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.query_one(ChatView)
        await chat.apply(TurnStarted(turn_id="t1", prompt="Why does it fail?"))
        await stream(chat, ANSWER[:40])
        await pilot.pause()
        assert "› Why does it fail?" in screen_text(app)
        assert "The fix is in median" in screen_text(app)
        await stream(chat, ANSWER[40:])
        await chat.apply(AssistantText(turn_id="t1", step=1, index=0, text=ANSWER))
        await pilot.pause()
        text = screen_text(app)
        assert "average the two middle values" in text and "docs" in text
        assert "**" not in text  # rendered as Markdown, not shown raw
        assert len([e for e in chat.entries if isinstance(e, MarkdownEntry)]) == 1


async def test_the_final_text_wins_when_the_stream_missed_a_piece():
    app = ChatApp()
    async with app.run_test(size=(80, 12)) as pilot:
        chat = app.query_one(ChatView)
        await stream(chat, "partial answ")
        await chat.apply(AssistantText(turn_id="t1", step=1, index=0, text="The complete answer."))
        await pilot.pause()
        assert "The complete answer." in screen_text(app)
        assert "partial" not in screen_text(app)


async def test_a_replayed_answer_without_deltas_is_shown_whole():
    app = ChatApp()
    async with app.run_test(size=(80, 12)) as pilot:
        await app.query_one(ChatView).apply(AssistantText(turn_id="t1", step=1, index=0, text="# Done\n\nAll green."))
        await pilot.pause()
        assert "All green." in screen_text(app)


async def test_links_do_not_open_on_click():
    app = ChatApp()
    async with app.run_test(size=(80, 12)) as pilot:
        await app.query_one(ChatView).apply(AssistantText(turn_id="t1", step=1, index=0,
                                                          text="see [docs](https://example.com/x)"))
        await pilot.pause()
        assert click_actions(app) == []  # nothing on screen runs an action, a link least of all
        assert "https://example.com/x" in screen_text(app)  # where it points is shown as text
        y, x = find_text(app, "docs")
        await pilot.click(offset=(x + 1, y))
        await pilot.pause()
        assert app.opened == []


async def test_tool_calls_are_one_line_each_and_follow_their_state():
    app = ChatApp()
    async with app.run_test(size=(90, 20)) as pilot:
        chat = app.query_one(ChatView)
        for event in session_events():
            await chat.apply(event)
        await pilot.pause()
        text = screen_text(app)
        assert "✓ Read calc/stats.py  10ms · 1.4 KB" in text
        assert "◆ Edit calc/stats.py  awaiting approval" in text
        assert "✗" not in text
        await chat.apply(ToolCallResult(call_id="toolu_06", tool="Bash", model_content="ok", original_bytes=2048))
        await pilot.pause()
        assert "✓ Bash npm run build --watch  2.0 KB" in screen_text(app)
        assert len([e for e in chat.entries if isinstance(e, CallEntry)]) == 8


async def test_enter_or_click_on_a_call_line_selects_the_call():
    app = ChatApp()
    async with app.run_test(size=(90, 20)) as pilot:
        chat = app.query_one(ChatView)
        for event in session_events():
            await chat.apply(event)
        await pilot.pause()
        chat.focus()
        for _ in range(4):  # down from the top: the first call line, then three more
            await pilot.press("down")
        assert chat.cursor is chat.call_line("toolu_04")
        await pilot.press("enter")
        y = chat.entry_region_y(chat.call_line("toolu_02"))
        assert y is not None
        await pilot.click(ChatView, offset=(10, y))
        assert app.selected == ["toolu_04", "toolu_02"]


async def test_errors_and_retries_are_shown():
    app = ChatApp()
    async with app.run_test(size=(90, 12)) as pilot:
        chat = app.query_one(ChatView)
        await chat.apply(ModelRetry(attempt=2, max_attempts=5, status=529, reason="overloaded", wait_ms=3000))
        await chat.apply(TurnEnded(turn_id="t1", reason="error", message="provider returned 500"))
        await pilot.pause()
        text = screen_text(app)
        assert "⚠ model retry 2/5: overloaded (waiting 3.0s)" in text
        assert "✗ provider returned 500" in text


def calls(first: int, count: int) -> list[ToolCallRequested]:
    return [ToolCallRequested(call_id=f"c{i:04d}", step=1, index=i, name="Read", input={"file_path": f"f{i:04d}.py"})
            for i in range(first, first + count)]


def call_ids(chat: ChatView) -> list[str]:
    return [entry.call_id for entry in chat.entries if isinstance(entry, CallEntry)]


async def test_a_long_chat_keeps_every_entry_and_renders_only_the_screen():
    app = ChatApp()
    async with app.run_test(size=(90, 20)) as pilot:
        chat = app.query_one(ChatView)
        rendered: list[str] = []
        plain_render = CallEntry.render

        def counting(entry, *args, **kwargs):
            rendered.append(entry.call_id)
            return plain_render(entry, *args, **kwargs)

        CallEntry.render = counting  # type: ignore[method-assign]
        try:
            async with chat.mounting_together():  # a replay or a resume: one batch
                for event in calls(0, 3000):
                    await chat.apply(event)
            await pilot.pause()
        finally:
            CallEntry.render = plain_render  # type: ignore[method-assign]
        assert call_ids(chat) == [f"c{i:04d}" for i in range(3000)]
        assert len(set(rendered)) < 60  # a screen (and the lines measured to fill it), not 3,000
        text = screen_text(app)
        assert "f2999.py" in text and "f0000.py" not in text  # it opens at its end
        chat.scroll_home(animate=False)
        await pilot.pause()
        assert "f0000.py" in screen_text(app)  # and nothing gave way: the first call is still there
        # a call far above changes state: its own line changes, nothing is appended
        await chat.apply(ToolCallResult(call_id="c0003", tool="Read", model_content="ok"))
        await pilot.pause()
        assert call_ids(chat)[-1] == "c2999" and "✓ Read f0003.py" in screen_text(app)


async def test_going_back_drops_what_appeared_later_and_the_calls_show_their_state_then():
    app = ChatApp()
    async with app.run_test(size=(90, 20)) as pilot:
        chat = app.query_one(ChatView)
        events = [TurnStarted(turn_id="t1", prompt="read them all"), *calls(0, 250),
                  ToolCallResult(call_id="c0005", tool="Read", model_content="ok")]
        async with chat.mounting_together():
            for event in events:
                await chat.apply(event)
        assert chat.call_line("c0005").row.state == "done"
        await chat.rewind(events[:51])  # the prompt and the first 50 calls
        await pilot.pause()
        assert call_ids(chat) == [f"c{i:04d}" for i in range(50)] and isinstance(chat.entries[0], PromptEntry)
        assert chat.call_line("c0005").row.state == "queued"
        await chat.rewind(events[:10])
        assert call_ids(chat) == [f"c{i:04d}" for i in range(9)]
        await chat.rewind([])
        await pilot.pause()
        assert chat.entries == [] and "f0000" not in screen_text(app)


async def test_the_models_thinking_is_shown_dimmed_and_opens_on_enter():
    app = ChatApp()
    async with app.run_test(size=(90, 24)) as pilot:
        chat = app.query_one(ChatView)
        lines = ["The test expects 2.5.", "median returns the upper middle.", "[bold]So[/] the even case",
                 "needs the mean of the two.", "\x1b]52;c;ZXZpbA==\x07Edit stats.py."]
        await chat.apply(TurnStarted(turn_id="t1", prompt="why?"))
        await chat.apply(AssistantThinking(turn_id="t1", step=1, index=0,
                                           raw={"type": "thinking", "thinking": "\n".join(lines), "signature": "s"}))
        await chat.apply(AssistantThinking(turn_id="t1", step=1, index=1,
                                           raw={"type": "redacted_thinking", "data": "opaque"}))
        await pilot.pause()
        text = screen_text(app)
        assert "✻ thinking · 2 more lines, enter shows them" in text
        assert "[bold]So[/] the even case" in text and "needs the mean" not in text
        assert "✻ thinking (redacted by the provider)" in text
        chat.focus()
        await pilot.press("down")
        assert isinstance(chat.cursor, ThinkingEntry)
        await pilot.press("enter")
        await pilot.pause()
        text = screen_text(app)
        assert "needs the mean of the two." in text and "Edit stats.py." in text and "more lines" not in text
        assert "\x1b" not in text


async def test_thinking_grows_as_it_streams_and_the_whole_block_replaces_it():
    app = ChatApp()
    async with app.run_test(size=(90, 24)) as pilot:
        chat = app.query_one(ChatView)
        await chat.apply(TurnStarted(turn_id="t1", prompt="why?"))
        await chat.apply(AssistantThinkingDelta(turn_id="t1", step=1, index=0, text="Perhaps the"))
        await wait_until(pilot, lambda: "Perhaps the" in screen_text(app), "the thinking so far")
        await chat.apply(ModelRetry(turn_id="t1", attempt=2, max_attempts=5, status=529, reason="overloaded",
                                    wait_ms=500))
        await wait_until(pilot, lambda: "Perhaps the" not in screen_text(app), "the note to start over")
        assert not [e for e in chat.entries if isinstance(e, ThinkingEntry)]
        for piece in ("The test ", "expects 2.5.\nmedian ", "returns 3."):
            await chat.apply(AssistantThinkingDelta(turn_id="t1", step=1, index=0, text=piece))
        await wait_until(pilot, lambda: "The test expects 2.5." in screen_text(app)
                         and "median returns 3." in screen_text(app), "the grown thinking")
        await chat.apply(AssistantThinking(turn_id="t1", step=1, index=0, raw={
            "type": "thinking", "thinking": "The test expects 2.5.\nmedian returns 3.\nFix the even case.",
            "signature": "s"}))
        await chat.apply(AssistantText(turn_id="t1", step=1, index=1, text="Fixing it."))
        await pilot.pause()
        notes = [e for e in chat.entries if isinstance(e, ThinkingEntry)]
        texts = [e for e in chat.entries if isinstance(e, MarkdownEntry)]
        assert len(notes) == 1 and "Fix the even case." in screen_text(app)
        assert chat.entries.index(notes[0]) < chat.entries.index(texts[0])


async def test_a_chat_at_its_end_stays_there_when_the_terminal_shrinks_or_grows():
    app = ChatApp()
    async with app.run_test(size=(160, 48)) as pilot:
        chat = app.query_one(ChatView)
        for n in range(60):
            await chat.apply(TurnStarted(turn_id=f"t{n}", prompt=f"question number {n} " + "words " * 30))
        await pilot.pause()
        assert "question number 59" in screen_text(app)
        for size in ((100, 30), (80, 24), (160, 48)):
            await pilot.resize_terminal(*size)
            await wait_until(pilot, lambda: "question number 59" in screen_text(app), f"the last entry at {size}")
            assert chat.is_vertical_scroll_end
        chat.scroll_to(y=0, animate=False, immediate=True)  # a user who scrolled up stays where they are
        await pilot.pause()
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        assert "question number 0 " in screen_text(app) and not chat.is_vertical_scroll_end
