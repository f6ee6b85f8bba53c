"""Input normalisation and validation against the very schema the model was shown.

Built-ins validate with their pydantic model, tools from outside (MCP) with `jsonschema`. Both
produce the same issue list, projected to the model in Claude Code's words:

    <tool_use_error>InputValidationError: Read failed due to the following issue:
    The required parameter `file_path` is missing</tool_use_error>
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from tui_app.runtime.contract import ToolSpec

_JSON_TYPE_OF_ERROR = {
    "string_type": "string",
    "int_type": "integer",
    "int_parsing": "integer",
    "int_from_float": "integer",
    "float_type": "number",
    "float_parsing": "number",
    "bool_type": "boolean",
    "bool_parsing": "boolean",
    "list_type": "array",
    "tuple_type": "array",
    "set_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "none_required": "null",
}


@dataclass(frozen=True)
class Issue:
    kind: str  # missing | unexpected | wrong_type | other
    path: tuple[str | int, ...]
    message: str
    expected: str = ""
    received: str = ""
    code: str = ""

    @property
    def param(self) -> str:
        out = ""
        for part in self.path:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
        return out


class InputNotObject(ValueError):
    pass


def json_type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def normalise_input(raw: Any) -> Any:
    """A top-level JSON string is parsed first (some adapters and hooks send the input as text)."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    if raw is None:
        return {}
    return raw


def _value_at(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def pydantic_issues(error: ValidationError, data: Any) -> list[Issue]:
    issues = []
    for err in error.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p in _UNION_TAGS)))
        etype = err["type"]
        if etype == "missing":
            issues.append(Issue("missing", loc, err["msg"], code="invalid_type"))
        elif etype == "extra_forbidden":
            issues.append(Issue("unexpected", loc, err["msg"], code="unrecognized_keys"))
        elif etype in _JSON_TYPE_OF_ERROR:
            received = json_type_name(_value_at(data, loc))
            issues.append(
                Issue("wrong_type", loc, err["msg"], expected=_JSON_TYPE_OF_ERROR[etype],
                      received=received, code="invalid_type")
            )
        else:
            code = {"literal_error": "invalid_value", "enum": "invalid_value",
                    "string_too_long": "too_big", "too_long": "too_big",
                    "string_too_short": "too_small", "too_short": "too_small",
                    "greater_than": "too_small", "greater_than_equal": "too_small",
                    "less_than": "too_big", "less_than_equal": "too_big",
                    "string_pattern_mismatch": "invalid_format"}.get(etype, etype)
            issues.append(Issue("other", loc, err["msg"], code=code))
    return issues


_UNION_TAGS = {"str", "int", "float", "bool", "list", "dict", "none"}

#: inputs of the built-in tools that name a file (or a pattern of files)
PATH_FIELDS = frozenset({"file_path", "path", "notebook_path", "artifact", "pattern", "glob"})


def path_issues(data: dict[str, Any]) -> list[Issue]:
    """A NUL byte cannot be in a file name (the OS refuses it, Python raises): an input error the
    model can read and fix, never a crash."""
    return [Issue("invalid_path", (key,), f"The parameter `{key}` contains a NUL byte, which no path can hold",
                  code="invalid_format")
            for key in sorted(PATH_FIELDS & data.keys()) if isinstance(data[key], str) and "\x00" in data[key]]


def jsonschema_issues(schema: dict[str, Any], data: Any) -> list[Issue]:
    import jsonschema  # imported here: only tools from outside need it

    validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator = validator_cls(schema)
    issues: list[Issue] = []
    for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        path = tuple(err.absolute_path)
        if err.validator == "required":
            missing = [name for name in err.validator_value if name not in (err.instance or {})]
            issues.extend(Issue("missing", (*path, name), err.message, code="invalid_type") for name in missing)
        elif err.validator == "additionalProperties" and isinstance(err.instance, dict):
            allowed = set(err.schema.get("properties", {}))
            patterns = err.schema.get("patternProperties", {})
            for key in err.instance:
                if key not in allowed and not patterns:
                    issues.append(Issue("unexpected", (*path, key), err.message, code="unrecognized_keys"))
        elif err.validator == "type":
            expected = err.validator_value
            expected = " | ".join(expected) if isinstance(expected, list) else str(expected)
            issues.append(Issue("wrong_type", path, err.message, expected=expected,
                                received=json_type_name(err.instance), code="invalid_type"))
        else:
            code = {"enum": "invalid_value", "const": "invalid_value", "maxLength": "too_big",
                    "minLength": "too_small", "maximum": "too_big", "minimum": "too_small",
                    "pattern": "invalid_format", "format": "invalid_format"}.get(str(err.validator),
                                                                                str(err.validator))
            issues.append(Issue("other", path, err.message, code=code))
    return issues


def validate_input(spec: ToolSpec, raw: Any) -> tuple[dict[str, Any] | None, list[Issue]]:
    """Returns (canonical input, []) or (None, issues)."""
    data, _, issues = check_input(spec, raw)
    return data, issues


def check_input(spec: ToolSpec, raw: Any) -> tuple[dict[str, Any] | None, Any, list[Issue]]:
    """(canonical input, the handler's parsed view of it or None, issues): the parsed model is
    kept so the handler does not validate the same input a second time."""
    data = normalise_input(raw)
    if not isinstance(data, dict):
        return None, None, [Issue("wrong_type", (), "input must be an object", expected="object",
                                  received=json_type_name(data), code="invalid_type")]
    if spec.input_model is not None:
        try:
            parsed = spec.input_model.model_validate(data)
        except ValidationError as exc:
            return None, None, pydantic_issues(exc, data)
        impossible = path_issues(data)
        if impossible:
            return None, None, impossible
        # the canonical input is what the model sent, nothing invented: defaults are the
        # handler's business; hooks and the approval hash see the call as proposed
        return dict(data), parsed, []
    if spec.input_schema is not None:
        issues = jsonschema_issues(dict(spec.input_schema), data)
        return (None, None, issues) if issues else (data, None, [])
    return data, None, []


def issues_text(tool_name: str, issues: list[Issue]) -> str:
    """The sentence(s) after `InputValidationError: `. Missing / unexpected / wrong-type issues
    get one line each and hide the rest; otherwise the issues go out as a JSON list."""
    lines = [i.message for i in issues if i.kind in ("invalid_json", "invalid_path")]
    lines += [f"The required parameter `{i.param}` is missing" for i in issues if i.kind == "missing"]
    lines += [f"An unexpected parameter `{i.param}` was provided" for i in issues if i.kind == "unexpected"]
    lines += [
        f"The parameter `{i.param}` type is expected as `{i.expected}` but provided as `{i.received}`"
        for i in issues
        if i.kind == "wrong_type"
    ]
    if lines:
        noun = "issue" if len(lines) == 1 else "issues"
        return f"{tool_name} failed due to the following {noun}:\n" + "\n".join(lines)
    listed = [{"code": i.code, "path": list(i.path), "message": i.message} for i in issues]
    return json.dumps(listed, indent=2, ensure_ascii=False)


def validation_model_text(tool_name: str, issues: list[Issue]) -> str:
    return f"<tool_use_error>InputValidationError: {issues_text(tool_name, issues)}</tool_use_error>"
