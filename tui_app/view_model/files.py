"""What the side panels show, folded from session events: the todo list TodoWrite last wrote, the
files this session changed (with each file's text before the session's first change to it, as the
first edit's diff carried it), and the files changed outside Vigil.

A subagent's own todo list and edits are its card's business, not the session's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from tui_app.runtime.display import FileDiffDisplay
from tui_app.runtime.events import FileChangedExternally, SessionStarted, TodoUpdated, ToolCallResult, ToolCallStarted

#: tools whose successful result is a change of the file named by `file_path`
EDITING_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})


@dataclass
class ChangedFile:
    path: str
    #: "update", "create" (the session made it) or "outside" (changed by something else)
    kind: str
    #: the text before the session's first change (None: not known, e.g. too large to carry)
    original: str | None = None


class SessionFiles:
    def __init__(self, cwd: str | None = None) -> None:
        #: paths are kept relative to it (the session's cwd once it says)
        self.cwd = cwd
        self.changes: dict[str, ChangedFile] = {}
        #: the todo list as TodoWrite last wrote it (None: never written)
        self.todos: list[Any] | None = None
        self._editing: dict[str, str] = {}

    def relative(self, path: str) -> str:
        if self.cwd and os.path.isabs(path):
            rel = os.path.relpath(path, self.cwd)
            return path if rel.startswith("..") else rel.replace(os.sep, "/")
        return path.replace(os.sep, "/")

    def apply(self, event: Any) -> ChangedFile | TodoUpdated | None:
        """Fold one event in; return the file it changed, or the todo list it wrote."""
        if getattr(event, "agent_id", None) is not None:
            return None
        if isinstance(event, SessionStarted):
            self.cwd = self.cwd or event.cwd
        elif isinstance(event, TodoUpdated):
            self.todos = event.todos
            return event
        elif isinstance(event, ToolCallStarted) and event.tool in EDITING_TOOLS and event.call_id:
            path = event.input.get("file_path") or event.input.get("notebook_path")
            if isinstance(path, str):
                self._editing[event.call_id] = path
        elif isinstance(event, ToolCallResult) and event.call_id in self._editing:
            return self._changed(self._editing.pop(event.call_id), event.display)
        elif isinstance(event, FileChangedExternally):
            rel = self.relative(event.path)
            if rel not in self.changes:
                change = self.changes[rel] = ChangedFile(rel, "outside")
                return change
        return None

    def _changed(self, path: str, display: Any) -> ChangedFile | None:
        rel = self.relative(path)
        if rel in self.changes and self.changes[rel].kind != "outside":
            return None  # the first change keeps the session's starting text
        kind, original = "update", None
        if isinstance(display, FileDiffDisplay):
            kind = "create" if display.operation == "create" else "update"
            original = "" if kind == "create" else display.old_text
        change = self.changes[rel] = ChangedFile(rel, kind, original)
        return change
