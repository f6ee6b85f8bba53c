"""What a model's tokens cost, in US dollars, from a small list-price table.

Claude Code reports `total_cost_usd` and a per-model `modelUsage` on every result; Vigil does the
same from this table. A model the table does not know, a local server (an OpenAI-compatible URL
that is not OpenAI's) and the scripted model cost 0: Vigil never guesses a price.

Prices are per million tokens (list prices, 2025–2026). Cache writes are priced at the 5-minute
rate (1.25× input for Anthropic), cache reads at the provider's cached-input rate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlparse


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_write: float
    cache_read: float
    context_window: int = 0
    max_output: int = 0


def _claude(inp: float, out: float, context: int = 200_000, max_output: int = 64_000) -> Price:
    return Price(inp, out, inp * 1.25, inp * 0.1, context, max_output)


def _openai(inp: float, out: float, cached: float, context: int, max_output: int) -> Price:
    return Price(inp, out, inp, cached, context, max_output)


#: model name prefixes, most specific first (a date suffix or a `-latest` never matters)
ANTHROPIC: tuple[tuple[str, Price], ...] = (
    ("claude-opus-4-0", _claude(15, 75, max_output=32_000)),
    ("claude-opus-4-1", _claude(15, 75, max_output=32_000)),
    ("claude-opus-4-2025", _claude(15, 75, max_output=32_000)),
    ("claude-opus-4", _claude(5, 25)),  # Opus 4.5 and later
    ("claude-opus-5", _claude(4, 20, context=1_000_000, max_output=128_000)),  # as Claude Code 2.1.332 lists it
    ("claude-opus", _claude(5, 25)),
    ("claude-sonnet-4", _claude(3, 15)),
    ("claude-3-7-sonnet", _claude(3, 15)),
    ("claude-3-5-sonnet", _claude(3, 15, max_output=8_192)),
    ("claude-sonnet", _claude(3, 15)),
    ("claude-haiku-4", _claude(1, 5)),
    ("claude-3-5-haiku", _claude(0.8, 4, max_output=8_192)),
    ("claude-3-haiku", _claude(0.25, 1.25, max_output=4_096)),
    ("claude-haiku", _claude(1, 5)),
)
OPENAI: tuple[tuple[str, Price], ...] = (
    ("gpt-4.1-nano", _openai(0.1, 0.4, 0.025, 1_047_576, 32_768)),
    ("gpt-4.1-mini", _openai(0.4, 1.6, 0.1, 1_047_576, 32_768)),
    ("gpt-4.1", _openai(2, 8, 0.5, 1_047_576, 32_768)),
    ("gpt-4o-mini", _openai(0.15, 0.6, 0.075, 128_000, 16_384)),
    ("gpt-4o", _openai(2.5, 10, 1.25, 128_000, 16_384)),
    ("gpt-5-nano", _openai(0.05, 0.4, 0.005, 400_000, 128_000)),
    ("gpt-5-mini", _openai(0.25, 2, 0.025, 400_000, 128_000)),
    ("gpt-5", _openai(1.25, 10, 0.125, 400_000, 128_000)),
    ("o4-mini", _openai(1.1, 4.4, 0.275, 200_000, 100_000)),
    ("o3-mini", _openai(1.1, 4.4, 0.55, 200_000, 100_000)),
    ("o3", _openai(2, 8, 0.5, 200_000, 100_000)),
)
#: hosts whose prices the table holds; any other OpenAI-compatible server is local or its own business
PRICED_HOSTS = {"openai": ("api.openai.com",)}


def _find(table: tuple[tuple[str, Price], ...], model: str) -> Price | None:
    name = re.sub(r"^[a-z0-9-]+/", "", model.strip().lower())  # `anthropic/claude-…`, `openai/gpt-…`
    for prefix, price in table:
        if name.startswith(prefix):
            return price
    return None


def price_of(provider: str, model: str, base_url: str | None = None) -> Price | None:
    """The list price of `model` as `provider` serves it; None when Vigil cannot know it (a local
    server, the scripted model, a model the table does not hold)."""
    if provider == "anthropic":
        return _find(ANTHROPIC, model)
    if provider == "openai":
        host = (urlparse(base_url).hostname or "") if base_url else "api.openai.com"
        if host not in PRICED_HOSTS["openai"]:
            return None
        return _find(OPENAI, model)
    return None


def cost_usd(price: Price | None, usage: Mapping[str, int]) -> float:
    """Dollars for one usage record in the runtime's words (input_tokens excludes cache reads)."""
    if price is None:
        return 0.0
    total = (usage.get("input_tokens", 0) * price.input + usage.get("output_tokens", 0) * price.output
             + usage.get("cache_creation_input_tokens", 0) * price.cache_write
             + usage.get("cache_read_input_tokens", 0) * price.cache_read)
    return round(total / 1_000_000, 10)
