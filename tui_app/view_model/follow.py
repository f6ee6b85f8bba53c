"""Which call the detail pane follows after a batch of events (the same rule live and in a replay)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui_app.runtime.events import PermissionRequested, ToolCallError, ToolCallStarted
from tui_app.view_model.tool_rows import ToolRows

#: errors the detail pane does not jump to (the rows say enough)
QUIET_ERRORS = frozenset({"cancelled", "aborted_before_dispatch", "turn_stopped"})


def followed_call(events: Sequence[Any], shown: str | None, rows: ToolRows) -> str | None:
    """The call the detail pane moves to after a batch, None to stay (`rows`: after the batch).

    A call waiting for the user says more than one that just started, which says more than one
    that failed; a call still waiting for the user keeps the pane until another one asks."""
    asked = started = failed = None
    for event in events:
        if isinstance(event, PermissionRequested):
            asked = event.call_id
        elif isinstance(event, ToolCallStarted):
            started = event.call_id
        elif isinstance(event, ToolCallError) and event.code not in QUIET_ERRORS:
            failed = event.call_id
    current = rows.get(shown) if shown else None
    if asked is None and current is not None and current.state == "awaiting approval":
        return None
    return asked or started or failed
