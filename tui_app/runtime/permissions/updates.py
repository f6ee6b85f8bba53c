"""A PermissionRequest hook's `updatedPermissions`, applied (SPEC-compat §3).

`addRules`, `replaceRules` and `removeRules` take effect at once and change their destination's
file (`session`: this session only); `setMode` switches the session's mode (recorded as
PermissionModeChanged, so the screen follows); `addDirectories` / `removeDirectories` change the
working directories acceptEdits covers, for this session. Anything else is reported in a warning
rather than passed over silently.
"""

from __future__ import annotations

from typing import Any

from tui_app.runtime.events import PermissionModeChanged, Warning, WorkingDirectoriesChanged
from tui_app.runtime.permissions.decision import PERMISSION_MODES

APPLIED = ("addRules", "replaceRules", "removeRules", "setMode", "addDirectories", "removeDirectories")


def apply_update(policy: Any, emit: Any, update: dict[str, Any]) -> list[str]:
    """Apply one update; returns the rules it saved."""
    kind = update.get("type")
    rules = [f"{r['toolName']}({r['ruleContent']})" if r.get("ruleContent") else r["toolName"]
             for r in update.get("rules") or [] if isinstance(r, dict) and r.get("toolName")]
    behavior, destination = update.get("behavior", "allow"), update.get("destination", "session")
    if kind == "addRules":
        return policy.add_rules(behavior, rules, destination)
    if kind in ("removeRules", "replaceRules") and hasattr(policy, "remove_rules"):
        replacing = kind == "replaceRules"
        policy.remove_rules(behavior, rules, destination, replace_with=rules if replacing else None)
        return rules if replacing else []
    if kind == "setMode" and update.get("mode") in PERMISSION_MODES:
        previous = policy.mode
        if previous != update["mode"]:
            policy.mode = update["mode"]
            emit(PermissionModeChanged(mode=update["mode"], previous=previous))
        return []
    directories = update.get("directories")
    change = {"addDirectories": getattr(policy, "add_directories", None),
              "removeDirectories": getattr(policy, "remove_directories", None)}.get(kind or "")
    if change is not None and isinstance(directories, list):
        named = [d for d in directories if isinstance(d, str) and d]
        change(named)
        current = getattr(getattr(policy, "dirs", None), "dirs", None)
        if current is not None:
            emit(WorkingDirectoriesChanged(directories=list(current), **{
                "added" if kind == "addDirectories" else "removed": named}))
        return []
    emit(Warning(code="permission_update_not_applied",
                 message=f"A PermissionRequest hook's updatedPermissions entry {kind!r} was not applied "
                         f"(Vigil applies {', '.join(APPLIED)}; setMode needs one of {', '.join(PERMISSION_MODES)})"))
    return []
