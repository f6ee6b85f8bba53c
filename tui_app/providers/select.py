"""Which model to talk to: flags, then settings, then the environment.

    provider   --provider, settings `provider`, else inferred: a base URL (anthropic.com → anthropic,
               anything else → an OpenAI-compatible server), a `claude…` model name, then which of
               ANTHROPIC_API_KEY / OPENAI_API_KEY / OPENAI_BASE_URL is set (Anthropic first)
    model      --model, settings `model`, else the provider's default (none for a server that is
               not OpenAI's own: its model names are its own business)
    base URL   --base-url, settings `baseUrl`, ANTHROPIC_BASE_URL / OPENAI_BASE_URL, the default
    API key    the variable named by settings `apiKeyEnv`, else ANTHROPIC_API_KEY / OPENAI_API_KEY,
               looked up in settings `env` first, then the process environment
    thinking   MAX_THINKING_TOKENS (Claude Code's variable, settings `env` or the environment): the
               Anthropic provider asks for extended thinking with that budget (at least 1024)

Nothing configured means no network provider (`None`): the caller runs the bundled demo.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

if TYPE_CHECKING:
    from tui_app.runtime.model import ModelClient

PROVIDERS = ("anthropic", "openai", "scripted")
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
BASE_URL_ENV = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
#: hosts that always want a key (a local server usually does not)
KEYED_HOSTS = ("api.openai.com", "openrouter.ai", "api.anthropic.com")
#: the smallest thinking budget the Messages API accepts
MIN_THINKING_TOKENS = 1024


def _wire(provider: str) -> ModuleType:
    """The provider's module, imported when one is chosen: a scripted run never loads httpx."""
    return importlib.import_module(f"tui_app.providers.{provider}")


class ProviderSetupError(ValueError):
    """A provider that cannot be set up as configured; the message is one line for the user."""


@dataclass(frozen=True)
class ProviderConfig:
    provider: str
    model: str
    base_url: str
    api_key: str | None
    max_tokens: int | None = None
    #: extended thinking budget (Anthropic); None: not asked for
    thinking_tokens: int | None = None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def choose_provider(flag: str | None, base_url: str | None, model: str | None, settings: Mapping[str, Any],
                    env: Mapping[str, str]) -> str | None:
    provider = flag or _text(settings.get("provider"))
    if provider is not None:
        if provider not in PROVIDERS:
            raise ProviderSetupError(f"unknown provider {provider!r} (choose one of {', '.join(PROVIDERS)})")
        return provider
    if base_url:
        return "anthropic" if (urlparse(base_url).hostname or "").endswith("anthropic.com") else "openai"
    if model and model.startswith("claude"):
        return "anthropic"
    if env.get("ANTHROPIC_API_KEY"):
        return "anthropic"
    if env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL"):
        return "openai"
    return None


def resolve_config(
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    settings: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ProviderConfig | None:
    """The network provider to use, `None` when nothing asks for one (or `scripted` was chosen)."""
    import os

    settings = settings or {}
    settings_env = settings.get("env") if isinstance(settings.get("env"), dict) else {}
    env = {**(os.environ if environ is None else environ), **{k: str(v) for k, v in settings_env.items()}}
    model = model or _text(settings.get("model"))
    base_url = base_url or _text(settings.get("baseUrl"))
    chosen = choose_provider(provider, base_url, model, settings, env)
    if chosen is None or chosen == "scripted":
        return None
    wire = _wire(chosen)
    base = base_url or _text(env.get(BASE_URL_ENV[chosen])) or wire.DEFAULT_BASE_URL
    parsed = urlparse(base)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ProviderSetupError(f"base URL {base!r} is not an http(s) URL")
    host = parsed.hostname
    key_var = _text(settings.get("apiKeyEnv")) or KEY_ENV[chosen]
    key = _text(env.get(key_var))
    if key is None and (chosen == "anthropic" or host in KEYED_HOSTS):
        raise ProviderSetupError(f"{key_var} is not set: the {chosen} provider at {host} needs an API key")
    if model is None:
        if chosen == "openai" and host != "api.openai.com":
            raise ProviderSetupError(f"name the model to use on {base} with --model (or `model` in settings)")
        model = wire.DEFAULT_MODEL
    max_tokens = settings.get("maxTokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
        raise ProviderSetupError(f"settings maxTokens must be a positive whole number, not {max_tokens!r}")
    return ProviderConfig(chosen, model, base, key, max_tokens, thinking_budget(env))


def thinking_budget(env: Mapping[str, str]) -> int | None:
    """MAX_THINKING_TOKENS as a budget; unset, empty or 0 turns thinking off."""
    raw = (env.get("MAX_THINKING_TOKENS") or "").strip()
    if raw in ("", "0"):
        return None
    if not raw.isdigit() or int(raw) < MIN_THINKING_TOKENS:
        raise ProviderSetupError(f"MAX_THINKING_TOKENS must be 0 or a whole number of at least "
                                 f"{MIN_THINKING_TOKENS}, not {raw!r}")
    return int(raw)


def build_client(config: ProviderConfig, **kw: Any) -> ModelClient:
    if config.provider == "anthropic":
        kw.setdefault("thinking_tokens", config.thinking_tokens)
        return _wire("anthropic").AnthropicModel(model=config.model, base_url=config.base_url, api_key=config.api_key,
                                             max_tokens=config.max_tokens, **kw)
    return _wire("openai").OpenAIModel(model=config.model, base_url=config.base_url, api_key=config.api_key,
                                   max_tokens=config.max_tokens, **kw)
