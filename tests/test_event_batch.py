"""A drained batch made cheaper to show: runs of deltas and output chunks joined, nothing lost,
nothing reordered within a call or a text block."""

from __future__ import annotations

from tests.fakes import SAFE
from tui_app.app.event_batch import coalesce
from tui_app.runtime.events import (
    AssistantText,
    AssistantTextDelta,
    ToolCallProgress,
    ToolCallResult,
    ToolCallStarted,
)


def delta(text, index=0, step=1):
    return AssistantTextDelta(turn_id="t", step=step, index=index, text=text)


def out(call, text, stream="stdout"):
    return ToolCallProgress(call_id=call, kind="output", stream=stream, text=text)


def test_deltas_of_one_block_are_joined_until_something_else_comes():
    batch = [delta("Hel"), delta("lo "), delta("you", index=1), delta("!", index=1),
             AssistantText(turn_id="t", step=1, index=1, text="you!"), delta("more", index=2)]
    got = coalesce(batch)
    assert [(e.type, e.text) for e in got] == [
        ("AssistantTextDelta", "Hello "), ("AssistantTextDelta", "you!"), ("AssistantText", "you!"),
        ("AssistantTextDelta", "more")]


def test_output_chunks_of_a_call_are_joined_per_stream_and_keep_their_order():
    started = ToolCallStarted(call_id="b", tool="Bash", input={}, flags=SAFE)
    batch = [out("a", "1\n"), started, out("b", "x\n"), out("a", "2\n"), out("a", "e\n", "stderr"),
             out("a", "3\n"), out("b", "y\n"), ToolCallResult(call_id="a", tool="Bash", model_content="ok"),
             out("a", "late\n")]
    got = coalesce(batch)
    shown = [(e.type, e.call_id, getattr(e, "stream", None), getattr(e, "text", "")) for e in got]
    assert shown == [
        ("ToolCallProgress", "a", "stdout", "1\n2\n"),
        ("ToolCallStarted", "b", None, ""),
        ("ToolCallProgress", "b", "stdout", "x\ny\n"),
        ("ToolCallProgress", "a", "stderr", "e\n"),
        ("ToolCallProgress", "a", "stdout", "3\n"),
        ("ToolCallResult", "a", None, ""),
        ("ToolCallProgress", "a", "stdout", "late\n"),
    ]
    # every byte is still there, in order per call
    assert "".join(e.text for e in got if e.type == "ToolCallProgress" and e.call_id == "a") == "1\n2\ne\n3\nlate\n"


def test_a_flood_becomes_a_handful_of_events():
    batch = [out("a", f"line {i}\n") for i in range(5000)]
    (joined,) = coalesce(batch)
    assert joined.text.count("\n") == 5000
