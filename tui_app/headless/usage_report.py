"""Tokens, time and money for a `result` line, as Claude Code reports them.

`usage` is Anthropic's usage object with every field filled in (the SDKs type it as non-nullable);
`modelUsage` is keyed by model, with the cost from the price table (0 for local models);
`duration_api_ms` is the time spent waiting for model responses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tui_app.providers.pricing import Price, cost_usd, price_of

TOKEN_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")


def anthropic_usage(usage: Mapping[str, int]) -> dict[str, Any]:
    """The runtime's usage counters as the full object Claude Code writes (every key of the
    Messages API's usage: the TypeScript SDK types the result's usage as non-nullable)."""
    return {
        **{key: int(usage.get(key, 0)) for key in TOKEN_KEYS},
        "output_tokens_details": {"thinking_tokens": 0},
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0,
                           "ephemeral_5m_input_tokens": int(usage.get("cache_creation_input_tokens", 0))},
        "inference_geo": "", "iterations": [], "speed": "standard", "fallback_credit": None,
    }


@dataclass
class ModelTally:
    price: Price | None
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_KEYS, 0))
    cost: float = 0.0

    def add(self, usage: Mapping[str, int]) -> None:
        for key in TOKEN_KEYS:
            self.tokens[key] += int(usage.get(key, 0) or 0)
        self.cost += cost_usd(self.price, usage)

    def model_usage(self) -> dict[str, Any]:
        price = self.price
        return {
            "inputTokens": self.tokens["input_tokens"], "outputTokens": self.tokens["output_tokens"],
            "cacheReadInputTokens": self.tokens["cache_read_input_tokens"],
            "cacheCreationInputTokens": self.tokens["cache_creation_input_tokens"],
            "webSearchRequests": 0, "costUSD": round(self.cost, 10),
            "contextWindow": price.context_window if price else 0,
            "maxOutputTokens": price.max_output if price else 0,
            "costBasis": "list" if price else "unknown",
        }


@dataclass
class UsageReport:
    """Cost and per-model usage since the process started (Claude Code's totals are cumulative);
    the token usage and API time of the current turn."""

    provider: str
    base_url: str | None = None
    models: dict[str, ModelTally] = field(default_factory=dict)
    turn_tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_KEYS, 0))
    turn_api_ms: int = 0

    def step(self, model: str, usage: Mapping[str, int], api_ms: int) -> None:
        tally = self.models.get(model)
        if tally is None:
            tally = self.models[model] = ModelTally(price_of(self.provider, model, self.base_url))
        tally.add(usage)
        for key in TOKEN_KEYS:
            self.turn_tokens[key] += int(usage.get(key, 0) or 0)
        self.turn_api_ms += max(0, api_ms)

    def end_turn(self) -> dict[str, Any]:
        """The result line's usage fields; the per-turn counters start again."""
        fields = {
            "duration_api_ms": self.turn_api_ms,
            "total_cost_usd": round(sum(t.cost for t in self.models.values()), 10),
            "usage": anthropic_usage(self.turn_tokens),
            "modelUsage": {name: tally.model_usage() for name, tally in self.models.items()},
        }
        self.turn_tokens = dict.fromkeys(TOKEN_KEYS, 0)
        self.turn_api_ms = 0
        return fields
