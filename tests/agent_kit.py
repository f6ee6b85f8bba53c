"""Real sessions driven by a network provider against the loopback server, for tests.

Both wire formats are reached through the same small vocabulary (`reply(kind, text=…, tool_calls=…)`,
`tool_results(kind, request)`), so a scenario is written once and run through each provider.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

from tests.fakes import SAFE, UNSAFE, work_spec
from tests.sdk_types import problems
from tests.wire_server import Captured, LoopbackServer, Reply, anthropic_reply, openai_reply
from tui_app.agents.builtin_agent import BuiltinAgent
from tui_app.providers.anthropic import AnthropicModel
from tui_app.providers.openai import OpenAIModel
from tui_app.providers.retry import RetryPolicy
from tui_app.runtime.contract import (
    PermissionSpec,
    RawResult,
    StrictInput,
    ToolContext,
    ToolFlags,
    ToolSpec,
)
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.session import Session

PROVIDERS = ["anthropic", "openai"]
REQUEST_TYPES = {"anthropic": MessageCreateParamsStreaming, "openai": CompletionCreateParamsStreaming}

LOOK = work_spec("Look", SAFE)          # a read: read-only, concurrency-safe, needs no approval
CHANGE = work_spec("Change", UNSAFE)    # a write that needs no approval
EDIT = work_spec("Edit", ToolFlags(read_only=False, side_effect_scope="workspace", needs_approval=True),
                 permission=PermissionSpec(kind="edit"))  # asks: denied headless, allowed in acceptEdits


class ShellInput(StrictInput):
    text: str


async def shell(args: ShellInput, ctx: ToolContext) -> RawResult:
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", f"print({args.text!r})",
                                                   stdout=asyncio.subprocess.PIPE)
    out, _ = await process.communicate()
    return RawResult(output=out.decode())


SHELL = ToolSpec(name="Shell", description="Run a tiny process.", handler=shell, input_model=ShellInput,
                 flags=ToolFlags(read_only=False, side_effect_scope="system", needs_approval=False))


def provider_model(kind: str, server: LoopbackServer, **kw: Any) -> AnthropicModel | OpenAIModel:
    retry = kw.pop("retry", RetryPolicy(base_delay=0.01))
    if kind == "anthropic":
        return AnthropicModel(model="claude-sonnet-4-6", base_url=server.url, api_key="sk-test", retry=retry, **kw)
    return OpenAIModel(model="gpt-test", base_url=server.url + "/v1", api_key="sk-test", retry=retry, **kw)


def make_session(kind: str, server: LoopbackServer, cwd: str, *specs: ToolSpec, **kw: Any) -> Session:
    registry = ToolRegistry()
    for spec in specs or (LOOK, CHANGE, EDIT):
        registry.register(spec)
    model = kw.pop("model", None) or provider_model(kind, server)
    return Session(agent=BuiltinAgent(model, system_prompt="You are a test agent."), cwd=cwd, registry=registry, **kw)


def reply(kind: str, **kw: Any) -> Reply:
    if kind == "anthropic":
        return anthropic_reply(**kw)
    if "stop_reason" in kw:
        kw["finish_reason"] = kw.pop("stop_reason")
    kw.pop("thinking", None)
    return openai_reply(**kw)


def call(call_id: str, name: str, **data: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "input": data}


def tool_results(kind: str, request: Captured) -> list[tuple[str, str, bool | None]]:
    """(call id, content, is_error) of the tool results at the end of a request, in order."""
    messages = request.json["messages"]
    if kind == "anthropic":
        blocks = [b for b in messages[-1]["content"] if b["type"] == "tool_result"]
        return [(b["tool_use_id"], b["content"] if isinstance(b["content"], str) else b["content"][0]["text"],
                 b["is_error"]) for b in blocks]
    tail = []
    for message in reversed(messages):
        if message["role"] != "tool":
            break
        tail.append((message["tool_call_id"], message["content"], None))
    return tail[::-1]


def tool_uses(kind: str, request: Captured) -> list[tuple[str, str, Any]]:
    """(id, name, input) of every call in a request's conversation."""
    out = []
    for message in request.json["messages"]:
        if kind == "anthropic" and message["role"] == "assistant":
            out += [(b["id"], b["name"], b["input"]) for b in message["content"] if b["type"] == "tool_use"]
        elif kind == "openai" and message.get("tool_calls"):
            import json

            out += [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                    for c in message["tool_calls"]]
    return out


def request_problems(kind: str, request: Captured) -> list[str]:
    return problems(request.json, REQUEST_TYPES[kind])


def events_of(session: Session) -> list[Any]:
    """Subscribe before start: every event the session emits, in order."""
    seen: list[Any] = []
    session.subscribe(seen.append)
    return seen


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A private VIGIL_HOME: sessions are recorded where the test can read them, nowhere else."""
    path = tmp_path / "vigil-home"
    monkeypatch.setenv("VIGIL_HOME", str(path))
    return path
