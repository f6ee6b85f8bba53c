"""Permission rules in Claude Code's grammar: parsing, and matching one rule against one subject.

    Tool                    every use of the tool (`Bash` ≡ `Bash(*)`)
    Bash(npm test)          exactly that command
    Bash(git diff *)        `*` is any run of characters; ` *` at the end keeps a word boundary
                            (matches `git diff` and `git diff HEAD`, not `git difftool`)
    Bash(npm run test:*)    legacy spelling of ` *` (only at the very end)
    Read(./secrets/**)      gitignore-style path (see path_rules for the anchors)
    WebFetch(domain:x.com)  that host; `domain:*.x.com` any subdomain
    mcp__server             every tool of the server (also `mcp__server__*`); `mcp__server__tool`

`\\*` in a Bash specifier is a literal star: the rules Vigil saves for "always allow" escape the
command so that what is saved matches exactly the command that was shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Literal
from urllib.parse import urlsplit

from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.permissions.path_rules import pattern_error

Behavior = Literal["allow", "ask", "deny"]
BEHAVIORS: tuple[Behavior, ...] = ("deny", "ask", "allow")

#: rule names that govern a family of tools: `Edit(...)` every editing tool, `Read(...)` every reader
EDIT_FAMILY = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
READ_FAMILY = frozenset({"Read", "Glob", "Grep", "LS"})
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_*.-]+$")


class RuleError(ValueError):
    pass


@dataclass(frozen=True)
class Rule:
    behavior: Behavior
    tool: str
    #: None: the whole tool
    specifier: str | None
    #: the file (or "--allowedTools", "session" …) the rule came from
    source: str = "session"
    #: what `/path` is relative to
    base_dir: str = ""

    @property
    def text(self) -> str:
        return format_rule(self.tool, self.specifier)


def parse_rule(text: str) -> tuple[str, str | None]:
    """`Tool` or `Tool(specifier)` → (tool, specifier or None). Raises RuleError."""
    if not isinstance(text, str):
        raise RuleError(f"a rule must be a string, not {type(text).__name__}")
    text = text.strip()
    if not text:
        raise RuleError("empty rule")
    open_at = text.find("(")
    if open_at < 0:
        tool, specifier = text, None
    else:
        if not text.endswith(")"):
            raise RuleError(f"{text!r} has no closing parenthesis")
        tool, specifier = text[:open_at].strip(), text[open_at + 1:-1].strip()
    if not tool or not _TOOL_NAME.match(tool):
        raise RuleError(f"{text!r} does not start with a tool name")
    if specifier in (None, "", "*"):
        return tool, None
    if tool == "WebFetch" and not specifier.startswith("domain:"):
        raise RuleError(f"{text!r}: WebFetch rules take domain:HOST")
    if tool in EDIT_FAMILY | READ_FAMILY and (error := pattern_error(specifier)) is not None:
        raise RuleError(f"{text!r}: {error}")
    return tool, specifier


def make_rule(text: str, behavior: Behavior, source: str = "session", base_dir: str = "") -> Rule:
    tool, specifier = parse_rule(text)
    return Rule(behavior, tool, specifier, source, base_dir)


def format_rule(tool: str, specifier: str | None) -> str:
    return tool if specifier is None else f"{tool}({specifier})"


def tool_of(text: str) -> str | None:
    """The tool a (possibly malformed) rule names, when it can be told."""
    head = text.split("(", 1)[0].strip() if isinstance(text, str) else ""
    return head if head and _TOOL_NAME.match(head) else None


# ---- which tools a rule speaks about -------------------------------------------------------------

def names_tool(rule_tool: str, name: str, aliases: tuple[str, ...] = ()) -> bool:
    """Does a rule's tool part name this tool? Exact names, aliases, `*` patterns (`mcp__*`),
    and the MCP server form (`mcp__server` names every `mcp__server__…`)."""
    if rule_tool == name or rule_tool in aliases:
        return True
    if "*" in rule_tool and fnmatchcase(name, rule_tool):
        return True
    return rule_tool.startswith("mcp__") and rule_tool.count("__") == 1 and name.startswith(rule_tool + "__")


def governs(rule_tool: str, spec: ToolSpec) -> bool:
    """Names the tool, or is the family rule for its kind (`Edit` for Write, `Read` for Grep)."""
    if names_tool(rule_tool, spec.name, spec.aliases):
        return True
    kind = spec.permission.kind
    return (rule_tool == "Edit" and kind == "edit") or (rule_tool == "Read" and kind == "read")


def hides(rule_tool: str, name: str) -> bool:
    """A bare deny of `rule_tool` removes the tool `name` from the model's list."""
    if names_tool(rule_tool, name):
        return True
    return (rule_tool == "Edit" and name in EDIT_FAMILY) or (rule_tool == "Read" and name in READ_FAMILY)


# ---- specifiers ----------------------------------------------------------------------------------

@lru_cache(maxsize=4096)
def bash_pattern(specifier: str) -> re.Pattern[str]:
    """Compile a Bash specifier. No wildcard: the exact command. A single trailing ` *` or the
    legacy `:*` makes the rest optional after a space (word boundary)."""
    body, optional_tail = specifier, False
    if (body.endswith(":*") and not body.endswith("\\:*")) or (body.endswith(" *") and _stars(body) == 1):
        body, optional_tail = body[:-2], True
    regex = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] in "*\\":
            regex.append(re.escape(body[i + 1]))
            i += 2
            continue
        regex.append(".*" if ch == "*" else re.escape(ch))
        i += 1
    tail = "(?: .*)?" if optional_tail else ""
    return re.compile("".join(regex) + tail, re.DOTALL)


def _stars(text: str) -> int:
    return len(re.findall(r"(?<!\\)\*", text))


def bash_matches(specifier: str, command: str) -> bool:
    return bash_pattern(specifier).fullmatch(command) is not None


def escape_bash(command: str) -> str:
    """The specifier that matches exactly `command`."""
    return command.replace("\\", "\\\\").replace("*", "\\*")


def host_of(url: str) -> str | None:
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.rstrip(".").lower() if host else None


def domain_matches(specifier: str, host: str) -> bool:
    domain = specifier.removeprefix("domain:").strip().rstrip(".").lower()
    if domain.startswith("*."):
        return host.endswith(domain[1:])
    return host == domain
