"""The side column of the main screen: the file tree and the plan, each shown or hidden on its
own. It folds the session's events into what they show: the todo list TodoWrite last wrote, the
files this session changed (with each file's text before the session's first change to it, as
the first edit's diff carried it), the files changed outside Vigil.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textual.containers import Vertical

from tui_app.runtime.display import FileDiffDisplay
from tui_app.runtime.events import (
    FileChangedExternally,
    SessionStarted,
    TodoUpdated,
    ToolCallResult,
    ToolCallStarted,
)
from widgets.panels.file_tree import FileTree
from widgets.panels.plan_panel import PlanPanel
from widgets.text.line_render import load_css

#: tools whose successful result is a change of the file named by `file_path`
EDITING_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})


@dataclass
class ChangedFile:
    path: str
    #: "update", "create" (the session made it) or "outside" (changed by something else)
    kind: str
    #: the text before the session's first change (None: not known, e.g. too large to carry)
    original: str | None = None


class SidePanels(Vertical):
    DEFAULT_CSS = load_css("panels")

    def __init__(self, *, cwd: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cwd = cwd
        self.changes: dict[str, ChangedFile] = {}
        self._editing: dict[str, str] = {}

    def compose(self) -> Any:
        tree = FileTree(id="file-tree")
        tree.border_title = "files"
        yield tree
        plan = PlanPanel(id="plan-panel")
        plan.border_title = "plan"
        yield plan

    @property
    def tree(self) -> FileTree:
        return self.query_one(FileTree)

    @property
    def plan(self) -> PlanPanel:
        return self.query_one(PlanPanel)

    def relative(self, path: str) -> str:
        if self.cwd and os.path.isabs(path):
            rel = os.path.relpath(path, self.cwd)
            return path if rel.startswith("..") else rel.replace(os.sep, "/")
        return path.replace(os.sep, "/")

    def apply(self, events: Sequence[Any]) -> None:
        todos = None
        for event in events:
            if getattr(event, "agent_id", None) is not None:
                continue  # a subagent's own todo list and edits are its own card's business
            if isinstance(event, SessionStarted):
                self.cwd = self.cwd or event.cwd
            elif isinstance(event, TodoUpdated):
                todos = event.todos
            elif isinstance(event, ToolCallStarted) and event.tool in EDITING_TOOLS and event.call_id:
                path = event.input.get("file_path") or event.input.get("notebook_path")
                if isinstance(path, str):
                    self._editing[event.call_id] = path
            elif isinstance(event, ToolCallResult) and event.call_id in self._editing:
                self._changed(self._editing.pop(event.call_id), event.display)
            elif isinstance(event, FileChangedExternally):
                rel = self.relative(event.path)
                if rel not in self.changes:
                    self.changes[rel] = ChangedFile(rel, "outside")
                    self.tree.mark(rel, "outside")
        if todos is not None:
            self.plan.set_entries(todos)

    def _changed(self, path: str, display: Any) -> None:
        rel = self.relative(path)
        if rel in self.changes and self.changes[rel].kind != "outside":
            return  # the first change keeps the session's starting text
        kind, original = "update", None
        if isinstance(display, FileDiffDisplay):
            kind = "create" if display.operation == "create" else "update"
            original = "" if kind == "create" else display.old_text
        self.changes[rel] = ChangedFile(rel, kind, original)
        self.tree.mark(rel, kind)
