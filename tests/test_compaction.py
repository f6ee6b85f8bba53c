"""Context compaction with the scripted model: a compaction request consumes the next step, whose
text is the summary; the conversation sent afterwards is the summary alone, live and resumed."""

from __future__ import annotations

from typing import ClassVar

from tests.builtin_kit import Workspace, of, run
from tests.builtin_kit import workspace as private_workspace
from tui_app.agents.compaction import (
    SUMMARY_INSTRUCTION,
    CompactionSettings,
    ContextAccount,
    compaction_settings,
    context_window,
    is_context_overflow,
)
from tui_app.runtime.commands import Compact
from tui_app.runtime.log.conversation import continuation_text, rebuild_conversation
from tui_app.runtime.log.eventlog import read_events

workspace = private_workspace  # the fixture, visible to this module's tests

SMALL = {"contextWindow": 10_000, "autoCompact": {"threshold": 0.5}}


def read(path: str, usage: int) -> dict:
    return {"tool_calls": [{"name": "Read", "input": {"file_path": path}}],
            "usage": {"input_tokens": usage, "output_tokens": 10}}


def texts(message) -> str:
    return "\n".join(b.text for b in message.content if b.type == "text")


async def test_the_conversation_compacts_itself_when_it_reaches_the_threshold(workspace: Workspace):
    workspace.write("a.txt", "alpha\n")
    workspace.write("b.txt", "beta\n")
    steps = [read("a.txt", 2000), read("b.txt", 6000),
             {"text": "SUMMARY: the user wants a and b read; both were read (alpha, beta)."},
             {"text": "Both files are read.", "usage": {"input_tokens": 400, "output_tokens": 8}}]
    session = workspace.session(steps, settings=SMALL)
    turn, events = await run(session, "Read a.txt and b.txt")
    assert turn.reason == "completed" and turn.text == "Both files are read."
    [compacted] = of(events, "ConversationCompacted")
    assert compacted.trigger == "auto" and compacted.summary.startswith("SUMMARY: the user wants a and b read")
    assert compacted.tokens_before >= 6010 and 0 < compacted.tokens_after < 200
    # the boundary is the last event the summary stands for: the second Read's batch
    last_batch = of(events, "ToolBatchComplete")[-1]
    assert compacted.boundary_seq == last_batch.seq and compacted.turn_id == turn.turn_id
    requests = session.agent.client.requests
    assert [r.purpose for r in requests] == ["step", "step", "compaction", "step"]
    summary_request = requests[2]
    assert texts(summary_request.messages[-1]) == SUMMARY_INSTRUCTION
    assert summary_request.tools == requests[1].tools and summary_request.system == requests[1].system
    # everything so far (the second Read and its result too), then the instruction
    assert len(summary_request.messages) == len(requests[1].messages) + 3
    after = requests[3].messages
    assert len(after) == 1 and texts(after[0]) == continuation_text(compacted.summary)
    # --resume honours the compaction: the same conversation comes back from the log
    assert rebuild_conversation(read_events(session.log_path).events) == session.conversation.snapshot()
    resumed = workspace.session([{"text": "Still here."}], settings=SMALL, resume=session.id)
    await run(resumed, "Anything else?")
    first = resumed.agent.client.requests[0].messages
    assert texts(first[0]) == continuation_text(compacted.summary)
    assert [m.role for m in first] == ["user", "assistant", "user"] and texts(first[-1]) == "Anything else?"


async def test_compact_by_hand_with_instructions_keeps_artifacts_readable(workspace: Workspace):
    steps = [{"tool_calls": [{"id": "big", "name": "Bash",
                              "input": {"command": "python3 -c \"print('line of output\\n' * 4000)\""}}]},
             {"text": "The output is saved."}]
    session = workspace.session(steps, permission_mode="bypassPermissions")
    events: list = []
    session.subscribe(events.append)
    await session.start()
    try:
        await session.run_turn("Print a lot")
        [kept] = of(events, "ArtifactPersisted", call_id="big")
        script = session.agent.client.script
        summary = f"Summary: a big output is in {kept.artifact.path}"
        script.steps.append(script.steps[0].model_validate({"text": summary}))
        reply = await session.controller.handle(Compact(instructions="keep the artifact path", client="test"))
        assert reply.ok
        compacted = await session.controller.wait_idle()
        assert compacted is not None and compacted.trigger == "manual"
        assert compacted.instructions == "keep the artifact path"
        request = session.agent.client.requests[-1]
        assert request.purpose == "compaction"
        assert texts(request.messages[-1]).endswith("The user asks that the summary pay attention to: keep the "
                                                    "artifact path")
        script.steps += [script.steps[0].model_validate(
            {"tool_calls": [{"id": "back", "name": "ReadArtifact", "input": {"artifact": kept.artifact.path}}]}),
            script.steps[0].model_validate({"expect": ["line of output"], "text": "Read it back."})]
        turn = await session.run_turn("Read the saved output again")
    finally:
        await session.close()
    assert turn.reason == "completed" and turn.text == "Read it back."
    [back] = of(events, "ToolCallResult", call_id="back")
    assert "line of output" in back.model_content


async def test_a_request_that_no_longer_fits_is_compacted_and_tried_again(workspace: Workspace):
    steps = [{"text": "", "stop_reason": "model_context_window_exceeded"},
             {"text": "Summary: the user asked for a greeting."},
             {"text": "Hello!"}]
    session = workspace.session(steps)
    turn, events = await run(session, "Say hello")
    assert turn.reason == "completed" and turn.text == "Hello!"
    [compacted] = of(events, "ConversationCompacted")
    assert compacted.trigger == "auto"
    assert [r.purpose for r in session.agent.client.requests] == ["step", "compaction", "step"]


async def test_a_failed_compaction_is_reported_and_the_conversation_goes_on_as_it_was(workspace: Workspace):
    workspace.write("a.txt", "alpha\n")
    steps = [read("a.txt", 6000), {"expect": ["not in any result"], "text": "never a summary"},
             {"text": "Done anyway.", "usage": {"input_tokens": 6100, "output_tokens": 3}}]
    session = workspace.session(steps, settings=SMALL)
    turn, events = await run(session, "Read a.txt")
    assert turn.reason == "completed" and turn.text == "Done anyway."
    assert not of(events, "ConversationCompacted")
    [warning] = of(events, "Warning", code="compaction_failed")
    assert "could not be compacted" in warning.message
    # one try per turn: the last step was over the threshold too, and no second summary was asked for
    assert [r.purpose for r in session.agent.client.requests] == ["step", "compaction", "step"]
    assert len(session.agent.client.requests[2].messages) == 3


async def test_auto_compaction_can_be_turned_off(workspace: Workspace):
    workspace.write("a.txt", "alpha\n")
    steps = [read("a.txt", 9000), {"text": "Done."}]
    session = workspace.session(steps, settings={**SMALL, "autoCompact": False})
    turn, events = await run(session, "Read a.txt")
    assert turn.text == "Done." and not of(events, "ConversationCompacted")


def test_context_windows_by_model_with_overrides():
    assert context_window("claude-sonnet-4-6") == 200_000
    assert context_window("anthropic/claude-opus-4") == 200_000
    assert context_window("gpt-4o-mini") == 128_000 and context_window("gpt-4") == 8_192
    assert context_window("qwen2.5-coder:7b") == 32_768 and context_window("llama3.1:8b") == 131_072
    assert context_window("some-local-model") == 128_000
    assert context_window("qwen2.5-coder:7b", {"qwen2.5-coder": 16_384}) == 16_384
    settings, problems = compaction_settings({"contextWindow": {"my-model": 4096, "bad": -1},
                                              "autoCompact": {"threshold": 1.5}})
    assert settings.window_of("my-model-q4") == 4096 and settings.threshold == 0.8
    assert len(problems) == 2 and "threshold" in problems[0] and "contextWindow['bad']" in problems[1]
    assert compaction_settings({"contextWindow": 5000})[0].window_of("claude-x") == 5000


def test_what_counts_as_a_request_that_does_not_fit():
    assert is_context_overflow("model_context_window_exceeded", None)
    assert is_context_overflow(None, "anthropic API error 400: the request was rejected (invalid_request_error: "
                                     "prompt is too long: 210000 tokens > 200000 maximum)")
    assert is_context_overflow(None, "openai API error 400 (context_length_exceeded: This model's maximum context "
                                     "length is 8192 tokens)")
    assert not is_context_overflow("end_turn", "openai API error 429: rate limited")


def test_the_account_adds_an_estimate_of_what_came_after_the_last_count():
    class Host:
        system_prompt = "s" * 400
        tool_menu: ClassVar[list] = []

        class conversation:
            messages: ClassVar[list] = []

            @staticmethod
            def snapshot():
                return Host.conversation.messages

        class model:
            model = "scripted"

    from tui_app.runtime.messages import Message, TextBlock

    account = ContextAccount(CompactionSettings(window=1000, threshold=0.5))
    Host.conversation.messages = [Message(role="user", content=[TextBlock(text="x" * 400)])]
    assert account.tokens(Host) == (400 + len(Host.conversation.messages[0].model_dump_json())) // 4 + 1
    account.record({"input_tokens": 300, "cache_read_input_tokens": 100, "output_tokens": 20}, 1)
    assert account.tokens(Host) == 420
    Host.conversation.messages = Host.conversation.messages * 3
    grown = account.tokens(Host)
    assert grown > 420 and account.should_compact(Host, "turn-1") == (grown >= 500)


async def test_stream_json_marks_the_compaction_as_claude_code_does(workspace: Workspace):
    import io
    import json

    from tui_app.headless.runner import run_headless

    workspace.write("a.txt", "alpha\n")
    steps = [read("a.txt", 9000), {"text": "Summary: a.txt was read."}, {"text": "Done."}]
    out = io.StringIO()
    assert await run_headless(workspace.session(steps, settings=SMALL), "Read a.txt", "stream-json", out) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    [boundary] = [line for line in lines if line.get("subtype") == "compact_boundary"]
    assert boundary["compact_metadata"]["trigger"] == "auto" and boundary["compact_metadata"]["pre_tokens"] >= 9000
    assert lines.index(boundary) < len(lines) - 2 and lines[-1]["result"] == "Done."
