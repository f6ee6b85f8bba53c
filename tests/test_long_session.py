"""A long session: 400 scripted tool calls in one turn with a small context window. The session
compacts itself each time the provider's count nears the threshold, finishes, and its log replays
(as text, and in the TUI's replay screen)."""

from __future__ import annotations

import asyncio
import io
import json

from tests.builtin_kit import Workspace, of
from tests.builtin_kit import workspace as private_workspace
from tui_app.cli import main
from tui_app.headless.replay import replay
from tui_app.runtime.log.conversation import rebuild_conversation
from tui_app.runtime.log.eventlog import read_events
from tui_app.runtime.log.paths import events_path

workspace = private_workspace  # the fixture, visible to this module's tests

WINDOW = 20_000
THRESHOLD = 0.5  # compaction at 10,000 tokens
WORK_STEPS = 200  # two calls each: 400 calls
SEGMENT = 11  # ten steps under the threshold, then one over it


def long_script(files: list[str]) -> tuple[list[dict], int]:
    """The work steps, each reporting what a provider would count; after a step over the threshold,
    the summary the compaction request consumes. Returns the steps and how many compactions."""
    steps: list[dict] = []
    compactions = 0
    for number in range(WORK_STEPS):
        position = number % SEGMENT
        tokens = 12_000 if position == SEGMENT - 1 else 800 * (position + 1)
        name = files[number % len(files)]
        calls = [{"name": "Read", "input": {"file_path": name}},
                 {"name": "Grep", "input": {"pattern": f"value_{number % 7}", "output_mode": "count"}}]
        steps.append({"text": f"Step {number + 1}.", "tool_calls": calls,
                      "usage": {"input_tokens": tokens, "output_tokens": 40}})
        if tokens >= WINDOW * THRESHOLD and number < WORK_STEPS - 1:
            compactions += 1
            steps.append({"text": f"SUMMARY {compactions}: {number + 1} of {WORK_STEPS} steps done, every file "
                                  "read so far held its value; keep reading the files in order."})
    steps.append({"text": f"All {WORK_STEPS * 2} calls are done.", "usage": {"input_tokens": 900, "output_tokens": 9}})
    return steps, compactions


def test_four_hundred_calls_compact_themselves_finish_and_replay(workspace: Workspace):
    files = [f"module_{n}.py" for n in range(20)]
    for n, name in enumerate(files):
        workspace.write(name, f"value_{n % 7} = {n}\n" * 5)
    steps, expected = long_script(files)
    script = workspace.script(steps)
    settings = workspace.root / "settings.json"
    settings.write_text(json.dumps({"contextWindow": WINDOW, "autoCompact": {"threshold": THRESHOLD}}))
    out = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out):
        code = main(["-p", "Read every module, in order", "--script", str(script), "--cwd", str(workspace.project),
                     "--settings", str(settings), "--output-format", "json"])
    result = json.loads(out.getvalue().splitlines()[-1])
    assert code == 0 and result["subtype"] == "success", result
    assert result["result"] == "All 400 calls are done."
    log = read_events(events_path(result["session_id"]))
    events = log.events
    assert log.warnings == []
    requested = of(events, "ToolCallRequested")
    outcomes = [e for e in events if e.type in ("ToolCallResult", "ToolCallError")]
    assert len(requested) == 400 and sorted(e.call_id for e in outcomes) == sorted(e.call_id for e in requested)
    assert all(e.type == "ToolCallResult" for e in outcomes)
    compacted = of(events, "ConversationCompacted")
    assert len(compacted) == expected >= 15 and all(c.trigger == "auto" for c in compacted)
    assert [c.summary.split(":")[0] for c in compacted] == [f"SUMMARY {n}" for n in range(1, expected + 1)]
    # each compaction happened where the count crossed the threshold, right after that step's calls
    for event in compacted:
        started, before = events[events.index(event) - 1], events[events.index(event) - 2]
        assert started.type == "CompactionStarted" and started.trigger == "auto"
        assert before.type == "ToolBatchComplete" and event.boundary_seq == before.seq
        assert event.tokens_before >= 12_000
    # the conversation a resume would send is short: the last summary and what came after it
    messages = rebuild_conversation(events)
    assert "SUMMARY" in messages[0].content[0].text and len(messages) < 2 * SEGMENT + 3
    [ended] = of(events, "TurnEnded")
    assert ended.reason == "completed" and ended.steps == WORK_STEPS + 1
    # the log replays as text, every compaction where it happened
    printed = io.StringIO()
    assert replay(result["session_id"], "text", printed) == 0
    text = printed.getvalue()
    assert text.count("── conversation compacted (auto") == expected
    assert text.count("✓ Read") == 200 and "All 400 calls are done." in text
    # and in the TUI: the replay screen reaches the end with every call in its table
    asyncio.run(replay_on_screen(result["session_id"], expected))


async def replay_on_screen(session_id: str, compactions: int) -> None:
    from textual.app import App

    from tests.tui.app_harness import wait_until
    from tui_app.app.screens.replay import ReplayScreen
    from widgets.compaction_divider import CompactionDivider

    screen = ReplayScreen.load(session_id)

    class Viewer(App[None]):
        async def on_mount(self) -> None:
            await self.push_screen(screen)

    async with Viewer().run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: screen.shown == screen.position == screen.timeline.end, "the replay's end",
                         timeout=120)
        assert len(screen.table.rows) == 400
        assert screen.view.reports.compactions == compactions
        assert screen.chat.entries_of(CompactionDivider)  # the chat keeps every entry
