"""One table of tools: canonical names, aliases, visibility, and the model-facing menu.

Canonical names always win over aliases, and an alias that collides with a tool or another alias
is dropped, so a call is never routed to the wrong permission and handler. The menu is stable in
content and order (built-ins in registration order, then MCP tools), because it is part of every
request's prefix and a reordering throws away the provider's prompt cache.
"""

from __future__ import annotations

import copy
from typing import Any

from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.messages import ToolDefinition

_DROP_KEYS = {"$schema", "$id", "$defs", "definitions"}


def inline_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Resolve local `$ref`s, drop `$schema`/`$defs`/titles, and simplify `X | None` to `X`."""
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}

    def resolve(node: Any, seen: tuple[str, ...] = ()) -> Any:
        if isinstance(node, list):
            return [resolve(n, seen) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            name = ref.rsplit("/", 1)[-1]
            if name in defs and name not in seen:
                target = resolve(copy.deepcopy(defs[name]), (*seen, name))
                extra = {k: resolve(v, seen) for k, v in node.items() if k != "$ref"}
                return {**target, **extra}
            return {}  # a recursive reference cannot be inlined: accept anything there
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROP_KEYS or (key == "title" and isinstance(value, str)):
                continue
            out[key] = resolve(value, seen)
        return _simplify_optional(out)

    return resolve(schema)


def _simplify_optional(node: dict[str, Any]) -> dict[str, Any]:
    options = node.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = next(o for o in options if o != {"type": "null"})
        merged = {**{k: v for k, v in node.items() if k != "anyOf"}, **other}
        if merged.get("default", 0) is None:
            merged.pop("default")
        return merged
    return node


def model_schema(spec: ToolSpec) -> dict[str, Any]:
    if spec.input_model is not None:
        schema = spec.input_model.model_json_schema(by_alias=True)
    elif spec.input_schema is not None:
        schema = dict(spec.input_schema)
    else:
        schema = {"type": "object", "properties": {}}
    out = inline_schema(schema)
    out.setdefault("type", "object")
    return out


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}
        self._aliases: dict[str, str] = {}
        self._hidden: set[str] = set()
        self._schemas: dict[str, dict[str, Any]] = {}
        self.warnings: list[str] = []

    def register(self, spec: ToolSpec) -> None:
        if spec.name in self._tools:
            self.warnings.append(f"tool {spec.name} registered twice; the later one wins")
        self._aliases.pop(spec.name, None)  # a canonical name shadows an alias, never the reverse
        self._tools[spec.name] = spec
        self._schemas.pop(spec.name, None)
        for alias in spec.aliases:
            if alias in self._tools or alias in self._aliases:
                self.warnings.append(f"alias {alias} of {spec.name} collides and is ignored")
                continue
            self._aliases[alias] = spec.name

    def unregister(self, name: str) -> None:
        spec = self._tools.pop(name, None)
        self._schemas.pop(name, None)
        if spec is not None:
            for alias in spec.aliases:
                if self._aliases.get(alias) == name:
                    del self._aliases[alias]

    def hide(self, name: str) -> None:
        """Remove a tool from this session (a bare name in `deny`, `--disallowedTools`)."""
        self._hidden.add(name)

    def canonical_name(self, name: str) -> str | None:
        if name in self._tools:
            return name
        return self._aliases.get(name)

    def resolve(self, name: str) -> ToolSpec | None:
        canonical = self.canonical_name(name)
        return None if canonical is None else self._tools[canonical]

    def is_visible(self, name: str) -> bool:
        canonical = self.canonical_name(name)
        return canonical is not None and canonical not in self._hidden

    def specs(self) -> list[ToolSpec]:
        builtin = [s for s in self._tools.values() if s.source == "builtin"]
        return builtin + [s for s in self._tools.values() if s.source != "builtin"]

    def schema_of(self, spec: ToolSpec) -> dict[str, Any]:
        schema = self._schemas.get(spec.name)
        if schema is None:
            schema = self._schemas[spec.name] = model_schema(spec)
        return schema

    def model_tools(self) -> list[ToolDefinition]:
        return [
            ToolDefinition(name=s.name, description=s.description, input_schema=self.schema_of(s))
            for s in self.specs()
            if s.provider_visible and s.name not in self._hidden
        ]
