"""Changing the permission rules of a settings file ("always allow", a hook's updates) without
losing anything else in it.

The file is read, `permissions.<behavior>` gets the rules added (each once), removed, or replaced,
and the result is written to a temporary file and renamed over the old one. A file that is not valid JSON is
never overwritten: the caller is told why, and the rule stays in effect for this session only.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from tui_app.runtime.files.atomic import write_atomically

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
    `remove` leaves it and `add` joins it. Returns the list as written."""
    with _lock:
        data: dict = {}
        if path.exists():
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise SettingsWriteError(f"cannot read {path}: {exc.strerror or exc}") from None
            if text.strip():
                try:
                    data = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise SettingsWriteError(
                        f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); it was left as it is") from None
            if not isinstance(data, dict):
                raise SettingsWriteError(f"{path} does not hold a JSON object; it was left as it is")
        permissions = data.setdefault("permissions", {})
        if not isinstance(permissions, dict):
            raise SettingsWriteError(f"`permissions` in {path} is not an object; it was left as it is")
        existing = permissions.setdefault(behavior, [])
        if not isinstance(existing, list):
            raise SettingsWriteError(f"`permissions.{behavior}` in {path} is not a list; it was left as it is")
        kept = [] if replace else [r for r in existing if r not in remove]
        for rule in add:
            if rule not in kept:
                kept.append(rule)
        permissions[behavior] = kept
        _write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        return kept


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
