"""A PermissionRequest hook's `updatedPermissions`, applied (SPEC-compat §3).

`addRules` take effect at once and are saved to their destination; `setMode` switches the
session's mode (recorded as PermissionModeChanged, so the screen follows); `addDirectories` widens
the working directories acceptEdits covers, for this session. `replaceRules`, `removeRules` and
`removeDirectories` are not applied here: a warning says so rather than letting them pass silently.
"""

from __future__ import annotations

from typing import Any

from tui_app.runtime.events import PermissionModeChanged, Warning
from tui_app.runtime.permissions import PERMISSION_MODES

APPLIED = ("addRules", "setMode", "addDirectories")


def apply_update(policy: Any, emit: Any, update: dict[str, Any]) -> list[str]:
    """Apply one update; returns the rules it saved."""
    kind = update.get("type")
    if kind == "addRules":
        rules = [f"{r['toolName']}({r['ruleContent']})" if r.get("ruleContent") else r["toolName"]
                 for r in update.get("rules", []) if isinstance(r, dict) and r.get("toolName")]
        return policy.add_rules(update.get("behavior", "allow"), rules, update.get("destination", "session"))
    if kind == "setMode" and update.get("mode") in PERMISSION_MODES:
        previous = policy.mode
        if previous != update["mode"]:
            policy.mode = update["mode"]
            emit(PermissionModeChanged(mode=update["mode"], previous=previous))
        return []
    add_directories = getattr(policy, "add_directories", None)
    directories = update.get("directories")
    if kind == "addDirectories" and add_directories is not None and isinstance(directories, list):
        add_directories([d for d in directories if isinstance(d, str) and d])
        return []
    emit(Warning(code="permission_update_not_applied",
                 message=f"A PermissionRequest hook's updatedPermissions entry {kind!r} was not applied "
                         f"(Vigil applies {', '.join(APPLIED)}; setMode needs one of {', '.join(PERMISSION_MODES)})"))
    return []
