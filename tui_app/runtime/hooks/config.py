"""The `hooks` section of a settings file (Claude Code's schema), parsed and checked.

    {"hooks": {"PreToolUse": [{"matcher": "Bash|Edit",
                               "hooks": [{"type": "command", "command": "…", "timeout": 30}]}]}}

Events Vigil does not emit are accepted and ignored; handler types other than `command` are
skipped with a visible warning; unknown keys are ignored. A matcher of only letters, digits,
`_ - space , |` is a list of exact names; anything else is an unanchored regular expression.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

HOOK_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit",
               "Stop", "Notification", "SessionStart", "SessionEnd")
#: events whose hooks can deny: a broken config for them may hide a deny
RESTRICTING_EVENTS = frozenset({"PreToolUse", "PermissionRequest"})
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_TIMEOUTS_S = {"UserPromptSubmit": 30.0}
_NAME_LIST = re.compile(r"^[A-Za-z0-9_\- ,|]+$")


@dataclass(frozen=True)
class HookHandler:
    command: str
    timeout_s: float
    #: given: the command is exec'd with these arguments, no shell
    args: tuple[str, ...] | None = None
    source: str = ""

    @property
    def key(self) -> tuple[str, tuple[str, ...] | None]:
        """Identical commands run once."""
        return (self.command, self.args)

    @property
    def label(self) -> str:
        return self.command if self.args is None else " ".join((self.command, *self.args))


@dataclass(frozen=True)
class HookIssue:
    source: str
    reason: str
    #: a piece of the file's text near the problem (to find its line)
    needle: str = ""
    #: the problem may hide a deny (guard the calls it could have denied)
    restricting: bool = False
    warning_only: bool = False


def compile_matcher(matcher: str | None) -> Callable[[str], bool]:
    if matcher is None or matcher.strip() in ("", "*"):
        return lambda _value: True
    if _NAME_LIST.match(matcher):
        names = {n.strip() for n in re.split(r"[|,]", matcher) if n.strip()}
        return names.__contains__
    pattern = re.compile(matcher)
    return lambda value: pattern.search(value) is not None


@dataclass
class MatcherGroup:
    event: str
    matcher: str | None
    handlers: tuple[HookHandler, ...]
    test: Callable[[str], bool] = field(repr=False, default=lambda _v: True)

    def matches(self, value: str | None, aliases: tuple[str, ...] = ()) -> bool:
        if value is None:
            return True
        return any(self.test(v) for v in (value, *aliases))


@dataclass
class HookConfig:
    groups: dict[str, list[MatcherGroup]] = field(default_factory=dict)
    #: settings files whose hooks do not run (a project not trusted yet)
    held: set[str] = field(default_factory=set)

    def extend(self, groups: list[MatcherGroup]) -> None:
        for group in groups:
            self.groups.setdefault(group.event, []).append(group)

    @property
    def empty(self) -> bool:
        return not any(self.groups.values())

    def handlers(self, event: str, value: str | None = None, aliases: tuple[str, ...] = ()) -> list[HookHandler]:
        """The handlers for one event occurrence, in configuration order, each command once."""
        seen: set[tuple[str, tuple[str, ...] | None]] = set()
        out: list[HookHandler] = []
        for group in self.groups.get(event, []):
            if not group.matches(value, aliases):
                continue
            for handler in group.handlers:
                if handler.source in self.held:
                    continue
                if handler.key not in seen:
                    seen.add(handler.key)
                    out.append(handler)
        return out


def parse_hooks(obj: Any, source: str) -> tuple[list[MatcherGroup], list[HookIssue]]:
    groups: list[MatcherGroup] = []
    issues: list[HookIssue] = []
    if not isinstance(obj, dict):
        issues.append(HookIssue(source, "`hooks` must be an object of event names", '"hooks"', restricting=True))
        return groups, issues
    for event, entries in obj.items():
        if event not in HOOK_EVENTS:
            continue  # other events are accepted and ignored
        restricting = event in RESTRICTING_EVENTS
        if not isinstance(entries, list):
            issues.append(HookIssue(source, f"`hooks.{event}` must be a list", f'"{event}"', restricting))
            continue
        for entry in entries:
            group, entry_issues = _parse_group(event, entry, source, restricting)
            issues.extend(entry_issues)
            if group is not None:
                groups.append(group)
    return groups, issues


def _parse_group(event: str, entry: Any, source: str, restricting: bool
                 ) -> tuple[MatcherGroup | None, list[HookIssue]]:
    issues: list[HookIssue] = []
    if not isinstance(entry, dict) or not isinstance(entry.get("hooks"), list):
        issues.append(HookIssue(source, f"each `hooks.{event}` entry needs a `hooks` list", f'"{event}"',
                                restricting))
        return None, issues
    matcher = entry.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        issues.append(HookIssue(source, f"`matcher` of a {event} hook must be a string", '"matcher"', restricting))
        return None, issues
    try:
        test = compile_matcher(matcher)
    except re.error as exc:
        issues.append(HookIssue(source, f"matcher {matcher!r} of a {event} hook is not a valid regular "
                                        f"expression ({exc})", f'"{matcher}"', restricting))
        return None, issues
    handlers: list[HookHandler] = []
    for raw in entry["hooks"]:
        handler = _parse_handler(event, raw, source, issues, restricting)
        if handler is not None:
            handlers.append(handler)
    return MatcherGroup(event, matcher, tuple(handlers), test), issues


def _parse_handler(event: str, raw: Any, source: str, issues: list[HookIssue], restricting: bool
                   ) -> HookHandler | None:
    if not isinstance(raw, dict):
        issues.append(HookIssue(source, f"a {event} hook must be an object", f'"{event}"', restricting))
        return None
    kind = raw.get("type", "command")
    if kind != "command":
        issues.append(HookIssue(source, f"{event} hook of type {kind!r} skipped: Vigil runs only `command` hooks",
                                f'"{kind}"', warning_only=True))
        return None
    command, args = raw.get("command"), raw.get("args")
    if not isinstance(command, str) or not command.strip():
        issues.append(HookIssue(source, f"a {event} command hook has no `command`", '"command"', restricting))
        return None
    if args is not None and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        issues.append(HookIssue(source, f"`args` of {command!r} must be a list of strings", '"args"', restricting))
        return None
    timeout = raw.get("timeout", DEFAULT_TIMEOUTS_S.get(event, DEFAULT_TIMEOUT_S))
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        issues.append(HookIssue(source, f"`timeout` of {command!r} must be a positive number of seconds; "
                                        f"using the default", '"timeout"', warning_only=True))
        timeout = DEFAULT_TIMEOUTS_S.get(event, DEFAULT_TIMEOUT_S)
    return HookHandler(command, float(timeout), tuple(args) if args is not None else None, source)
