"""A file of the project, opened from the file tree: when this session changed it, its diff
against the session's start (d shows the file itself); otherwise the file, highlighted. Read on a
thread; a file too large or not text says so instead."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from tui_app.runtime.files.diffing import file_diff_display
from tui_app.tools.common import has_binary_extension
from widgets.diff.view import DiffView
from widgets.text.line_render import load_css
from widgets.text.text_view import TextView
from widgets.text.untrusted import one_line, plain

MAX_BYTES = 4 * 1024 * 1024
LANGUAGES = {".py": "python", ".md": "markdown", ".json": "json", ".js": "javascript", ".ts": "typescript",
             ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".sh": "bash", ".rs": "rust", ".go": "go",
             ".html": "html", ".css": "css", ".c": "c", ".h": "c", ".cpp": "cpp", ".java": "java", ".sql": "sql"}


def read_text(path: str) -> tuple[str | None, str]:
    """(text, "") or (None, why not)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return "", "deleted"
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or exc}"
    if len(data) > MAX_BYTES:
        return None, f"is larger than {MAX_BYTES // (1024 * 1024)} MB: open it with the Read tool or an editor"
    if b"\0" in data[:8192] or has_binary_extension(path):
        return None, "is not a text file"
    return data.decode("utf-8", errors="replace"), ""


class FileViewScreen(ModalScreen[None]):
    DEFAULT_CSS = load_css("file_view")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close"),
        Binding("d", "toggle_view", "Diff / file"),
    ]

    def __init__(self, path: str, shown: str, change: Any = None) -> None:
        super().__init__()
        self.path = path
        self.shown = shown
        self.change = change
        self.text: str | None = None
        self.problem = ""
        self.showing_diff = change is not None

    def compose(self) -> ComposeResult:
        with Vertical(id="file-view-box"):
            yield Static(id="file-view-title")
            yield DiffView(id="file-view-diff")
            yield TextView(id="file-view-text")
        yield Footer()

    def on_mount(self) -> None:
        self._title("reading…")
        self.run_worker(self._read, thread=True, exit_on_error=False)

    def _read(self) -> None:
        text, problem = read_text(self.path)
        self.app.call_from_thread(self._loaded, text, problem)

    def _loaded(self, text: str | None, problem: str) -> None:
        self.text, self.problem = text, problem
        self._show()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action != "toggle_view" or self.change is not None

    def action_toggle_view(self) -> None:
        self.showing_diff = not self.showing_diff
        self._show()

    def _show(self) -> None:
        diff, text = self.query_one(DiffView), self.query_one(TextView)
        change = self.change
        if self.showing_diff and change is not None:
            if change.original is None or self.text is None:
                why = self.problem or "the session's starting text was too large to keep"
                self._title(f"changed in this session; no diff: it {why}" if self.problem else
                            f"changed in this session; no diff: {why}")
                diff.display, text.display = False, True
                text.set_text(self.text or "")
                return
            operation = "create" if change.kind == "create" else "delete" if self.problem == "deleted" else "update"
            display = file_diff_display(self.shown, change.original, self.text, operation)  # type: ignore[arg-type]
            diff.load(display)
            diff.display, text.display = True, False
            self._title(f"{'created' if change.kind == 'create' else 'changed'} in this session: the diff against "
                        "the session's start · d shows the file")
            diff.focus()
            return
        diff.display, text.display = False, True
        if self.text is None:
            text.set_text("")
            self._title(f"not shown: it {self.problem}")
            return
        language = LANGUAGES.get("." + self.shown.rsplit(".", 1)[-1].lower()) if "." in self.shown else None
        text.set_text(self.text, language=language)
        note = "changed outside Vigil" if change is not None and change.kind == "outside" else \
            "d shows the diff against the session's start" if change is not None else "unchanged in this session"
        self._title(f"{self.text.count(chr(10)) + (0 if self.text.endswith(chr(10)) or not self.text else 1)} lines · "
                    + note)
        text.focus()

    def _title(self, note: str) -> None:
        self.query_one("#file-view-title", Static).update(Content.assemble(
            plain(one_line(self.shown, 200), "bold"), "  ", plain(note, "$foreground 60%"), "   ",
            Content.styled("Esc closes", "$foreground 50%")))
