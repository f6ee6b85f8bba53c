"""The one writer of a session's permission state: its mode, its rules, its working directories.

`SessionWrites` is the only code that changes them, and every change it makes is an event
(PermissionModeChanged, RulesChanged, WorkingDirectoriesChanged), so every client sees it. The
session's controller owns one; the approval stage (always allow, a PermissionRequest hook's
`updatedPermissions`), ExitPlanMode and the external agents' drivers write through it too.

A PermissionRequest hook's `updatedPermissions` (Claude Code's format): `addRules`, `replaceRules`
and `removeRules` take effect at once and change their destination's file (`session`: this
session only); `setMode` switches the session's mode; `addDirectories` / `removeDirectories`
change the working directories acceptEdits covers, for this session. Anything else is reported in
a warning rather than passed over silently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from tui_app.runtime.events import PermissionModeChanged, RulesChanged, Warning, WorkingDirectoriesChanged
from tui_app.runtime.permissions.decision import PERMISSION_MODES

APPLIED = ("addRules", "replaceRules", "removeRules", "setMode", "addDirectories", "removeDirectories")


class SessionWrites:
    """Changes to `policy`, each told through `emit`. Runs on the session's loop."""

    def __init__(self, policy: Any, emit: Callable[[Any], Any]) -> None:
        self.policy = policy
        self.emit = emit

    @property
    def mode(self) -> str:
        return self.policy.mode

    def set_mode(self, mode: str, client: str | None = None) -> bool:
        """True when the mode changed (ValueError for a mode that does not exist)."""
        if mode not in PERMISSION_MODES:
            raise ValueError(f"no permission mode {mode!r} (there are {', '.join(PERMISSION_MODES)})")
        previous = self.policy.mode
        if previous == mode:
            return False
        self.policy.mode = mode
        self.emit(PermissionModeChanged(mode=mode, previous=previous, client=client))
        return True

    def add_rules(self, behavior: str, rules: list[str], destination: str = "localSettings",
                  client: str | None = None) -> tuple[list[str], list[str]]:
        """(the rules now in force, the problems: rules that do not parse, a file not written)."""
        problems: list[str] = []
        saved = self._collecting(problems, lambda: self.policy.add_rules(behavior, rules, destination))
        if saved:
            self.emit(RulesChanged(behavior=behavior, added=list(saved), destination=destination,
                                   path=self._path(destination), client=client))
        return saved, problems

    def remove_rules(self, behavior: str, rules: list[str], destination: str = "session",
                     replace_with: list[str] | None = None, client: str | None = None) -> tuple[list[str], list[str]]:
        """(the rules the destination holds for this behavior afterwards, the problems)."""
        remove = getattr(self.policy, "remove_rules", None)
        if remove is None:
            return [], ["this session's rules cannot be changed"]
        problems: list[str] = []
        before = {r.text for r in self._rules_of(behavior, destination)}
        after = self._collecting(problems, lambda: remove(behavior, rules, destination, replace_with=replace_with))
        added = [r for r in after if r not in before]
        removed = [r for r in before if r not in after]
        if added or removed:
            self.emit(RulesChanged(behavior=behavior, added=added, removed=removed, destination=destination,
                                   path=self._path(destination), client=client))
        return after, problems

    def add_directories(self, directories: Iterable[str], client: str | None = None) -> list[str]:
        named = [d for d in directories if isinstance(d, str) and d]
        change = getattr(self.policy, "add_directories", None)
        if change is None or not named:
            return []
        added = change(named)
        self._tell_directories(client, added=named)
        return added

    def remove_directories(self, directories: Iterable[str], client: str | None = None) -> None:
        named = [d for d in directories if isinstance(d, str) and d]
        change = getattr(self.policy, "remove_directories", None)
        if change is None or not named:
            return
        change(named)
        self._tell_directories(client, removed=named)

    def apply_update(self, update: dict[str, Any]) -> list[str]:
        """A PermissionRequest hook's `updatedPermissions` entry; returns the rules it saved."""
        kind = update.get("type")
        rules = [f"{r['toolName']}({r['ruleContent']})" if r.get("ruleContent") else r["toolName"]
                 for r in update.get("rules") or [] if isinstance(r, dict) and r.get("toolName")]
        behavior, destination = update.get("behavior", "allow"), update.get("destination", "session")
        if kind == "addRules":
            return self.add_rules(behavior, rules, destination)[0]
        if kind in ("removeRules", "replaceRules") and hasattr(self.policy, "remove_rules"):
            replacing = kind == "replaceRules"
            self.remove_rules(behavior, rules, destination, replace_with=rules if replacing else None)
            return rules if replacing else []
        if kind == "setMode" and update.get("mode") in PERMISSION_MODES:
            self.set_mode(update["mode"])
            return []
        directories = update.get("directories")
        if kind in ("addDirectories", "removeDirectories") and isinstance(directories, list) \
                and hasattr(self.policy, "add_directories"):
            if kind == "addDirectories":
                self.add_directories(directories)
            else:
                self.remove_directories(directories)
            return []
        self.emit(Warning(code="permission_update_not_applied", message=(
            f"A PermissionRequest hook's updatedPermissions entry {kind!r} was not applied "
            f"(Vigil applies {', '.join(APPLIED)}; setMode needs one of {', '.join(PERMISSION_MODES)})")))
        return []

    # ---- helpers ------------------------------------------------------------------------------

    def _collecting(self, problems: list[str], change: Callable[[], list[str]]) -> list[str]:
        """Run a policy change with its warnings gathered for the caller (and still told as events).
        Safe without a lock: the change is synchronous and runs on the session's loop."""
        previous = getattr(self.policy, "on_warning", None)

        def collect(code: str, message: str) -> None:
            problems.append(message)
            if previous is not None:
                previous(code, message)

        if previous is not None or hasattr(self.policy, "on_warning"):
            self.policy.on_warning = collect
        try:
            return change()
        finally:
            if hasattr(self.policy, "on_warning"):
                self.policy.on_warning = previous

    def _rules_of(self, behavior: str, destination: str) -> list[Any]:
        rules = getattr(self.policy, "rules", None)
        if rules is None:
            return []
        source = str(getattr(self.policy, "destinations", {}).get(destination, destination))
        return [r for r in rules(behavior) if r.source == source]

    def _path(self, destination: str) -> str | None:
        path = getattr(self.policy, "destinations", {}).get(destination)
        return str(path) if path is not None else None

    def _tell_directories(self, client: str | None, **change: list[str]) -> None:
        current = getattr(getattr(self.policy, "dirs", None), "dirs", None)
        if current is not None:
            self.emit(WorkingDirectoriesChanged(directories=list(current), client=client, **change))


def apply_update(policy: Any, emit: Any, update: dict[str, Any]) -> list[str]:
    """One `updatedPermissions` entry applied to a policy that has no session around it."""
    return SessionWrites(policy, emit).apply_update(update)
