"""What the settings screen shows: the settings in force, each with the file it comes from, and
the files a change can be saved to (Claude Code's locations and Vigil's own).

Rules come from the session's facts (what decides now, including rules added this session), and
so do hooks, MCP servers, the model and the mode; where the model, the default mode and the
sandbox are set comes from each file as it is on disk (the last file that sets a value wins, as
when settings are loaded).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_app.config import settings_locations, user_config_dir


@dataclass(frozen=True)
class SettingsFile:
    path: Path
    label: str
    exists: bool
    #: the file's JSON (None: missing, empty or not JSON)
    data: dict[str, Any] | None = None
    problem: str = ""


@dataclass(frozen=True)
class Entry:
    section: str
    #: what it is ("allow  Bash(npm test)", "PreToolUse Bash → ./check.sh", "model")
    text: str
    source: str
    #: for a rule: (behavior, rule text) — such entries can be removed
    rule: tuple[str, str] | None = None


@dataclass
class SettingsView:
    files: list[SettingsFile] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    mode: str = "default"
    notifications: bool = True
    model: str = ""
    provider: str = ""


LABELS = {
    (".claude", "settings.json", "home"): "user (Claude Code)",
    (".claude", "settings.json", "project"): "project, shared (Claude Code)",
    (".claude", "settings.local.json", "project"): "project, local (Claude Code)",
    (".vigil", "settings.json", "project"): "project, shared (Vigil)",
    (".vigil", "settings.local.json", "project"): "project, local (Vigil; always allow saves here)",
}


def _label(path: Path, project: Path, home: Path) -> str:
    where = "project" if path.is_relative_to(project) else "home"
    found = LABELS.get((path.parent.name, path.name, where))
    return found or ("user (Vigil)" if where == "home" else str(path))


def read_file(path: Path, label: str) -> SettingsFile:
    if not path.exists():
        return SettingsFile(path, label, False)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return SettingsFile(path, label, True, None, f"cannot be read: {getattr(exc, 'strerror', None) or exc}")
    if not text.strip():
        return SettingsFile(path, label, True, {})
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return SettingsFile(path, label, True, None, f"not valid JSON (line {exc.lineno}: {exc.msg})")
    if not isinstance(data, dict):
        return SettingsFile(path, label, True, None, "does not hold a JSON object")
    return SettingsFile(path, label, True, data)


def settings_files(project: str, *, no_claude_settings: bool = False, settings_file: str | None = None,
                   home: Path | None = None, config_dir: Path | None = None) -> list[SettingsFile]:
    """Every settings file of the session, lowest priority first (the --settings file last)."""
    home = home or Path(os.path.expanduser("~"))
    root = Path(project)
    locations = settings_locations(root, home, config_dir or user_config_dir(), no_claude_settings)
    files = [read_file(loc.path, _label(loc.path, root, home)) for loc in locations]
    if settings_file and not settings_file.lstrip().startswith("{"):
        path = Path(settings_file).expanduser()
        files.append(read_file(path, "--settings"))
    return files


def build_view(facts: Any, files: list[SettingsFile], notifications: bool = True) -> SettingsView:
    """The screen's rows from the session's facts (`SessionFacts`) and its settings files."""
    model = facts.model or "its default model"
    view = SettingsView(files=files, mode=facts.permission_mode, model=facts.model, provider=facts.provider,
                        notifications=notifications)
    add = view.entries.append
    model_source = next((str(f.path) for f in reversed(files) if f.data and "model" in f.data), "")
    if facts.capabilities.own_tools:  # an agent of its own: Vigil does not choose its model
        model_source = f"{facts.agent_label} (its own settings and flags)"
    add(Entry("model", f"{facts.provider} · {model}",
              model_source or "the command line, the environment or the default"))
    mode_source = next((str(f.path) for f in reversed(files)
                        if f.data and isinstance(f.data.get("permissions"), dict)
                        and "defaultMode" in f.data["permissions"]), "")
    add(Entry("mode", view.mode, mode_source or "the default, the command line or a change in this session"))
    for rule in facts.rules:
        add(Entry("rules", f"{rule.behavior:<5}  {rule.text}", rule.source, (rule.behavior, rule.text)))
    for hook in facts.hooks:
        matcher = f" [{hook.matcher}]" if hook.matcher not in (None, "", "*") else ""
        add(Entry("hooks", f"{hook.event}{matcher} → {hook.label}", hook.source))
    for f in files:
        if f.data and "sandbox" in f.data:
            add(Entry("sandbox", json.dumps(f.data["sandbox"], ensure_ascii=False, sort_keys=True), str(f.path)))
    for server in facts.mcp_servers:
        add(Entry("mcp", f"{server.name} ({server.transport}) {server.target}", server.source))
    notify_source = next((str(f.path) for f in reversed(files) if f.data and (
        "desktopNotifications" in f.data or "preferredNotifChannel" in f.data)), "")
    add(Entry("notifications", f"desktop notifications {'on' if view.notifications else 'off'}",
              notify_source or "the default"))
    for f in files:
        if f.problem:
            add(Entry("problems", f"{f.path}: {f.problem}", str(f.path)))
    return view
