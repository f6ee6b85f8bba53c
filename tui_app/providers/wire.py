"""Small pieces both wire formats need: schemas as providers accept them, safe tool inputs, usage."""

from __future__ import annotations

from typing import Any

_SCHEMA_META = ("$schema", "$id")


def provider_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema as providers accept it: an object schema with `properties`, without
    the `$schema`/`$id` keys MCP servers include (some providers reject them)."""
    out = {k: v for k, v in schema.items() if k not in _SCHEMA_META}
    out.setdefault("type", "object")
    if out.get("type") == "object" and not isinstance(out.get("properties"), dict):
        out["properties"] = {}
    return out


def safe_tool_input(value: Any) -> dict[str, Any]:
    """What goes back to the provider as a call's input. A model that sent invalid JSON (or JSON
    that is not an object) gets `{}`: the APIs reject anything else, and the call's error result
    already tells the model what was wrong with what it sent."""
    return value if isinstance(value, dict) else {}


def int_usage(usage: Any) -> dict[str, int]:
    """The integer counters of a usage object (providers add nested objects and strings)."""
    if not isinstance(usage, dict):
        return {}
    return {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
