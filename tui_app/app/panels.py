"""The side panels of the main screen, wired: a key or the palette shows or hides the file tree
and the plan; the tree is filled from the project's files (listed on a thread, gitignore-aware);
a file chosen in it opens with its diff against the session's start when the session changed it.
"""

from __future__ import annotations

import os
from typing import Any, Protocol

from tui_app.tools.project_files import list_project_files
from widgets.panels.side import SidePanels

PANELS = ("files", "plan")


class PanelsHost(Protocol):
    """What the panels use of the screen they are on (the main screen)."""

    cwd: str | None

    @property
    def app(self) -> Any: ...

    @property
    def prompt(self) -> Any: ...

    @property
    def focused(self) -> Any: ...

    def query_one(self, selector: Any) -> Any: ...

    def set_class(self, add: bool, *names: str) -> Any: ...

    def action_focus(self, what: str) -> None: ...


def panels_of(screen: PanelsHost) -> SidePanels:
    return screen.query_one(SidePanels)


def toggle_panel(screen: PanelsHost, name: str) -> None:
    if name not in PANELS:
        return
    panels = panels_of(screen)
    shown = not panels.has_class(f"-{name}")
    panels.set_class(shown, f"-{name}")
    screen.set_class(any(panels.has_class(f"-{n}") for n in PANELS), "-panels")
    if name == "files" and shown:
        if not panels.tree.listed:
            reload_files(screen)
        panels.tree.focus()
    elif not shown and (screen.focused is None or panels in screen.focused.ancestors_with_self):
        screen.action_focus("prompt" if screen.prompt.display else "table")


def reload_files(screen: PanelsHost) -> None:
    panels = panels_of(screen)
    root = panels.cwd or screen.cwd or os.getcwd()
    panels.cwd = root

    def work() -> None:
        try:
            listed = list_project_files(root)
        except OSError as exc:  # a recorded session's directory that is gone, an unreadable one
            screen.app.call_from_thread(listed_files, [], f"files · not listed: {exc.strerror or exc}")
            return
        screen.app.call_from_thread(listed_files, listed.paths, "files" + (" · partial" if listed.partial else ""))

    def listed_files(paths: list[str], title: str) -> None:
        panels.tree.set_files(paths)
        panels.tree.border_title = title

    panels.tree.border_title = "files · listing…"
    panels.run_worker(work, thread=True, group="file-tree", exclusive=True, exit_on_error=False)


def open_file(screen: PanelsHost, rel: str) -> None:
    from tui_app.app.screens.file_view import FileViewScreen

    panels = panels_of(screen)
    root = panels.cwd or screen.cwd or os.getcwd()
    change = panels.changes.get(rel)
    screen.app.push_screen(FileViewScreen(os.path.join(root, rel), rel, change))
