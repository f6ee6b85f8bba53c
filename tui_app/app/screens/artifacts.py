"""The artifact browser: a session's persisted outputs, and the viewer for the one selected.

Open it on a session (its `artifacts/` directory and `index.jsonl`) or straight on one file. The
list shows tool, call, size, lines and time; moving through it opens each artifact at once (the
viewer indexes in the background). `ArtifactBrowserApp` runs the screen on its own for
`vigil artifacts [SESSION]`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from tui_app.runtime.results.artifacts import ArtifactInfo, ArtifactStore
from tui_app.runtime.results.sanitize import neutralize
from widgets.viewer.artifact_lines import ArtifactLines
from widgets.viewer.artifact_viewer import ArtifactViewer, human_size

STYLES = Path(__file__).resolve().parents[3] / "styles"


def artifact_path(info: ArtifactInfo, directory: Path) -> Path:
    """The file of an index entry: its recorded path when that exists, else where the store puts it
    (a session directory copied from another machine keeps working)."""
    if info.path and Path(info.path).is_file():
        return Path(info.path)
    return directory / f"{info.artifact_id}.txt"


def _cell(text: str, limit: int = 40) -> Text:
    clean = " ".join(neutralize(text).split()) or "—"  # a file the index missed has no tool or call
    return Text(clean if len(clean) <= limit else clean[: limit - 1] + "…", no_wrap=True)


def _created(created: float) -> Text:
    return Text(time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(created)), no_wrap=True)


class ArtifactBrowserScreen(Screen[None]):
    CSS_PATH = str(STYLES / "artifacts.tcss")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "close", "Close"),
        Binding("r", "reload", "Reload", show=False),
        # from the list too: a user who types Enter then / at once must not lose the /
        Binding("slash", "viewer_prompt('search')", "Search", show=False),
        Binding("question_mark", "viewer_prompt('search_back')", "Search back", show=False),
        Binding("colon", "viewer_prompt('goto')", "Go to line", show=False),
    ]

    def __init__(self, session_id: str | None = None, directory: str | os.PathLike[str] | None = None,
                 path: str | os.PathLike[str] | None = None, follow: bool = False) -> None:
        super().__init__()
        self.session_id = session_id
        self.directory = Path(directory) if directory is not None else None
        self.single_path = Path(path) if path is not None else None
        self.follow = follow
        self.artifacts: list[ArtifactInfo] = []
        self._shown: Path | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="artifacts-title")
        with Vertical(id="artifacts-body"):
            yield DataTable(id="artifact-list", cursor_type="row")
            yield ArtifactViewer(id="artifact-viewer")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#artifact-list", DataTable)
        for label, key in (("tool", "tool"), ("call", "call"), ("size", "size"), ("lines", "lines"),
                           ("created", "created")):
            table.add_column(label, key=key)
        if self.single_path is not None and self.directory is None:
            table.display = False
            self._set_title(Text(str(self.single_path)))
            self._show(self.single_path)
            self.query_one(ArtifactLines).focus()
            return
        self.action_reload()
        if self.single_path is not None:
            self._show(self.single_path)
            self.query_one(ArtifactLines).focus()

    def action_reload(self) -> None:
        table = self.query_one("#artifact-list", DataTable)
        table.clear()
        self.artifacts = []
        if self.directory is not None:
            store = ArtifactStore(self.session_id or self.directory.parent.name, self.directory)
            self.artifacts = sorted(store.list(), key=lambda info: info.created)
        for info in self.artifacts:
            lines = Text("—" if info.lines is None else f"{info.lines:,}", justify="right")
            table.add_row(_cell(info.tool, 16), _cell(info.call_id, 24), Text(human_size(info.bytes), justify="right"),
                          lines, _created(info.created), key=info.artifact_id)
        title = Text("Artifacts", style="bold")
        if self.session_id:
            title.append("  session ")
            title.append(neutralize(self.session_id))
        count = len(self.artifacts)
        title.append(f"  {count} artifact{'s' if count != 1 else ''}" if count else "  no artifacts in this session")
        self._set_title(title)
        if self.artifacts:
            target = self._shown or self.single_path
            row = 0 if target is None else self._row_of(target)
            table.move_cursor(row=row)
            if target is None:
                self._show(artifact_path(self.artifacts[row], self._dir()))
                table.focus()

    def _row_of(self, path: Path) -> int:
        for row, info in enumerate(self.artifacts):
            if artifact_path(info, self._dir()).resolve() == path.resolve():
                return row
        return 0

    def _dir(self) -> Path:
        assert self.directory is not None
        return self.directory

    def _set_title(self, text: Text) -> None:
        self.query_one("#artifacts-title", Static).update(text)

    def _show(self, path: Path) -> None:
        if path == self._shown:
            return
        self._shown = path
        self.query_one(ArtifactViewer).open(path, follow=self.follow)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._open_row(event.row_key.value)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self._open_row(event.row_key.value)
        self.query_one(ArtifactLines).focus()

    def _open_row(self, artifact_id: str | None) -> None:
        info = next((info for info in self.artifacts if info.artifact_id == artifact_id), None)
        if info is not None:
            self._show(artifact_path(info, self._dir()))

    def action_viewer_prompt(self, kind: str) -> None:
        self.query_one(ArtifactViewer).action_prompt(kind)

    def action_close(self) -> None:
        if isinstance(self.app, ArtifactBrowserApp):
            self.app.exit()
        else:
            self.dismiss(None)


class ArtifactBrowserApp(App[None]):
    """The browser on its own, for `vigil artifacts`."""

    TITLE = "Vigil artifacts"

    def __init__(self, session_id: str | None = None, directory: str | os.PathLike[str] | None = None,
                 path: str | os.PathLike[str] | None = None, follow: bool = False) -> None:
        super().__init__()
        self._screen_args = (session_id, directory, path, follow)

    def on_mount(self) -> None:
        self.push_screen(ArtifactBrowserScreen(*self._screen_args))
