"""Settings: Claude Code-compatible files, merged, plus the command-line flags (docs/architecture.md §9.1).

Read lowest priority first; for scalars the highest wins, arrays (permission rules, additional
directories, hook lists) are merged:

    1 ~/.claude/settings.json            (skipped with --no-claude-settings)
    2 ~/.config/vigil/settings.json      (the platform's user config dir)
    3 <project>/.claude/settings.json    (skipped with --no-claude-settings)
    4 <project>/.vigil/settings.json
    5 <project>/.claude/settings.local.json (skipped with --no-claude-settings)
    6 <project>/.vigil/settings.local.json  ("always allow" writes here)
    7 --settings FILE, then --allowedTools / --disallowedTools / --permission-mode

Every file read is listed; a file that cannot be read is reported with its line and reason and
the session starts with the others. If the broken part could have denied something (a deny or
ask list, a PreToolUse or PermissionRequest hook, or an unparseable file that mentions them), a
guard makes every call that part could have covered ask instead of silently running.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_app.runtime.events import SettingsLoaded, Warning
from tui_app.runtime.hooks.config import HookConfig, parse_hooks
from tui_app.runtime.permissions.decision import PERMISSION_MODES, PermissionMode
from tui_app.runtime.permissions.policy import DenyGuard
from tui_app.runtime.permissions.rules import BEHAVIORS, Rule, RuleError, make_rule, tool_of

#: words whose presence in an unreadable file means it may have restricted something
_RESTRICTING_WORDS = ("deny", "ask", "PreToolUse", "PermissionRequest", "defaultMode")


class SettingsError(Exception):
    """A settings problem the session cannot start with (a --settings file that does not exist)."""


@dataclass(frozen=True)
class SettingsLocation:
    path: Path
    #: what `/path` in its rules is relative to
    base_dir: str


@dataclass
class LoadedSettings:
    project_dir: str
    files: list[str] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    default_mode: PermissionMode = "default"
    additional_dirs: list[str] = field(default_factory=list)
    hooks: HookConfig = field(default_factory=HookConfig)
    guards: list[DenyGuard] = field(default_factory=list)
    destinations: dict[str, Path] = field(default_factory=dict)
    approval_timeout_s: float | None = None
    #: each file's `sandbox` object, lowest priority first: (source, base dir, value)
    sandbox_layers: list[tuple[str, str, Any]] = field(default_factory=list)
    #: the other top-level keys (model, provider, baseUrl, apiKeyEnv, env …): the highest file wins
    values: dict[str, Any] = field(default_factory=dict)
    #: each source's own top-level keys, lowest priority first (some keys count only from some files)
    source_values: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def user_config_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir("vigil", appauthor=False))


def settings_locations(project: Path, home: Path, config_dir: Path, no_claude: bool) -> list[SettingsLocation]:
    entries = [
        (home / ".claude" / "settings.json", home, True),
        (config_dir / "settings.json", home, False),
        (project / ".claude" / "settings.json", project, True),
        (project / ".vigil" / "settings.json", project, False),
        (project / ".claude" / "settings.local.json", project, True),
        (project / ".vigil" / "settings.local.json", project, False),
    ]
    return [SettingsLocation(path, str(base)) for path, base, claude in entries if not (claude and no_claude)]


def load_settings(
    *,
    cwd: str,
    settings_file: str | None = None,
    no_claude_settings: bool = False,
    allowed_tools: list[str] | tuple[str, ...] = (),
    disallowed_tools: list[str] | tuple[str, ...] = (),
    permission_mode: PermissionMode | None = None,
    home: Path | None = None,
    config_dir: Path | None = None,
) -> LoadedSettings:
    project = Path(cwd)
    home = home or Path(os.path.expanduser("~"))
    config_dir = config_dir or user_config_dir()
    loaded = LoadedSettings(project_dir=str(project), destinations={
        "localSettings": project / ".vigil" / "settings.local.json",
        "projectSettings": project / ".vigil" / "settings.json",
        "userSettings": config_dir / "settings.json",
    })
    for location in settings_locations(project, home, config_dir, no_claude_settings):
        if location.path.exists():
            _load_file(loaded, location.path, location.base_dir)
    if settings_file is not None:
        _load_flag_settings(loaded, settings_file, str(project))
    for behavior, texts, source in (("allow", allowed_tools, "--allowedTools"),
                                    ("deny", disallowed_tools, "--disallowedTools")):
        for text in texts:
            try:
                loaded.rules.append(make_rule(text, behavior, source, str(project)))  # type: ignore[arg-type]
            except RuleError as exc:
                loaded.errors.append({"file": source, "line": None, "reason": str(exc)})
                if behavior == "deny":
                    loaded.guards.append(DenyGuard(source, str(exc), _tools(text)))
    if permission_mode is not None:
        loaded.default_mode = permission_mode
    return loaded


def _load_flag_settings(loaded: LoadedSettings, value: str, project: str) -> None:
    if value.lstrip().startswith("{"):  # Claude Code also takes the JSON itself
        _apply_text(loaded, "--settings", value, project)
        return
    path = Path(value).expanduser()
    if not path.is_file():
        raise SettingsError(f"settings file {value} does not exist")
    _load_file(loaded, path, project)


def _load_file(loaded: LoadedSettings, path: Path, base_dir: str) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = f"cannot be read: {getattr(exc, 'strerror', None) or exc}"
        loaded.errors.append({"file": str(path), "line": None, "reason": reason})
        loaded.guards.append(DenyGuard(str(path), reason))
        return
    _apply_text(loaded, str(path), text, base_dir)


def _apply_text(loaded: LoadedSettings, source: str, text: str, base_dir: str) -> None:
    if not text.strip():
        loaded.files.append(source)
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        reason = f"not valid JSON: {exc.msg} (column {exc.colno})"
        loaded.errors.append({"file": source, "line": exc.lineno, "reason": reason})
        if any(word in text for word in _RESTRICTING_WORDS):
            loaded.guards.append(DenyGuard(source, f"line {exc.lineno}: {reason}"))
        return
    if not isinstance(data, dict):
        loaded.errors.append({"file": source, "line": 1, "reason": "the file must hold a JSON object"})
        return
    loaded.files.append(source)
    loaded.values.update({k: v for k, v in data.items() if k not in ("permissions", "hooks")})
    loaded.source_values.append((source, data))
    if "sandbox" in data:
        loaded.sandbox_layers.append((source, base_dir, data["sandbox"]))
    _apply_permissions(loaded, source, text, data.get("permissions"), base_dir)
    if "hooks" in data:
        groups, issues = parse_hooks(data["hooks"], source)
        loaded.hooks.extend(groups)
        for issue in issues:
            line = _line_of(text, issue.needle)
            loaded.errors.append({"file": source, "line": line, "reason": issue.reason,
                                  **({"severity": "warning"} if issue.warning_only else {})})
            if issue.restricting:
                loaded.guards.append(DenyGuard(source, f"line {line}: {issue.reason}"))
    timeout = data.get("approvalTimeoutSeconds")
    if timeout is not None:
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            loaded.approval_timeout_s = float(timeout)
        else:
            _error(loaded, source, text, '"approvalTimeoutSeconds"', "`approvalTimeoutSeconds` must be a positive "
                                                                     "number")


def _apply_permissions(loaded: LoadedSettings, source: str, text: str, perms: Any, base_dir: str) -> None:
    if perms is None:
        return
    if not isinstance(perms, dict):
        _error(loaded, source, text, '"permissions"', "`permissions` must be an object")
        loaded.guards.append(DenyGuard(source, "`permissions` is not an object"))
        return
    for behavior in BEHAVIORS:
        entries = perms.get(behavior)
        if entries is None:
            continue
        restricting = behavior != "allow"
        if not isinstance(entries, list):
            line = _error(loaded, source, text, f'"{behavior}"', f"`permissions.{behavior}` must be a list of rules")
            if restricting:
                loaded.guards.append(DenyGuard(source, f"line {line}: `permissions.{behavior}` is not a list"))
            continue
        for entry in entries:
            try:
                loaded.rules.append(make_rule(entry, behavior, source, base_dir))
            except RuleError as exc:
                needle = json.dumps(entry, ensure_ascii=False) if isinstance(entry, str) else f'"{behavior}"'
                line = _error(loaded, source, text, needle, f"{behavior} rule skipped: {exc}")
                if restricting:
                    loaded.guards.append(DenyGuard(source, f"line {line}: {exc}", _tools(entry)))
    mode = perms.get("defaultMode")
    if mode is not None:
        if mode in PERMISSION_MODES:
            loaded.default_mode = mode
        else:
            _error(loaded, source, text, '"defaultMode"', f"`defaultMode` {mode!r} is not one of "
                                                          f"{', '.join(PERMISSION_MODES)}")
    dirs = perms.get("additionalDirectories")
    if dirs is not None:
        if isinstance(dirs, list) and all(isinstance(d, str) for d in dirs):
            for directory in dirs:
                path = os.path.normpath(os.path.join(base_dir, os.path.expanduser(directory)))
                if path not in loaded.additional_dirs:
                    loaded.additional_dirs.append(path)
        else:
            _error(loaded, source, text, '"additionalDirectories"', "`additionalDirectories` must be a list of paths")


def _tools(entry: Any) -> tuple[str, ...] | None:
    tool = tool_of(entry) if isinstance(entry, str) else None
    return (tool,) if tool else None


def _error(loaded: LoadedSettings, source: str, text: str, needle: str, reason: str) -> int:
    line = _line_of(text, needle)
    loaded.errors.append({"file": source, "line": line, "reason": reason})
    return line


def _line_of(text: str, needle: str) -> int:
    at = text.find(needle) if needle else -1
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def settings_events(loaded: LoadedSettings) -> list[Any]:
    """What the session announces at start: the files read, and every problem, loudly."""
    events: list[Any] = [SettingsLoaded(files=loaded.files, errors=loaded.errors)]
    for error in loaded.errors:
        where = error["file"] + (f", line {error['line']}" if error.get("line") else "")
        events.append(Warning(code="settings_invalid", message=f"Settings {where}: {error['reason']}", detail=error))
    for guard in loaded.guards:
        events.append(Warning(code="settings_deny_unknown", message=guard.announcement,
                              detail={"file": guard.source, "tools": list(guard.tools) if guard.tools else None}))
    return events
