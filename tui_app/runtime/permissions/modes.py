"""The permission modes, by name. Nothing else here: the CLI parses `--permission-mode` with this
before it imports anything heavier."""

from __future__ import annotations

from typing import Literal

PermissionMode = Literal["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]
PERMISSION_MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
