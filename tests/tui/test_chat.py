"""The chat pane: prompts, streamed assistant Markdown, tool-call summaries you can open, errors."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Markdown

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
from widgets.chat import (
    MAX_ENTRIES,
    TRIM_STEP,
    AssistantMarkdown,
    CallLine,
    ChatPrompt,
    ChatView,
    EarlierEntries,
    ThinkingNote,
)
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
        assert len(app.query(AssistantMarkdown)) == 1


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
        assert click_actions(app) == ["link('https://example.com/x')"]
        y, x = find_text(app, "docs")
        await pilot.click(offset=(x + 1, y))
        await pilot.pause()
        assert app.opened == []
        markdown = app.query_one(AssistantMarkdown)
        markdown.post_message(Markdown.LinkClicked(markdown, "https://example.com/x"))
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
        assert len(app.query(CallLine)) == 8


async def test_enter_or_click_on_a_call_line_selects_the_call():
    app = ChatApp()
    async with app.run_test(size=(90, 20)) as pilot:
        chat = app.query_one(ChatView)
        for event in session_events():
            await chat.apply(event)
        await pilot.pause()
        line = chat.call_line("toolu_04")
        line.focus()
        await pilot.press("enter")
        await pilot.click(chat.call_line("toolu_02"))
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
    return [line.call_id for line in chat.query(CallLine)]


async def test_a_long_chat_keeps_the_latest_entries_and_says_how_many_gave_way():
    app = ChatApp()
    async with app.run_test(size=(90, 20)) as pilot:
        chat = app.query_one(ChatView)
        async with chat.mounting_together():  # a replay or a resume: one batch
            for event in calls(0, MAX_ENTRIES + 150):
                await chat.apply(event)
        await pilot.pause()
        assert call_ids(chat) == [f"c{i:04d}" for i in range(150, MAX_ENTRIES + 150)]
        assert chat.hidden == 150
        earlier = chat.children[0]
        assert isinstance(earlier, EarlierEntries)
        chat.scroll_home(animate=False)
        await pilot.pause()
        assert "⋯ 150 earlier entries not shown here" in screen_text(app)
        # a call whose line gave way changes state: the line is not brought back at the bottom
        await chat.apply(ToolCallResult(call_id="c0003", tool="Read", model_content="ok"))
        assert "c0003" not in call_ids(chat) and len(call_ids(chat)) == MAX_ENTRIES

        # a live chat, one line at a time: it drops the oldest in steps, never more than a step over
        for event in calls(MAX_ENTRIES + 150, TRIM_STEP + 1):
            await chat.apply(event)
            assert len(chat.entries) <= MAX_ENTRIES + TRIM_STEP
        assert len(chat.entries) == MAX_ENTRIES and call_ids(chat)[-1] == f"c{MAX_ENTRIES + 150 + TRIM_STEP:04d}"
        assert chat.hidden == 150 + TRIM_STEP + 1
        await pilot.pause()
        assert f"⋯ {150 + TRIM_STEP + 1} earlier entries" in str(earlier.render())


async def test_going_back_past_entries_that_gave_way_shows_them_again():
    app = ChatApp()
    async with app.run_test(size=(90, 20)) as pilot:
        chat = app.query_one(ChatView)
        events = [TurnStarted(turn_id="t1", prompt="read them all"), *calls(0, MAX_ENTRIES + 100)]
        async with chat.mounting_together():
            for event in events:
                await chat.apply(event)
        assert "c0000" not in call_ids(chat)
        await chat.rewind(events[:51])  # the prompt and the first 50 calls
        await pilot.pause()
        assert call_ids(chat) == [f"c{i:04d}" for i in range(50)] and chat.hidden == 0
        assert len(chat.query(EarlierEntries)) == 0 and isinstance(chat.entries[0], ChatPrompt)
        await chat.rewind(events[:10])  # within what is shown: only later lines go
        assert call_ids(chat) == [f"c{i:04d}" for i in range(9)]
        await chat.rewind([])
        assert chat.entries == [] and len(chat.query(EarlierEntries)) == 0


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
        note = app.query(ThinkingNote).first()
        note.focus()
        await pilot.press("enter")
        await pilot.pause()
        text = screen_text(app)
        assert "needs the mean of the two." in text and "Edit stats.py." in text and "more lines" not in text
        assert "\x1b" not in "".join(strip.text for strip in note.render_lines(note.region.reset_offset))


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
        assert len(app.query(ThinkingNote)) == 0  # started over
        for piece in ("The test ", "expects 2.5.\nmedian ", "returns 3."):
            await chat.apply(AssistantThinkingDelta(turn_id="t1", step=1, index=0, text=piece))
            await pilot.pause()
        await wait_until(pilot, lambda: "The test expects 2.5." in screen_text(app)
                         and "median returns 3." in screen_text(app), "the grown thinking")
        await chat.apply(AssistantThinking(turn_id="t1", step=1, index=0, raw={
            "type": "thinking", "thinking": "The test expects 2.5.\nmedian returns 3.\nFix the even case.",
            "signature": "s"}))
        await chat.apply(AssistantText(turn_id="t1", step=1, index=1, text="Fixing it."))
        await pilot.pause()
        assert len(app.query(ThinkingNote)) == 1 and "Fix the even case." in screen_text(app)
        assert chat.entries.index(app.query(ThinkingNote).first()) < chat.entries.index(
            app.query(AssistantMarkdown).first())
