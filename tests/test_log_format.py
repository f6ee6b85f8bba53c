"""The log's compact lines: each fact stored once, every event read back as it was written, and
logs written before compact lines still read exactly as they did."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from tests.test_eventlog import SAMPLES
from tui_app.assemble import SessionOptions, build_session
from tui_app.headless.replay import replay
from tui_app.runtime import events as ev
from tui_app.runtime.log.conversation import rebuild_conversation
from tui_app.runtime.log.eventlog import EventLogWriter, read_events
from tui_app.runtime.log.format import LogDecoder, LogEncoder
from tui_app.runtime.permissions.broker import ApprovalAnswer

FIXTURE = Path(__file__).parent / "fixtures" / "log_v1"


def _stamped(events: list, start: float = 1_800_000_000.0) -> list:
    return [e.model_copy(update={"seq": i, "session_id": "s1", "ts": start + i * 0.0123})
            for i, e in enumerate(events, 1) if not e.ephemeral]


def _same(a, b) -> bool:
    """Equal, the time to the millisecond (lines after a writer's first carry milliseconds)."""
    left, right = a.model_dump(), b.model_dump()
    return abs(left.pop("ts") - right.pop("ts")) < 0.0006 and left == right


# ---- the format before compact lines -------------------------------------------------------------

@pytest.fixture
def v1_home(tmp_path, monkeypatch):
    session_id = (FIXTURE / "SESSION_ID").read_text().strip()
    target = tmp_path / "sessions" / session_id
    target.mkdir(parents=True)
    shutil.copy(FIXTURE / "events.jsonl", target / "events.jsonl")
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path))
    return session_id, target / "events.jsonl"


def test_a_log_in_the_format_before_compact_lines_reads_without_a_warning(v1_home):
    _, path = v1_home
    lines = path.read_bytes().splitlines()
    assert all(line.startswith(b'{"seq":') for line in lines)  # the fixture really is the old format
    read = read_events(path)
    assert read.warnings == [] and len(read.events) == len(lines)
    assert read.events == [ev.parse_event(line) for line in lines]


def _without_fresh_ids(stream_json: str) -> list[dict]:
    """stream-json lines without what is new on every printing (each line's uuid, a message id)."""
    lines = [json.loads(line) for line in stream_json.splitlines()]
    for line in lines:
        line.pop("uuid", None)
        if isinstance(line.get("message"), dict):
            line["message"].pop("id", None)
    return lines


def test_the_old_log_replays_and_rebuilds_as_the_reader_before_compact_lines_did(v1_home):
    """replay.txt is what the version that wrote the fixture printed; replay.stream.jsonl is what
    the last version before compact lines printed (stream-json itself changed in between)."""
    session_id, path = v1_home
    out, err = io.StringIO(), io.StringIO()
    assert replay(session_id, "text", out, err) == 0
    assert out.getvalue() == (FIXTURE / "replay.txt").read_text() and err.getvalue() == ""
    out, err = io.StringIO(), io.StringIO()
    assert replay(session_id, "stream-json", out, err) == 0
    expected = (FIXTURE / "replay.stream.jsonl").read_text()
    assert _without_fresh_ids(out.getvalue()) == _without_fresh_ids(expected) and err.getvalue() == ""
    messages = rebuild_conversation(read_events(path).events)
    assert [m.model_dump(mode="json") for m in messages] == json.loads((FIXTURE / "conversation.json").read_text())


def test_an_old_log_resumed_by_this_version_reads_whole(v1_home):
    _, path = v1_home
    old = read_events(path).events
    writer = EventLogWriter(path)  # a resumed session appends compact lines to the old log
    more = _stamped(SAMPLES, start=old[-1].ts + 5)
    more = [e.model_copy(update={"seq": old[-1].seq + e.seq}) for e in more]
    for event in more:
        writer.write(event)
    writer.close()
    read = read_events(path)
    assert read.warnings == [] and read.events[: len(old)] == old
    assert all(_same(a, b) for a, b in zip(read.events[len(old):], more, strict=True))


# ---- compact lines ----------------------------------------------------------------------------------

def test_every_event_type_reads_back_as_written():
    events = _stamped(SAMPLES)
    encoder, decoder = LogEncoder(), LogDecoder()
    back = [decoder.decode(encoder.encode(e)) for e in events]
    assert all(_same(a, b) for a, b in zip(back, events, strict=True))
    assert [type(e) for e in back] == [type(e) for e in events]


def test_the_old_fixture_rewritten_in_compact_lines_reads_back_the_same_events_and_is_smaller():
    old = read_events(FIXTURE / "events.jsonl").events
    encoder, decoder = LogEncoder(), LogDecoder()
    lines = [encoder.encode(e) for e in old]
    assert all(_same(a, decoder.decode(line)) for a, line in zip(old, lines, strict=True))
    assert sum(map(len, lines)) < 0.8 * (FIXTURE / "events.jsonl").stat().st_size


def test_a_string_that_starts_with_nul_survives_and_is_never_taken_for_a_reference():
    text = "\x00" + "1:model_content:0000 looks like a reference but is the tool's output"
    events = _stamped([
        ev.ToolCallResult(call_id="c1", tool="Read", model_content="x" * 40),
        ev.ToolCallResult(call_id="c2", tool="Read", model_content=text),
        ev.ToolCallRequested(call_id="c3", step=1, index=0, name="Write", input={"content": "\x00\x00" + "y" * 40}),
    ])
    encoder, decoder = LogEncoder(), LogDecoder()
    back = [decoder.decode(encoder.encode(e)) for e in events]
    assert back[1].model_content == text and back[2].input == events[2].input


def test_a_reference_the_reader_cannot_resolve_makes_its_line_unreadable_never_wrong(tmp_path):
    content = "the output of the first call, long enough to be stored once"
    events = _stamped([ev.ToolCallResult(call_id="c1", tool="Read", model_content=content),
                       ev.ToolCallResult(call_id="c2", tool="Read", model_content=content)])
    encoder = LogEncoder()
    first, second = (encoder.encode(e) for e in events)
    assert content.encode() not in second  # the second line refers to the first
    path = tmp_path / "events.jsonl"
    path.write_bytes(second)  # the line it refers to is gone
    read = read_events(path)
    assert read.events == [] and "a reference" in read.warnings[0]
    path.write_bytes(first.replace(b"first call", b"other call") + second)  # it is there, but not the same
    read = read_events(path)
    assert len(read.events) == 1 and "does not match" in read.warnings[0]


def test_after_a_failed_write_the_log_refuses_more_and_a_resumed_writer_starts_whole(tmp_path):
    path = tmp_path / "events.jsonl"
    events = _stamped(SAMPLES[:6])
    writer = EventLogWriter(path)
    writer.write(events[0])
    writer.write(events[1])
    real_fd = writer._fd
    writer._fd = -1  # every write now fails
    with pytest.raises(OSError):
        writer.write(events[2])
    writer._fd = real_fd
    with pytest.raises(OSError):  # nothing is written after a hole in the log
        writer.write(events[3])
    writer.close()
    resumed = EventLogWriter(path)  # a resume appends; its first line leans on nothing before it
    resumed.write(events[3])
    resumed.close()
    lines = path.read_bytes().splitlines()
    assert b'"seq":4' in lines[-1] and b'"session_id":"s1"' in lines[-1] and b'"ts":' in lines[-1]
    read = read_events(path)
    assert read.warnings == [] and [e.seq for e in read.events if e.type != "Warning"] == [1, 2, 4]


async def test_a_write_and_two_reads_keep_each_text_once_in_the_log(tmp_path, monkeypatch):
    """A Write's content and a Read's output travel through several events (the call, its start,
    the approval's request and diff card, the result's card); the log holds each once."""
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    project = tmp_path / "p"
    project.mkdir()
    content = "".join(f"line {i}: a sentence that makes the content long enough to matter\n" for i in range(60))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [
        {"tool_calls": [{"id": "w1", "name": "Write", "input": {"file_path": "notes.txt", "content": content}}]},
        {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "notes.txt"}},
                        {"id": "r2", "name": "Read", "input": {"file_path": "notes.txt"}}]},
        {"text": "done"}]}))
    session = build_session(SessionOptions(cwd=str(project), script=str(script), interactive=True,
                                           permission_mode="default", no_claude_settings=True))
    seen: list = []

    def approve(event):
        seen.append(event)
        if event.type == "PermissionRequested":
            session.broker.answer(event.request_id, ApprovalAnswer("allow", input_sha256=event.input_sha256))

    session.subscribe(approve)
    await session.start()
    await session.run_turn("write the notes")
    await session.close()
    assert (project / "notes.txt").read_text() == content
    data = session.log_path.read_bytes()
    assert data.count(json.dumps(content).encode()[1:-1]) == 1
    line_30 = b"line 30: a sentence that makes the content long enough to matter"
    # the content; the approval's diff, as text and as the card's lines; the Read's numbered output
    # (without references it was 12: every event repeated it, and the screen's copy of each result)
    assert data.count(line_30) == 4
    read = read_events(session.log_path)
    logged = [e for e in seen if not e.ephemeral]
    assert read.warnings == [] and len(read.events) == len(logged)
    assert all(_same(a, b) for a, b in zip(read.events, logged, strict=True))
    request = next(e for e in read.events if e.type == "PermissionRequested")
    assert request.input["content"] == content and request.preview_display.new_text == content
    results = [e for e in read.events if e.type == "ToolCallResult" and e.tool == "Read"]
    assert results[0].model_content == results[1].model_content and line_30.decode() in results[0].model_content


def test_a_batch_group_list_is_written_once():
    ids = [f"call_{i:02d}" for i in range(10)]
    events = _stamped([ev.ToolCallScheduled(call_id=c, batch=1, group=0, groups=[ids]) for c in ids])
    encoder, decoder = LogEncoder(), LogDecoder()
    lines = [encoder.encode(e) for e in events]
    assert sum(line.count(b"call_07") for line in lines) == 2  # the list once, and its own call_id
    assert [decoder.decode(line).groups for line in lines] == [[ids]] * 10


def test_two_sessions_of_compact_lines_in_one_log_read_whole(tmp_path):
    """A resumed session appends with a fresh writer: its first line stands alone again."""
    path = tmp_path / "events.jsonl"
    first, second = _stamped(SAMPLES), _stamped(SAMPLES, start=1_900_000_000.0)
    second = [e.model_copy(update={"seq": len(first) + e.seq}) for e in second]
    for batch in (first, second):
        writer = EventLogWriter(path)
        for event in batch:
            writer.write(event)
        writer.close()
    read = read_events(path)
    assert read.warnings == []
    assert all(_same(a, b) for a, b in zip(read.events, first + second, strict=True))


def test_a_long_silence_is_written_as_a_time_again():
    events = _stamped(SAMPLES[:3])
    events[2] = events[2].model_copy(update={"ts": events[1].ts + 3 * 86_400})
    encoder, decoder = LogEncoder(), LogDecoder()
    lines = [encoder.encode(e) for e in events]
    assert b'"ts":' in lines[2] and b'"dt":' in lines[1]
    assert all(_same(decoder.decode(line), e) for line, e in zip(lines, events, strict=True))


def test_a_written_event_carries_the_time_its_replay_will_read():
    """The screen shows durations from the events' times; the log keeps them to the millisecond.
    Once written, the live event holds exactly the time a reader computes, so a row's "1ms" live
    is "1ms" replayed (it was "0ms" when a 1.4 ms call read back as 0.9 ms)."""
    events = _stamped(SAMPLES[:6])
    for event, gap in zip(events[1:], (0.0014, 0.0004, 0.0009, 0.0, 2.5004), strict=True):
        event.__dict__["ts"] = events[events.index(event) - 1].ts + gap
    exact = [e.ts for e in events]
    encoder, decoder = LogEncoder(), LogDecoder()
    read = [decoder.decode(encoder.encode(event)) for event in events]
    assert [e.ts for e in read] == [e.ts for e in events]
    # and no error piles up: each time stays within half a millisecond of the real one
    assert all(abs(e.ts - t) <= 0.0005 for e, t in zip(events, exact, strict=True))


def test_compact_lines_are_still_one_json_event_per_line_with_its_type_first():
    encoder = LogEncoder()
    for event in _stamped(SAMPLES):
        line = encoder.encode(event)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert next(iter(json.loads(line))) == "type"


def test_the_same_output_two_thousand_times_is_stored_once(tmp_path):
    path = tmp_path / "events.jsonl"
    content = "y" * 500
    writer = EventLogWriter(path)
    for i in range(1, 2001):
        writer.write(ev.ToolCallResult(seq=i, session_id="s", ts=1.0 + i, call_id=f"c{i}", tool="Read",
                                       model_content=content))
    writer.close()
    assert path.stat().st_size < 2000 * 200
    events = read_events(path).events
    assert len(events) == 2000 and all(e.model_content == content for e in events)
