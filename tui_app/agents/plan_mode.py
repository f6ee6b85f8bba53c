"""The session service "permission_mode": what ExitPlanMode uses to leave plan mode. The switch
is recorded like the user's own (PermissionModeChanged), so the header and the log follow it."""

from __future__ import annotations

from typing import Any

from tui_app.runtime.events import PermissionModeChanged


class ModeSwitch:
    def __init__(self, session: Any) -> None:
        self._session = session

    @property
    def mode(self) -> str:
        return self._session.policy.mode

    def set(self, mode: str) -> None:
        previous = self._session.policy.mode
        if previous != mode:
            self._session.policy.mode = mode
            self._session.emit(PermissionModeChanged(mode=mode, previous=previous))
