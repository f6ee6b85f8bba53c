"""The prompt box: Enter sends, ctrl+j inserts a newline, up/down walk the history and keep a
draft, and a prompt is cleared only once it was taken."""

from __future__ import annotations

from textual.app import App, ComposeResult

from widgets.prompt_input import PromptInput


class PromptApp(App[None]):
    def __init__(self, accept: bool = True) -> None:
        super().__init__()
        self.accept = accept
        self.sent: list[str] = []

    def compose(self) -> ComposeResult:
        yield PromptInput(history=["first question", "second\nquestion"])

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        self.sent.append(message.text)
        if self.accept:
            message.prompt_input.accept(message.text)


async def test_enter_sends_and_ctrl_j_inserts_a_newline():
    app = PromptApp()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press("h", "i", "ctrl+j", "y", "o", "u")
        assert prompt.text == "hi\nyou"
        await pilot.press("enter")
        assert app.sent == ["hi\nyou"] and prompt.text == ""
        await pilot.press("space", "enter")
        assert app.sent == ["hi\nyou"]  # nothing but blanks is not a prompt


async def test_a_prompt_that_was_not_taken_stays():
    app = PromptApp(accept=False)
    async with app.run_test() as pilot:
        await pilot.press("k", "e", "e", "p", "enter")
        assert app.sent == ["keep"] and app.query_one(PromptInput).text == "keep"


async def test_up_and_down_walk_the_history_and_come_back_to_the_draft():
    app = PromptApp()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press("d", "r", "a", "f", "t")
        await pilot.press("up")
        assert prompt.text == "second\nquestion"
        await pilot.press("up")  # the cursor is on the last line of a two-line entry: move up in it first
        assert prompt.text == "second\nquestion"
        await pilot.press("up")
        assert prompt.text == "first question"
        await pilot.press("up")
        assert prompt.text == "first question"
        await pilot.press("down")
        assert prompt.text == "second\nquestion"
        await pilot.press("down")
        assert prompt.text == "draft"
        await pilot.press("enter")
        await pilot.press("up")
        assert prompt.text == "draft"
