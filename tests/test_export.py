"""Export transcript: the demo session as Markdown a person can read."""

from __future__ import annotations

from tests.test_demo import run_demo
from tui_app.headless.export import fence, transcript_markdown
from tui_app.runtime.events import AssistantThinking


def test_a_fence_is_longer_than_any_run_of_backticks_inside():
    text = "````\ncode\n````"
    assert fence(text).startswith("`````\n") and fence(text).endswith("\n`````")


async def test_the_demo_session_exports_to_markdown(tmp_path, monkeypatch):
    _, _, events, _ = await run_demo(tmp_path, monkeypatch, lambda e: "allow")
    text = transcript_markdown(events)
    assert text.startswith("# Vigil session ")
    assert "## You\n\nThe tests of this project fail." in text
    assert "### Bash — execution_failed (execute)" in text  # the failing run
    assert "### Edit — done" in text and "Full output: `" in text
    assert "\x1b" not in text


def test_thinking_is_quoted_and_a_redacted_block_says_so():
    events = [
        AssistantThinking(turn_id="t1", step=1, index=0, raw={"type": "thinking", "thinking": "First.\n\nThen."}),
        AssistantThinking(turn_id="t1", step=1, index=1, raw={"type": "reasoning", "text": "From a local model."}),
        AssistantThinking(turn_id="t1", step=1, index=2, raw={"type": "redacted_thinking", "data": "x"}),
    ]
    text = transcript_markdown(events)
    assert "> *Thinking*\n>\n> First.\n>\n> Then.\n" in text
    assert "> *Thinking*\n>\n> From a local model.\n" in text
    assert "> *Thinking (redacted by the provider)*\n" in text
