"""The price table behind `total_cost_usd`: list prices for the models it knows, nothing for a
local server, the scripted model or a model it does not know (Vigil never guesses a price)."""

from __future__ import annotations

import pytest

from tui_app.headless.usage_report import UsageReport
from tui_app.providers.pricing import cost_usd, price_of


@pytest.mark.parametrize(("provider", "model", "base_url", "per_million"), [
    ("anthropic", "claude-sonnet-4-5-20250929", None, (3, 15)),
    ("anthropic", "claude-opus-4-1-20250805", None, (15, 75)),
    ("anthropic", "claude-opus-4-5", "http://127.0.0.1:8080", (5, 25)),  # a proxy still serves Anthropic's model
    ("anthropic", "claude-haiku-4-5", None, (1, 5)),
    ("openai", "gpt-4.1-mini-2025-04-14", None, (0.4, 1.6)),
    ("openai", "gpt-4o", "https://api.openai.com/v1", (2.5, 10)),
])
def test_known_models_cost_their_list_price(provider, model, base_url, per_million):
    price = price_of(provider, model, base_url)
    assert price is not None
    assert cost_usd(price, {"input_tokens": 1_000_000}) == pytest.approx(per_million[0])
    assert cost_usd(price, {"output_tokens": 1_000_000}) == pytest.approx(per_million[1])


@pytest.mark.parametrize(("provider", "model", "base_url"), [
    ("openai", "llama3.1:8b", "http://127.0.0.1:11434/v1"),   # ollama
    ("openai", "gpt-4.1", "http://localhost:8000/v1"),        # a local server that names itself after a model
    ("scripted", "scripted", None),
    ("anthropic", "some-future-model", None),
])
def test_local_scripted_and_unknown_models_cost_nothing(provider, model, base_url):
    price = price_of(provider, model, base_url)
    assert price is None and cost_usd(price, {"input_tokens": 10**9, "output_tokens": 10**9}) == 0


def test_cache_reads_and_writes_are_priced_and_totals_add_up_across_turns():
    report = UsageReport("anthropic")
    report.step("claude-sonnet-4-5", {"input_tokens": 1000, "cache_read_input_tokens": 10_000,
                                      "cache_creation_input_tokens": 2000, "output_tokens": 500}, api_ms=120)
    first = report.end_turn()
    expected = (1000 * 3 + 10_000 * 0.3 + 2000 * 3.75 + 500 * 15) / 1e6
    assert first["total_cost_usd"] == pytest.approx(expected) and first["duration_api_ms"] == 120
    report.step("claude-sonnet-4-5", {"input_tokens": 1000}, api_ms=30)
    second = report.end_turn()
    assert second["total_cost_usd"] == pytest.approx(expected + 0.003)  # cumulative, as Claude Code's total
    assert second["usage"]["input_tokens"] == 1000 and second["duration_api_ms"] == 30  # this turn's
    assert second["modelUsage"]["claude-sonnet-4-5"]["inputTokens"] == 2000
