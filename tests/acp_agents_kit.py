"""Codex (codex-acp), Gemini CLI and OpenCode under Vigil, offline: each pinned agent (tests/agents)
in a fresh HOME, configured for the loopback model server the way its own documentation says
(docs/architecture.md §11), named in the settings' `agents` under its preset's name, and run by a
real Vigil session.

Codex speaks the Responses API (tests/wire_responses.py), Gemini CLI generateContent
(tests/wire_gemini.py), OpenCode chat completions (tests/wire_server.py's openai_chunks).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.cc_kit import recorder  # noqa: F401  (re-exported for the tests)
from tests.real_agents import codex_acp, gemini_cli, opencode
from tests.wire_gemini import gemini_json
from tests.wire_server import Captured, LoopbackServer, Reply, openai_reply
from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime.permissions.broker import ApprovalAnswer
from tui_app.runtime.session import Session

ROOT = Path(__file__).parent.parent


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A fresh HOME and XDG dirs for the agent, a private VIGIL_HOME."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vigil-home"))
    for name, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                      ("XDG_CACHE_HOME", ".cache"), ("XDG_STATE_HOME", ".local/state")):
        monkeypatch.setenv(name, str(path / sub))
    return path


@pytest.fixture
def project(tmp_path, home) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "notes.txt").write_text("hello world\n")
    return path


@pytest.fixture
def server():
    with LoopbackServer() as running:
        yield running


def write_settings(tmp_path: Path, name: str, entry: dict[str, Any]) -> Path:
    settings = tmp_path / f"{name}-settings.json"
    settings.write_text(json.dumps({"agents": {name: entry}}))
    return settings


# ---- the three agents ------------------------------------------------------------------------------

@pytest.fixture
def scratch():
    """A TMPDIR outside /tmp for Codex: with its CODEX_HOME under /tmp (pytest's tmp_path) Codex
    refuses to create its helper binaries in a TMPDIR there, and every tool call fails."""
    path = Path(tempfile.mkdtemp(prefix="vigil-codex-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def codex_entry(tmp_path: Path, server: LoopbackServer, scratch: Path) -> dict[str, Any]:
    """codex-acp with a `loop` provider (Responses API) in its CODEX_HOME, TMPDIR `scratch`."""
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        'model = "gpt-5.5"\nmodel_provider = "loop"\n\n[model_providers.loop]\nname = "loop"\n'
        f'base_url = "{server.url}/v1"\nenv_key = "LOOP_API_KEY"\nwire_api = "responses"\n')
    return {"command": str(codex_acp()), "args": [],
            "env": {"CODEX_HOME": str(codex_home), "LOOP_API_KEY": "sk-loop", "TMPDIR": str(scratch)}}


def gemini_entry(tmp_path: Path, server: LoopbackServer) -> dict[str, Any]:
    """Gemini CLI with an API key against GOOGLE_GEMINI_BASE_URL; folder trust off."""
    cli_home = tmp_path / "gemini-home"
    (cli_home / ".gemini").mkdir(parents=True)
    (cli_home / ".gemini" / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False}, "general": {"disableAutoUpdate": True}}))
    return {"command": "node", "args": [str(gemini_cli()), "--acp"],
            "env": {"GEMINI_CLI_HOME": str(cli_home), "GEMINI_API_KEY": "test-key",
                    "GOOGLE_GEMINI_BASE_URL": server.url}}


def opencode_entry(tmp_path: Path, server: LoopbackServer, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """OpenCode with an openai-compatible `loop` provider; no downloads, no updates, no sharing."""
    config = tmp_path / "opencode.json"
    config.write_text(json.dumps({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"loop": {"npm": "@ai-sdk/openai-compatible", "name": "Loop",
                              "options": {"baseURL": f"{server.url}/v1", "apiKey": "x"},
                              "models": {"m": {"name": "M", "tool_call": True}}}},
        "model": "loop/m", "small_model": "loop/m", "autoupdate": False, "share": "disabled", **(extra or {})}))
    return {"command": str(opencode()), "args": ["acp"],
            "env": {"OPENCODE_CONFIG": str(config), "OPENCODE_DISABLE_MODELS_FETCH": "1",
                    "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                    "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1"}}


ENTRIES = {"gemini": gemini_entry, "opencode": opencode_entry}


def gemini_aside(request: Captured) -> Reply | None:
    """Gemini CLI's side requests (`:generateContent`, a JSON schema in the body: its model router,
    a next-speaker check) answered on the side with JSON of their schema."""
    if ":generateContent" not in request.path:
        return None
    body = request.json
    schema = (body.get("generationConfig") or {}).get("responseJsonSchema") or (
        body.get("generationConfig") or {}).get("responseSchema") or {}
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    if "model_choice" in props:
        return gemini_json({"reasoning": "simple", "model_choice": "flash"})
    if "complexity_score" in props:
        return gemini_json({"complexity_reasoning": "a small task", "complexity_score": 10})
    if "next_speaker" in props:
        return gemini_json({"reasoning": "the model answered", "next_speaker": "user"})
    return gemini_json({key: "" for key in props})


def opencode_aside(request: Captured) -> Reply | None:
    """OpenCode titles each new session with a model call of its own (in the background)."""
    if b"You are a title generator" in request.body:
        return openai_reply(text="A test session")
    return None


ASIDES = {"gemini": gemini_aside, "opencode": opencode_aside}


def agent_session(tmp_path: Path, project: Path, server: LoopbackServer, name: str, *,
                  entry: dict[str, Any] | None = None, **kw: Any) -> Session:
    server.aside = ASIDES.get(name)
    settings = write_settings(tmp_path, name, entry or ENTRIES[name](tmp_path, server))
    options = SessionOptions(cwd=str(project), agent=name, settings_file=str(settings), no_claude_settings=True,
                             **{"interactive": True, **kw})
    return build_session(options)


def answer_every_request(session: Session, decision: str) -> list[Any]:
    asked: list[Any] = []

    def on_event(event: Any) -> None:
        if event.type == "PermissionRequested":
            asked.append(event)
            session.broker.answer(event.request_id, ApprovalAnswer(decision, input_sha256=event.input_sha256))
    session.subscribe(on_event)
    return asked


def headless(tmp_path: Path, project: Path, server: LoopbackServer, name: str, prompt: str, *args: str,
             entry: dict[str, Any] | None = None) -> subprocess.CompletedProcess[str]:
    """`vigil -p PROMPT --agent NAME --output-format stream-json`, as a user runs it."""
    server.aside = ASIDES.get(name)
    settings = write_settings(tmp_path, name, entry or ENTRIES[name](tmp_path, server))
    return subprocess.run([sys.executable, "-m", "tui_app", "-p", prompt, "--agent", name, "--settings",
                           str(settings), "--output-format", "stream-json", *args], cwd=project,
                          capture_output=True, text=True, timeout=240,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def stream_lines(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def call_story(seen: list[Any], call_id: str) -> list[str]:
    """What happened to one call, in order: the event types that name it (and who decided)."""
    story = []
    for event in seen:
        if getattr(event, "call_id", None) != call_id:
            continue
        told = event.type
        if event.type == "PermissionResolved":
            told += f":{event.decision}:{event.decided_by}"
        story.append(told)
    return story


def chat_tool_result(request: Captured, call_id: str) -> str | None:
    """What a chat-completions request tells the model about one of its calls."""
    for message in request.json.get("messages", []):
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            content = message.get("content")
            if isinstance(content, list):
                return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
            return content
    return None
