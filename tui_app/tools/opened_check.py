"""The file tools' second look, at what they really opened (see `runtime/files/opened.py`).

The session's policy offers it as the service "path_guard": given the descriptor's real path and
inode and the spellings the call's decision was made on, it says why the tool must not use what
it opened, or nothing. Without that service (a bare runtime, a test) nothing is refused here."""

from __future__ import annotations

from collections.abc import Callable

from tui_app.runtime.contract import ToolContext, ToolFailure
from tui_app.runtime.files.opened import Identity

Check = Callable[[str, Identity], None]


def opened_check(ctx: ToolContext) -> Check | None:
    """`check(kind, who)` for this call ("read" or "edit"); raises ToolFailure on a refusal."""
    guard = ctx.service("path_guard")
    if guard is None:
        return None
    tool, checked = ctx.tool_name, ctx.checked_paths

    def check(kind: str, who: Identity) -> None:
        reason = guard(tool, kind, who, checked)
        if reason:
            raise ToolFailure(f"Refused: {reason}. Nothing was {'written' if kind == 'edit' else 'read'} (what the "
                              "path leads to is checked once it is opened; a link or a folder on the way may have "
                              "changed since the call was decided).", code="permission_denied")

    return check
