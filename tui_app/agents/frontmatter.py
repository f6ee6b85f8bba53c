"""The YAML frontmatter of Claude Code's Markdown files (custom commands, subagents): the subset
those files use — `key: value` with plain, quoted or `[a, b]` values, `- item` lists, `#`
comments, and `|`/`>` blocks — without a YAML dependency. Anything else is reported, not guessed."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")


@dataclass
class Parsed:
    fields: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    problems: list[str] = field(default_factory=list)


def _scalar(raw: str) -> Any:
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        inner = value[1:-1]
        return inner.replace("''", "'") if value[0] == "'" else inner.replace('\\"', '"').replace("\\n", "\n")
    if " #" in value:
        value = value.split(" #", 1)[0].rstrip()
    if value.startswith("[") and value.endswith("]"):
        return [_scalar(part) for part in _split_list(value[1:-1]) if part.strip()]
    lowered = value.lower()
    if lowered in ("true", "yes"):
        return True
    if lowered in ("false", "no"):
        return False
    if lowered in ("null", "~", ""):
        return None
    return value


def _split_list(text: str) -> list[str]:
    parts, current, quote = [], "", ""
    for ch in text:
        if quote:
            current += ch
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            current += ch
        elif ch == ",":
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return parts


def parse_frontmatter(text: str, source: str = "") -> Parsed:
    """Split `---` frontmatter from the body. A file without frontmatter is all body."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return Parsed(body=text)
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() in ("---", "..."))
    except StopIteration:
        return Parsed(body=text, problems=[f"{source}: the frontmatter is never closed with ---"])
    parsed = Parsed(body="\n".join(lines[end + 1:]).lstrip("\n"))
    key: str | None = None
    block: list[str] | None = None
    for number, line in enumerate(lines[1:end], 2):
        if block is not None and (line.startswith((" ", "\t")) or not line.strip()):
            block.append(line.strip())
            continue
        if block is not None and key is not None:
            parsed.fields[key] = "\n".join(block).strip()
            block = None
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") and key is not None:
            current = parsed.fields.get(key)
            items = current if isinstance(current, list) else []
            items.append(_scalar(stripped[2:]))
            parsed.fields[key] = items
            continue
        match = _KEY.match(stripped)
        if match is None:
            parsed.problems.append(f"{source}:{number}: not a `key: value` line: {stripped[:80]}")
            continue
        key, value = match.group(1), match.group(2)
        if value.strip() in ("|", ">", "|-", ">-"):
            block = []
            continue
        parsed.fields[key] = _scalar(value)
    if block is not None and key is not None:
        parsed.fields[key] = "\n".join(block).strip()
    return parsed


def as_list(value: Any) -> list[str]:
    """A tools-style field: `Read, Grep`, `[Read, Grep]` or a `- Read` list."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [part.strip() for part in _split_list(str(value)) if part.strip()]
