"""Headless runs over a real temp project: stream-json as Claude Code shapes it, and the log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_kit import home as private_home
from tui_app.headless.runner import run_headless
from tui_app.runtime.log.eventlog import read_events

ROOT = Path(__file__).parent.parent
home = private_home  # the fixture, visible to this module's tests

SCRIPT = {"steps": [
    {"text": "Looking at the project.", "tool_calls": [
        {"id": "toolu_01", "name": "Glob", "input": {"pattern": "**/*.py"}},
        {"id": "toolu_02", "name": "Read", "input": {"file_path": "app.py"}},
        {"id": "toolu_03", "name": "Read", "input": {"file_path": "missing.py"}}]},
    {"expect": ["def main", "app.py"], "text": "Now a write, which needs approval.", "tool_calls": [
        {"id": "toolu_04", "name": "Write", "input": {"file_path": "new.txt", "content": "x"}},
        {"id": "toolu_05", "name": "Grep", "input": {"pattern": "main", "output_mode": "content"}}]},
    {"text": "The entry point is `main` in app.py."},
]}


def run(tmp_path: Path, fmt: str, *extra: str) -> subprocess.CompletedProcess:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    (project / "app.py").write_text("def main():\n    return 0\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VIGIL_HOME": str(tmp_path / "home")}
    return subprocess.run(
        [sys.executable, "-m", "tui_app", "-p", "Where is the entry point?", "--script", str(script),
         "--cwd", str(project), "--output-format", fmt, *extra],
        capture_output=True, text=True, env=env, timeout=60)


def test_stream_json_has_claude_codes_shape(tmp_path):
    out = run(tmp_path, "stream-json")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]  # every line parses
    assert lines[0]["type"] == "system" and lines[0]["subtype"] == "init"
    assert {"Read", "Glob", "Grep"} <= set(lines[0]["tools"]) and lines[0]["permissionMode"] == "default"
    assert lines[-1]["type"] == "result" and sum(1 for x in lines if x["type"] == "result") == 1
    uses = [b for x in lines if x["type"] == "assistant" for b in x["message"]["content"] if b["type"] == "tool_use"]
    results = [b for x in lines if x["type"] == "user" for b in x["message"]["content"]]
    assert [u["id"] for u in uses] == ["toolu_01", "toolu_02", "toolu_03", "toolu_04", "toolu_05"]
    assert [r["tool_use_id"] for r in results] == [u["id"] for u in uses]  # one result per use, in order
    by_id = {r["tool_use_id"]: r for r in results}
    assert "is_error" not in by_id["toolu_02"] and "def main" in by_id["toolu_02"]["content"]
    assert by_id["toolu_03"]["is_error"] is True
    assert by_id["toolu_04"]["is_error"] is True  # asked, and nobody can answer headless
    result = lines[-1]
    assert result["subtype"] == "success" and result["is_error"] is False
    assert result["result"] == "The entry point is `main` in app.py."
    assert result["num_turns"] == 3
    assert result["permission_denials"] == [{"tool_name": "Write", "tool_use_id": "toolu_04",
                                             "tool_input": {"file_path": "new.txt", "content": "x"}}]
    assert not (tmp_path / "proj" / "new.txt").exists()


def test_the_session_is_persisted_as_jsonl(tmp_path):
    out = run(tmp_path, "stream-json")
    session_id = json.loads(out.stdout.splitlines()[0])["session_id"]
    log = tmp_path / "home" / "sessions" / session_id / "events.jsonl"
    assert all(json.loads(line)["type"] for line in log.read_text().splitlines())  # one JSON event a line
    read = read_events(log)
    events = read.events
    assert not read.warnings
    assert events[0].type == "SessionStarted" and events[-1].type == "SessionEnded"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert {e.session_id for e in events} == {session_id}


def test_text_output_is_the_final_answer(tmp_path):
    out = run(tmp_path, "text")
    assert out.returncode == 0 and out.stdout == "The entry point is `main` in app.py.\n"


def test_json_output_is_one_result_object(tmp_path):
    out = run(tmp_path, "json")
    (obj,) = [json.loads(line) for line in out.stdout.splitlines()]
    assert obj["type"] == "result" and obj["num_turns"] == 3


def test_events_output_is_the_raw_session_events(tmp_path):
    out = run(tmp_path, "events")
    types = [json.loads(line)["type"] for line in out.stdout.splitlines()]
    assert types[0] == "SessionStarted" and "ToolCallScheduled" in types and types[-1] == "SessionEnded"
    assert "AssistantTextDelta" not in types


def test_max_turns_ends_with_error_max_turns(tmp_path):
    out = run(tmp_path, "stream-json", "--max-turns", "1")
    result = json.loads(out.stdout.splitlines()[-1])
    assert out.returncode == 1
    assert (result["subtype"], result["is_error"], result["num_turns"]) == ("error_max_turns", True, 1)
    # the calls the model asked for in that one step still got their results
    users = [json.loads(line) for line in out.stdout.splitlines() if json.loads(line)["type"] == "user"]
    assert len(users) == 3


def test_plan_mode_denies_the_write_with_a_reason(tmp_path):
    out = run(tmp_path, "stream-json", "--permission-mode", "plan")
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    write = next(b for x in lines if x["type"] == "user" for b in x["message"]["content"]
                 if b["tool_use_id"] == "toolu_04")
    assert write["is_error"] and "plan mode" in write["content"]


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_stream_json_carries_thinking_as_claude_code_does(kind, home, tmp_path):
    import io

    from tests.agent_kit import make_session
    from tests.wire_server import LoopbackServer, Reply, anthropic_reply, data_lines, openai_chunks

    if kind == "anthropic":
        answer = anthropic_reply(thinking="Plan: answer briefly.", text="Hello.")
    else:
        chunks = openai_chunks(text="Hello.")
        base = {k: v for k, v in chunks[0].items() if k != "choices"}
        chunks.insert(1, {**base, "choices": [{"index": 0, "delta": {"reasoning_content": "Plan: answer briefly."},
                                               "finish_reason": None}]})
        answer = Reply(pieces=data_lines(chunks))
    with LoopbackServer() as server:
        server.queue(answer)
        session = make_session(kind, server, str(tmp_path))
        out = io.StringIO()
        assert await run_headless(session, "hi", "stream-json", out) == 0
    assistants = [json.loads(line) for line in out.getvalue().splitlines() if json.loads(line)["type"] == "assistant"]
    (first,), (second,) = (a["message"]["content"] for a in assistants)
    assert assistants[0]["message"]["id"] == assistants[1]["message"]["id"]  # one response, two blocks
    assert first["type"] == "thinking" and first["thinking"] == "Plan: answer briefly."
    assert second == {"type": "text", "text": "Hello."}
