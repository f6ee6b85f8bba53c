"""Changing one value of a JSON settings file by editing its text: every byte outside the change
stays as the user wrote it (indentation, key order, blank lines, escapes, a missing final newline).

A small scanner records where each value and member sits; an edit splices new text in, laid out
like its neighbours (the whitespace before the last element or member is reused). The result is
parsed again before it is returned, so a patch can never produce a file that is not JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = ("true", "false", "null")


class JsonPatchError(ValueError):
    pass


@dataclass
class Node:
    """A value's span [start, end) in the text, with its members (object) or elements (array)."""

    start: int
    end: int
    kind: str  # object, array, scalar
    #: object members: (key, key_start, value node)
    members: list[tuple[str, int, Node]] = field(default_factory=list)
    elements: list[Node] = field(default_factory=list)

    def member(self, key: str) -> Node | None:
        found = None
        for name, _, node in self.members:
            if name == key:
                found = node  # the last duplicate wins, as in json.loads
        return found

    def member_start(self, key: str) -> int | None:
        found = None
        for name, at, _ in self.members:
            if name == key:
                found = at
        return found


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text

    def ws(self, at: int) -> int:
        return _WS.match(self.text, at).end()  # type: ignore[union-attr]

    def value(self, at: int) -> Node:
        text = self.text
        at = self.ws(at)
        if at >= len(text):
            raise JsonPatchError("unexpected end of the file")
        ch = text[at]
        if ch == "{":
            return self._object(at)
        if ch == "[":
            return self._array(at)
        if ch == '"':
            _, end = scanstring(text, at + 1)
            return Node(at, end, "scalar")
        for literal in _LITERALS:
            if text.startswith(literal, at):
                return Node(at, at + len(literal), "scalar")
        number = _NUMBER.match(text, at)
        if number is None:
            raise JsonPatchError(f"unexpected {ch!r} at offset {at}")
        return Node(at, number.end(), "scalar")

    def _object(self, start: int) -> Node:
        node = Node(start, start, "object")
        at = self.ws(start + 1)
        if self.text.startswith("}", at):
            node.end = at + 1
            return node
        while True:
            at = self.ws(at)
            if not self.text.startswith('"', at):
                raise JsonPatchError(f"expected a key at offset {at}")
            key, after = scanstring(self.text, at + 1)
            colon = self.ws(after)
            if not self.text.startswith(":", colon):
                raise JsonPatchError(f"expected ':' at offset {colon}")
            value = self.value(colon + 1)
            node.members.append((key, at, value))
            at = self.ws(value.end)
            if self.text.startswith(",", at):
                at += 1
                continue
            if self.text.startswith("}", at):
                node.end = at + 1
                return node
            raise JsonPatchError(f"expected ',' or '}}' at offset {at}")

    def _array(self, start: int) -> Node:
        node = Node(start, start, "array")
        at = self.ws(start + 1)
        if self.text.startswith("]", at):
            node.end = at + 1
            return node
        while True:
            value = self.value(at)
            node.elements.append(value)
            at = self.ws(value.end)
            if self.text.startswith(",", at):
                at += 1
                continue
            if self.text.startswith("]", at):
                node.end = at + 1
                return node
            raise JsonPatchError(f"expected ',' or ']' at offset {at}")


def scan(text: str) -> Node:
    scanner = _Scanner(text)
    root = scanner.value(0)
    if scanner.ws(root.end) != len(text):
        raise JsonPatchError("extra text after the JSON value")
    return root


# ---- layout -----------------------------------------------------------------------------------

def _line_indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    match = re.match(r"[ \t]*", text[line_start:])
    return match.group(0) if match else ""


def _unit(text: str) -> str:
    """The file's indentation step (two spaces when nothing says otherwise)."""
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


def _dump(value: Any, indent: str | None, unit: str) -> str:
    """`value` laid out the way the file lays out its values, starting at indentation `indent`
    (None: on one line, for a container written on one line)."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)


def _separator(text: str, container: Node, last_at: int, count: int, unit: str) -> str:
    """The whitespace that goes before a new element or member: what precedes the last one."""
    if count:
        before = text[:last_at]
        cut = max(before.rfind(","), container.start if count == 1 else -1)
        sep = text[cut + 1:last_at]
        if count == 1 and "\n" not in sep:
            return " " if ", " in text else ""  # `["a"]` says nothing of the spacing after a comma
        return sep
    if "\n" not in text.strip() or container.end - container.start <= 2:
        return ""  # a file written on one line stays on one line, and so does a `[]` or `{}`
    return "\n" + _line_indent(text, container.start) + unit


def _insert(text: str, container: Node, piece_for: Any, unit: str) -> str:
    """Insert a new element (array) or member (object) after the last one."""
    items = container.elements if container.kind == "array" else [n for _, _, n in container.members]
    starts = [n.start for n in container.elements] if container.kind == "array" else \
        [at for _, at, _ in container.members]
    count = len(items)
    sep = _separator(text, container, starts[-1] if starts else 0, count, unit)
    # a container written on one line gets its new part on one line too
    piece = piece_for(sep.rsplit("\n", 1)[-1] if "\n" in sep else None)
    if count:
        at = items[-1].end
        return text[:at] + "," + sep + piece + text[at:]
    closing = container.end - 1
    if "\n" in sep:
        close_indent = "\n" + _line_indent(text, container.start)
        return text[:container.start + 1] + sep + piece + close_indent + text[closing:]
    return text[:container.start + 1] + piece + text[closing:]


def _remove(text: str, container: Node, index: int) -> str:
    """Remove element/member `index` with the comma that joined it to a neighbour."""
    if container.kind == "array":
        starts = [n.start for n in container.elements]
        ends = [n.end for n in container.elements]
    else:
        starts = [at for _, at, _ in container.members]
        ends = [n.end for _, _, n in container.members]
    count = len(starts)
    if count == 1:
        return text[:container.start + 1] + text[container.end - 1:]  # the list or object is left empty
    if index < count - 1:
        return text[:starts[index]] + text[starts[index + 1]:]
    return text[:ends[index - 1]] + text[ends[index]:]


def _checked(text: str) -> str:
    json.loads(text)
    return text


# ---- the edits ---------------------------------------------------------------------------------

def _root(text: str) -> tuple[str, Node]:
    if not text.strip():
        text = "{\n}\n"  # a new file is laid out on several lines, like Claude Code's
    root = scan(text)
    if root.kind != "object":
        raise JsonPatchError("the file does not hold a JSON object")
    return text, root


def _place(text: str, path: tuple[str, ...], value: Any, merge: Any) -> str:
    """Put `value` at `path`: `merge(text, node)` edits an existing member; a missing one is
    written whole (with the objects above it) into the deepest object that exists."""
    text, node = _root(text)
    unit = _unit(text)
    for depth, key in enumerate(path):
        child = node.member(key)
        if child is None:
            nested: Any = value
            for name in reversed(path[depth + 1:]):
                nested = {name: nested}
            return _checked(_insert(text, node, lambda indent, key=key, nested=nested:
                                    f"{json.dumps(key, ensure_ascii=False)}: " + _dump(nested, indent, unit), unit))
        if depth < len(path) - 1 and child.kind != "object":
            raise JsonPatchError(f"`{'.'.join(path[:depth + 1])}` is not an object")
        if depth == len(path) - 1:
            return _checked(merge(text, node, child, unit))
        node = child
    raise JsonPatchError("an empty path")


def add_to_list(text: str, path: tuple[str, ...], value: Any) -> str:
    """`value` appended to the list at `path` (object keys), created where missing; unchanged
    when it is there already."""

    def append(text: str, parent: Node, target: Node, unit: str) -> str:
        if target.kind != "array":
            raise JsonPatchError(f"`{'.'.join(path)}` is not a list")
        if any(json.loads(text[e.start:e.end]) == value for e in target.elements):
            return text
        return _insert(text, target, lambda indent: _dump(value, indent, unit), unit)

    return _place(text, path, [value], append)


def remove_from_list(text: str, path: tuple[str, ...], value: Any) -> str:
    """Every `value` taken out of the list at `path`; unchanged when it is not there."""
    text, root = _root(text)
    node: Node | None = root
    for key in path:
        node = node.member(key) if node is not None and node.kind == "object" else None
    if node is None:
        return text
    if node.kind != "array":
        raise JsonPatchError(f"`{'.'.join(path)}` is not a list")
    while True:
        index = next((i for i, e in enumerate(node.elements) if json.loads(text[e.start:e.end]) == value), None)
        if index is None:
            return _checked(text)
        text = _remove(text, node, index)
        text, root = _root(text)
        node = root
        for key in path:
            node = node.member(key)  # type: ignore[union-attr]


def set_value(text: str, path: tuple[str, ...], value: Any) -> str:
    """The member at `path` set to `value` (replaced in place, or added to its object)."""

    def replace(text: str, parent: Node, target: Node, unit: str) -> str:
        start = parent.member_start(path[-1])
        indent = _line_indent(text, start if start is not None else target.start)
        return text[:target.start] + _dump(value, indent, unit) + text[target.end:]

    return _place(text, path, value, replace)
