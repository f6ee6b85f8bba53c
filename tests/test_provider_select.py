"""Which model a session talks to (flags, settings, environment), and `vigil --resume` end to end."""

from __future__ import annotations

import json

import pytest

from tests.agent_kit import LOOK, call, make_session, reply, request_problems
from tests.agent_kit import home as private_home
from tests.wire_server import LoopbackServer
from tui_app import assemble, cli
from tui_app.assemble import SessionOptions, SetupError, build_model
from tui_app.providers.anthropic import AnthropicModel
from tui_app.providers.openai import OpenAIModel
from tui_app.providers.scripted import ScriptedModel
from tui_app.providers.select import ProviderSetupError, build_client, resolve_config
from tui_app.runtime.registry import ToolRegistry

home = private_home  # the fixture, visible to this module's tests
PROVIDER_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")


@pytest.fixture
def clean_env(monkeypatch):
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_nothing_configured_means_the_bundled_demo(clean_env):
    model = build_model(SessionOptions())
    assert isinstance(model, ScriptedModel) and model.model == "scripted-demo"


def test_a_script_wins_over_any_key(clean_env, tmp_path):
    clean_env.setenv("ANTHROPIC_API_KEY", "sk-ant")
    script = tmp_path / "s.json"
    script.write_text('{"steps": [{"text": "hi"}], "model": "mine"}')
    assert build_model(SessionOptions(script=str(script))).model == "mine"
    assert isinstance(build_model(SessionOptions(provider="scripted")), ScriptedModel)


def test_the_key_in_the_environment_chooses_the_provider(clean_env):
    clean_env.setenv("OPENAI_API_KEY", "sk-oai")
    model = build_model(SessionOptions())
    assert isinstance(model, OpenAIModel) and model.url == "https://api.openai.com/v1/chat/completions"
    assert model.api_key == "sk-oai"
    clean_env.setenv("ANTHROPIC_API_KEY", "sk-ant")
    model = build_model(SessionOptions())
    assert isinstance(model, AnthropicModel) and model.url == "https://api.anthropic.com/v1/messages"
    assert model.headers() == {"anthropic-version": "2023-06-01", "x-api-key": "sk-ant"}


def test_a_missing_key_is_one_clear_line(clean_env):
    with pytest.raises(SetupError) as caught:
        build_model(SessionOptions(provider="anthropic"))
    assert str(caught.value) == ("ANTHROPIC_API_KEY is not set: the anthropic provider at api.anthropic.com "
                                 "needs an API key")
    with pytest.raises(SetupError, match="OPENAI_API_KEY is not set"):
        build_model(SessionOptions(provider="openai"))


def test_a_local_server_needs_a_model_name_but_no_key(clean_env):
    clean_env.setenv("OPENAI_BASE_URL", "http://localhost:11434")
    with pytest.raises(SetupError, match="name the model to use on http://localhost:11434 with --model"):
        build_model(SessionOptions())
    model = build_model(SessionOptions(model="qwen2.5-coder:7b"))
    assert isinstance(model, OpenAIModel) and model.api_key is None and model.headers() == {}
    assert model.url == "http://localhost:11434/v1/chat/completions" and model.model == "qwen2.5-coder:7b"


def test_settings_name_provider_model_url_and_the_key_variable_and_flags_win(clean_env):
    settings = {"provider": "openai", "model": "deepseek/deepseek-chat", "baseUrl": "https://openrouter.ai/api/v1",
                "apiKeyEnv": "OPENROUTER_API_KEY", "maxTokens": 4000, "env": {"OPENROUTER_API_KEY": "sk-or"}}
    config = resolve_config(settings=settings, environ={})
    assert (config.provider, config.model, config.base_url, config.api_key, config.max_tokens) == (
        "openai", "deepseek/deepseek-chat", "https://openrouter.ai/api/v1", "sk-or", 4000)
    flagged = resolve_config(model="other/model", base_url="http://127.0.0.1:8080/v1", settings=settings, environ={})
    assert (flagged.model, flagged.base_url) == ("other/model", "http://127.0.0.1:8080/v1")
    with pytest.raises(ProviderSetupError, match="OPENROUTER_API_KEY is not set"):
        resolve_config(settings={k: v for k, v in settings.items() if k != "env"}, environ={})


def test_bad_settings_are_refused_in_words(clean_env):
    with pytest.raises(ProviderSetupError, match="unknown provider 'gemini'"):
        resolve_config(settings={"provider": "gemini"}, environ={})
    with pytest.raises(ProviderSetupError, match="is not an http"):
        resolve_config(base_url="localhost:1234", model="m", environ={})
    with pytest.raises(ProviderSetupError, match="maxTokens must be a positive whole number"):
        resolve_config(provider="anthropic", settings={"maxTokens": "lots"}, environ={"ANTHROPIC_API_KEY": "k"})


def test_a_base_url_or_a_claude_model_implies_the_provider(clean_env):
    assert resolve_config(base_url="http://localhost:1234/v1", model="m", environ={}).provider == "openai"
    env = {"ANTHROPIC_API_KEY": "k"}
    assert resolve_config(base_url="https://proxy.anthropic.com", environ=env).provider == "anthropic"
    assert resolve_config(model="claude-opus-4-6", environ=env).provider == "anthropic"


@pytest.fixture
def test_tools(monkeypatch):
    """The built-in tools are built in other branches; a resumed CLI session gets the test tools."""

    def registry(policy):
        registry = ToolRegistry()
        registry.register(LOOK)
        return registry

    monkeypatch.setattr(assemble, "build_registry", registry)


async def test_vigil_resume_continues_a_recorded_session_with_its_provider_and_model(
        home, tmp_path, clean_env, test_tools, capsys):
    clean_env.setenv("ANTHROPIC_API_KEY", "sk-test")
    with LoopbackServer() as server:
        server.queue(reply("anthropic", tool_calls=[call("call_1", "Look", label="one")]),
                     reply("anthropic", text="Looked once."))
        recorded = AnthropicModel(model="claude-opus-4-6", base_url=server.url, api_key="sk-test")
        first = make_session("anthropic", server, str(tmp_path), LOOK, model=recorded)
        await first.start()
        await first.run_turn("Look once.")
        await first.close()

        server.queue(reply("anthropic", text="Still here."))
        argv = ["--resume", first.id, "-p", "And now?", "--base-url", server.url, "--cwd", str(tmp_path),
                "--output-format", "json"]
        import asyncio

        code = await asyncio.to_thread(cli.main, argv)
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["session_id"], out["result"], out["subtype"]) == (first.id, "Still here.", "success")
    request = server.requests[-1]
    assert request_problems("anthropic", request) == []
    body = request.json
    assert body["model"] == "claude-opus-4-6"  # the recorded model, not the default
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert body["messages"][2]["content"][0]["tool_use_id"] == "call_1"
    assert body["messages"][-1]["content"][0]["text"] == "And now?"


def test_resuming_a_session_that_does_not_exist_is_one_line(home, clean_env, capsys):
    assert cli.main(["--resume", "20990101-000000-ffffff", "-p", "hi"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no recorded session '20990101-000000-ffffff'" in err


def test_max_thinking_tokens_sets_the_thinking_budget():
    base = {"ANTHROPIC_API_KEY": "sk-ant"}
    assert resolve_config(environ=base).thinking_tokens is None
    assert resolve_config(environ={**base, "MAX_THINKING_TOKENS": "0"}).thinking_tokens is None
    config = resolve_config(environ={**base, "MAX_THINKING_TOKENS": "16000"})
    assert config.thinking_tokens == 16000 and build_client(config).thinking_tokens == 16000
    from_settings = resolve_config(settings={"env": {"MAX_THINKING_TOKENS": 2048}}, environ=base)
    assert from_settings.thinking_tokens == 2048
    for bad in ("500", "lots", "-5"):
        with pytest.raises(ProviderSetupError, match=f"MAX_THINKING_TOKENS must be 0 or a whole number of at "
                                                     f"least 1024, not '{bad}'"):
            resolve_config(environ={**base, "MAX_THINKING_TOKENS": bad})
