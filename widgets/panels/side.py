"""The side column of the main screen: the file tree and the plan, each shown or hidden on its
own. What they show (the todo list, the files this session changed or that changed outside Vigil)
is folded by the session's view model (tui_app/view_model/files.py); a panel used alone folds the
events itself (`apply`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.containers import Vertical

from tui_app.runtime.events import TodoUpdated
from tui_app.view_model.files import ChangedFile, SessionFiles
from widgets.panels.file_tree import FileTree
from widgets.panels.plan_panel import PlanPanel
from widgets.text.line_render import load_css


class SidePanels(Vertical):
    DEFAULT_CSS = load_css("panels")

    def __init__(self, files: SessionFiles | None = None, *, cwd: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.files = files if files is not None else SessionFiles(cwd)
        if cwd and not self.files.cwd:
            self.files.cwd = cwd

    @property
    def cwd(self) -> str | None:
        return self.files.cwd

    @cwd.setter
    def cwd(self, value: str | None) -> None:
        self.files.cwd = value

    @property
    def changes(self) -> dict[str, ChangedFile]:
        return self.files.changes

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
        return self.files.relative(path)

    def apply(self, events: Sequence[Any]) -> None:
        """Fold events into the panels' own model and show them (panels used alone)."""
        self.show([self.files.apply(event) for event in events])

    def show(self, changed: Sequence[ChangedFile | TodoUpdated | None]) -> None:
        """What a batch changed (already folded): files marked in the tree, the last todo list."""
        todos = None
        for change in changed:
            if isinstance(change, ChangedFile):
                self.tree.mark(change.path, change.kind)
            elif isinstance(change, TodoUpdated):
                todos = change.todos
        if todos is not None:
            self.plan.set_entries(todos)

    def replace_files(self, files: SessionFiles) -> None:
        """Another fold of the session (a replay stepping back): the tree's marks and the plan as it says."""
        files.cwd = files.cwd or self.files.cwd
        self.files = files
        self.tree.clear_marks()
        self.show(list(files.changes.values()))
        self.plan.set_entries(files.todos or [])
