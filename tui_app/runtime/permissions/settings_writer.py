"""Changing the permission rules of a settings file ("always allow", a hook's updates) without
losing anything else in it.

The file is read, `permissions.<behavior>` gets the rules added (each once), removed, or replaced
by editing the file's text (everything else in it stays byte for byte), and the result is written
to a temporary file and renamed over the old one. A file that is not valid JSON is never
overwritten: the caller is told why, and the rule stays in effect for this session only.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from tui_app.runtime.files.atomic import write_atomically
from tui_app.runtime.permissions.json_patch import JsonPatchError, add_to_list, remove_from_list, set_value

_lock = threading.Lock()


class SettingsWriteError(Exception):
    pass


def append_rules(path: Path, behavior: str, rules: list[str]) -> list[str]:
    """Append `rules` to the file's `permissions.<behavior>` list; returns the ones that are there now."""
    kept = update_rules(path, behavior, add=rules)
    return [r for r in rules if r in kept]


def update_rules(path: Path, behavior: str, *, add: list[str] = (), remove: list[str] = (),  # type: ignore[assignment]
                 replace: bool = False) -> list[str]:
    """Change the file's `permissions.<behavior>` list: with `replace` it becomes `add`; otherwise
    `remove` leaves it and `add` joins it. Returns the list as written. Only the list's text
    changes: every other byte of the file stays as it was (json_patch)."""
    with _lock:
        text = read_settings_text(path)
        data = json.loads(text) if text.strip() else {}
        if not isinstance(data, dict):
            raise SettingsWriteError(f"{path} does not hold a JSON object; it was left as it is")
        permissions = data.get("permissions", {})
        if not isinstance(permissions, dict):
            raise SettingsWriteError(f"`permissions` in {path} is not an object; it was left as it is")
        existing = permissions.get(behavior, [])
        if not isinstance(existing, list):
            raise SettingsWriteError(f"`permissions.{behavior}` in {path} is not a list; it was left as it is")
        gone = list(existing) if replace else [r for r in existing if r in remove]
        key = ("permissions", behavior)
        try:
            for rule in dict.fromkeys(gone):
                text = remove_from_list(text, key, rule)
            for rule in add:
                text = add_to_list(text, key, rule)
        except JsonPatchError as exc:
            raise SettingsWriteError(f"{path} could not be changed ({exc}); it was left as it is") from None
        _write_atomically(path, text)
        kept = json.loads(text)["permissions"][behavior]
        return list(kept)


def set_setting(path: Path, key: tuple[str, ...], value: Any) -> None:
    """One value of a settings file (`("model",)`, `("permissions", "defaultMode")`), nothing else
    in the file changed."""
    with _lock:
        text = read_settings_text(path)
        try:
            text = set_value(text, key, value)
        except (JsonPatchError, ValueError) as exc:
            raise SettingsWriteError(f"{path} could not be changed ({exc}); it was left as it is") from None
        _write_atomically(path, text)


def read_settings_text(path: Path) -> str:
    """The file's text ("" when it does not exist yet); an error when it is not JSON."""
    if not path.exists():
        return ""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsWriteError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if text.strip():
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise SettingsWriteError(
                f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); it was left as it is") from None
    return text


def _write_atomically(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode: int | None = path.stat().st_mode
        except FileNotFoundError:
            mode = None
        write_atomically(str(path), text.encode("utf-8"), mode)
    except OSError as exc:
        raise SettingsWriteError(f"cannot write {path}: {exc.strerror or exc}") from None
