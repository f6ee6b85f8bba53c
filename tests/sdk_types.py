"""Checks a JSON request body against an SDK's request TypedDict, strictly.

pydantic's TypeAdapter over the SDK TypedDicts ignores unknown keys and validates `Iterable[...]`
fields lazily (nothing inside `messages` is checked unless someone iterates it), so a body with a
misspelt field or a wrong block inside a message would pass. This walks the type hints instead:
every required key present, no key the type does not declare, every nested value checked against
its declared type, unions satisfied by at least one member, literals matched exactly.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin, get_type_hints

from typing_extensions import ReadOnly, is_typeddict

_SEQUENCES = {list, tuple, collections.abc.Iterable, collections.abc.Sequence}
_WRAPPERS = {Required, NotRequired, ReadOnly}


def _unwrap(tp: Any) -> Any:
    while get_origin(tp) in _WRAPPERS or get_origin(tp) is typing.Annotated:
        tp = get_args(tp)[0]
    return tp


def problems(value: Any, tp: Any, path: str = "body") -> list[str]:
    tp = _unwrap(tp)
    if tp is Any or tp is object:
        return []
    if tp is type(None) or tp is None:
        return [] if value is None else [f"{path}: expected null, got {value!r:.60}"]
    if is_typeddict(tp):
        return _typed_dict(value, tp, path)
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        found = [problems(value, member, path) for member in get_args(tp)]
        if any(not p for p in found):
            return []

        def mismatch(found_here: list[str]) -> tuple[int, int]:
            # report the member the value was meant to be: same kind, same `type` tag
            wrong_kind = sum(p.startswith((f"{path}: expected", f"{path}.type: ", f"{path}.role: "))
                             for p in found_here)
            return wrong_kind, len(found_here)

        return min(found, key=mismatch)
    if origin is Literal or origin is typing.Literal:
        return [] if value in get_args(tp) else [f"{path}: {value!r:.60} is not one of {get_args(tp)}"]
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        value_type = get_args(tp)[1] if get_args(tp) else Any
        return [p for k, v in value.items() for p in problems(v, value_type, f"{path}.{k}")]
    if origin in _SEQUENCES or (origin is not None and getattr(origin, "__name__", "") == "SequenceNotStr"):
        if not isinstance(value, list):
            return [f"{path}: expected an array, got {type(value).__name__}"]
        item = get_args(tp)[0] if get_args(tp) else Any
        return [p for i, v in enumerate(value) for p in problems(v, item, f"{path}[{i}]")]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{path}: expected a boolean"]
    if tp is int:
        return [] if isinstance(value, int) and not isinstance(value, bool) else [f"{path}: expected an integer"]
    if tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected a number"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{path}: expected a string, got {type(value).__name__}"]
    if isinstance(tp, type):
        return [] if isinstance(value, tp) else [f"{path}: expected {tp.__name__}"]
    # a Python-only type (IO[bytes], a path): JSON can never be one
    return [f"{path}: expected {tp!r}, which JSON cannot express"]


def _typed_dict(value: Any, tp: Any, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: expected an object ({tp.__name__}), got {type(value).__name__}"]
    hints = get_type_hints(tp, include_extras=True)
    required = _required_keys(tp, hints)
    out = [f"{path}: missing required key {k!r} ({tp.__name__})" for k in sorted(required) if k not in value]
    out += [f"{path}: unknown key {k!r} for {tp.__name__}" for k in value if k not in hints]
    for key, item in value.items():
        if key in hints:
            out += problems(item, hints[key], f"{path}.{key}")
    return out


def _required_keys(tp: Any, hints: dict[str, Any]) -> set[str]:
    """`__required_keys__` is wrong for SDK types written with `from __future__ import annotations`
    (`Required[...]` is a string then), so work it out from the evaluated hints and each class's
    totality."""
    totality = _declared_totality(tp)
    required = set()
    for key, annotation in hints.items():
        wrappers = set()
        while get_origin(annotation) in _WRAPPERS:
            wrappers.add(get_origin(annotation))
            annotation = get_args(annotation)[0]
        if Required in wrappers or (NotRequired not in wrappers and totality.get(key, True)):
            required.add(key)
    return required


def _declared_totality(tp: Any) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for base in getattr(tp, "__orig_bases__", ()):
        if is_typeddict(base):
            out.update(_declared_totality(base))
    for key in getattr(tp, "__annotations__", {}):
        out.setdefault(key, tp.__total__)
    return out
