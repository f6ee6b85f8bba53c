"""The built-in agent's requests on the wire, against the loopback Anthropic and OpenAI servers:
memory files in the system prompt, the compaction request and the conversation after it, and a
hook's context merged into the prompt's one user message for OpenAI-compatible servers."""

from __future__ import annotations

import json

import pytest

from tests.agent_kit import PROVIDERS, call, reply, request_problems
from tests.builtin_kit import Workspace, of
from tests.builtin_kit import workspace as private_workspace
from tests.wire_server import LoopbackServer
from tui_app.agents.compaction import SUMMARY_INSTRUCTION
from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime.log.conversation import continuation_text

workspace = private_workspace  # the fixture, visible to this module's tests


def usage(tokens: int) -> dict[str, int]:
    return {"input_tokens": tokens, "output_tokens": 20, "prompt_tokens": tokens, "completion_tokens": 20}


def network_session(kind: str, server: LoopbackServer, workspace: Workspace, monkeypatch, settings: dict):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path = workspace.root / "settings.json"
    path.write_text(json.dumps(settings), encoding="utf-8")
    url = server.url if kind == "anthropic" else server.url + "/v1"
    model = "claude-sonnet-4-6" if kind == "anthropic" else "gpt-test"
    session = build_session(SessionOptions(cwd=str(workspace.project), provider=kind, base_url=url, model=model,
                                           settings_file=str(path)))
    session.agent.client.retry.base_delay = 0.01  # type: ignore[attr-defined]
    return session


def system_text(kind: str, body: dict) -> str:
    return body["system"][0]["text"] if kind == "anthropic" else body["messages"][0]["content"]


def conversation(kind: str, body: dict) -> list[dict]:
    return body["messages"] if kind == "anthropic" else [m for m in body["messages"] if m["role"] != "system"]


def last_text(kind: str, message: dict) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return [b for b in content if b.get("type") == "text"][-1]["text"]


async def run_turn(session, prompt: str) -> list:
    seen: list = []
    session.subscribe(seen.append)
    await session.start()
    try:
        await session.run_turn(prompt)
    finally:
        await session.close()
    return seen


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_the_system_prompt_carries_the_memory_files(kind, workspace: Workspace, monkeypatch):
    workspace.write(".claude/CLAUDE.md", "Answer like a pirate.", under=workspace.home)
    workspace.write("CLAUDE.md", "Tests run with `make test`.\nSee @docs/style.md")
    workspace.write("docs/style.md", "Four spaces, never tabs.")
    with LoopbackServer() as server:
        server.queue(reply(kind, text="Arr."))
        session = network_session(kind, server, workspace, monkeypatch, {})
        await run_turn(session, "hello")
    [request] = server.requests
    assert request_problems(kind, request) == []
    system = system_text(kind, request.json)
    for words in ("Answer like a pirate.", "Tests run with `make test`.", "Four spaces, never tabs.",
                  f"Contents of {workspace.project / 'docs' / 'style.md'}"):
        assert words in system
    assert system.index("Answer like a pirate.") < system.index("Tests run with") < system.index("Four spaces")


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_the_compaction_request_and_the_conversation_after_it(kind, workspace: Workspace, monkeypatch):
    workspace.write("a.txt", "alpha\n")
    summary = "SUMMARY: the user asked to read a.txt; it holds alpha."
    with LoopbackServer() as server:
        server.queue(reply(kind, text="Reading.", tool_calls=[call("call_1", "Read", file_path="a.txt")],
                           usage=usage(9000)),
                     reply(kind, text=summary, usage=usage(9100)),
                     reply(kind, text="a.txt holds alpha.", usage=usage(500)))
        session = network_session(kind, server, workspace, monkeypatch,
                                  {"contextWindow": 10_000, "autoCompact": {"threshold": 0.8}})
        seen = await run_turn(session, "What is in a.txt?")
    first, compaction, after = server.requests
    for request in server.requests:
        assert request_problems(kind, request) == []
    # the summary request: the whole conversation (the call and its result), then the instruction,
    # with the same system prompt and tools as before (the prompt cache holds)
    body = compaction.json
    messages = conversation(kind, body)
    assert last_text(kind, messages[-1]) == SUMMARY_INSTRUCTION
    assert "alpha" in json.dumps(messages)
    assert system_text(kind, body) == system_text(kind, first.json)
    assert body["tools"] == first.json["tools"]
    if kind == "anthropic":  # the results, then the instruction (the API reads them as one user turn)
        assert [m["role"] for m in messages[-2:]] == ["user", "user"]
        assert messages[-2]["content"][0]["type"] == "tool_result"
    # afterwards the model sees the summary alone
    rest = conversation(kind, after.json)
    assert len(rest) == 1 and last_text(kind, rest[0]) == continuation_text(summary)
    [compacted] = of(seen, "ConversationCompacted")
    assert compacted.summary == summary and compacted.tokens_before >= 9000
    assert compacted.usage.get("output_tokens") == 20


async def test_a_hooks_context_and_the_prompt_are_one_user_message_for_openai(workspace: Workspace, monkeypatch):
    hooks = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'Remember: tabs'"}]}]}}
    with LoopbackServer() as server:
        server.queue(reply("openai", text="Noted."))
        session = network_session("openai", server, workspace, monkeypatch, hooks)
        seen = await run_turn(session, "Format the code")
    assert [e.source for e in of(seen, "UserMessage")] == ["user", "hook"]
    users = [m for m in server.requests[0].json["messages"] if m["role"] == "user"]
    assert users == [{"role": "user", "content": "Format the code\n\nRemember: tabs"}]
