"""The prompt's meaning is decided below the screen (docs/architecture.md §13): `vigil -p "/compact"`
on a resumed session compacts it, as Claude Code does in `-p` and under the Agent SDK, and the
system/init line lists the session's slash commands and agent types. Real `vigil` processes, a
scripted model, the log read back from disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, SystemMessage, query

from tests.test_sdk_drop_in import clean_env, wrapper
from tui_app.runtime.log.eventlog import read_events

ROOT = Path(__file__).resolve().parent.parent
DEADLINE_S = 120


def vigil(tmp_path: Path, project: Path, *args: str) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VIGIL_HOME": str(tmp_path / "vigil-home"),
           "HOME": str(tmp_path / "home"), **clean_env()}
    done = subprocess.run([sys.executable, "-m", "tui_app", *args, "--output-format", "stream-json", "--verbose"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def script(tmp_path: Path, name: str, steps: list[dict[str, Any]]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"steps": steps}))
    return str(path)


def a_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".claude" / "commands").mkdir(parents=True)
    (project / ".claude" / "agents").mkdir()
    (project / ".claude" / "commands" / "shipit.md").write_text("---\ndescription: Ship it\n---\nShip $ARGUMENTS\n")
    (project / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a change\ntools: Read, Grep\n---\nReview carefully.\n")
    (project / "numbers.txt").write_text("4 8 15 16 23 42\n")
    (tmp_path / "home").mkdir()
    return project


def first_session(tmp_path: Path, project: Path) -> str:
    steps = [{"text": "Reading.", "tool_calls": [{"id": "toolu_1", "name": "Read",
                                                  "input": {"file_path": "numbers.txt"}}]},
             {"expect": ["4 8 15"], "text": "The numbers are 4 8 15 16 23 42."}]
    lines = vigil(tmp_path, project, "-p", "What are the numbers?", "--script", script(tmp_path, "one.json", steps))
    return lines[0]["session_id"]


def events_of(tmp_path: Path, session_id: str) -> list[Any]:
    return read_events(tmp_path / "vigil-home" / "sessions" / session_id / "events.jsonl").events


def test_p_compact_on_a_resumed_session_compacts_it_and_prints_claude_codes_lines(tmp_path):
    project = a_project(tmp_path)
    session_id = first_session(tmp_path, project)
    summary = script(tmp_path, "two.json", [{"text": "<summary>The numbers: 4 8 15 16 23 42.</summary>"}])
    lines = vigil(tmp_path, project, "-p", "/compact keep the numbers", "--resume", session_id, "--script", summary)

    kinds = [(line["type"], line.get("subtype")) for line in lines]
    assert kinds[0] == ("system", "init") and kinds[-1] == ("result", "success")
    [boundary] = [line for line in lines if line.get("subtype") == "compact_boundary"]
    assert boundary["compact_metadata"]["trigger"] == "manual"
    assert boundary["compact_metadata"]["pre_tokens"] > 0
    statuses = [line for line in lines if line.get("subtype") == "status"]
    assert statuses and statuses[0]["status"] == "compacting"
    assert lines.index(statuses[0]) < lines.index(boundary)
    # the continuation the next request starts from carries the summary
    continuation = [line for line in lines[lines.index(boundary):] if line["type"] == "user"]
    assert any("4 8 15 16 23 42" in json.dumps(line) for line in continuation)
    assert lines[-1]["num_turns"] == 0 and lines[-1]["session_id"] == session_id

    compacted = [e for e in events_of(tmp_path, session_id) if e.type == "ConversationCompacted"]
    assert [e.trigger for e in compacted] == ["manual"]
    assert "4 8 15 16 23 42" in compacted[0].summary
    # the text "/compact" never reached the model as a prompt
    assert [e.prompt for e in events_of(tmp_path, session_id) if e.type == "TurnStarted"] == ["What are the numbers?"]


def test_an_unknown_slash_word_goes_to_the_model_as_text_headless_as_claude_codes_does(tmp_path):
    project = a_project(tmp_path)
    steps = [{"text": "That is a path."}]
    lines = vigil(tmp_path, project, "-p", "/usr/bin/env is what?", "--script", script(tmp_path, "s.json", steps))
    assert lines[-1]["result"] == "That is a path." and lines[-1]["num_turns"] == 1
    prompts = [e.prompt for e in events_of(tmp_path, lines[0]["session_id"]) if e.type == "TurnStarted"]
    assert prompts == ["/usr/bin/env is what?"]


def test_a_local_command_in_p_runs_without_a_model_call(tmp_path):
    project = a_project(tmp_path)
    # an empty script: a model call would fail the run
    lines = vigil(tmp_path, project, "-p", "/cost", "--script", script(tmp_path, "empty.json", []))
    said = [line for line in lines if line["type"] == "assistant"]
    assert said and said[0]["local_command_run"]["command"] == "usage"  # Claude Code's canonical name
    assert "Input tokens 0" in said[0]["message"]["content"][0]["text"]
    assert lines[-1]["num_turns"] == 0 and lines[-1]["subtype"] == "success"


def test_system_init_lists_slash_commands_and_agent_types_as_claude_code_does(tmp_path):
    project = a_project(tmp_path)
    lines = vigil(tmp_path, project, "-p", "hi", "--script", script(tmp_path, "s.json", [{"text": "Hello."}]))
    init = lines[0]
    assert {"compact", "clear", "context", "model", "usage"} <= set(init["slash_commands"])
    assert "shipit" in init["slash_commands"]  # the project's own command file
    assert "reviewer" in init["agents"] and "general-purpose" in init["agents"]


async def test_compact_through_the_agent_sdk_yields_a_compact_boundary_system_message(tmp_path):
    project = a_project(tmp_path)
    session_id = first_session(tmp_path, project)
    summary = script(tmp_path, "two.json", [{"text": "<summary>Numbers: 4 8 15 16 23 42.</summary>"}])
    # the wrapper keeps the first run's VIGIL_HOME (tmp_path / "vigil-home")
    cli = str(wrapper(tmp_path, "--script", summary))
    options = ClaudeAgentOptions(cli_path=cli, cwd=str(project), resume=session_id,
                                 env={**clean_env(), "HOME": str(tmp_path / "home")})
    messages = [m async for m in query(prompt="/compact", options=options)]
    boundaries = [m for m in messages if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
    assert len(boundaries) == 1 and boundaries[0].data["compact_metadata"]["trigger"] == "manual"
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    assert [e.trigger for e in events_of(tmp_path, session_id) if e.type == "ConversationCompacted"] == ["manual"]
