"""What the prompt box does with `@`: a fuzzy picker over the project's files (gitignore-aware,
listed once by the bundled rg on a thread, then matched per keystroke), and the chosen path put
in place of what was typed. On Enter the turn loop attaches the files (agents/mentions.py).

The completers of the prompt box are chained: this one takes the keys while its menu is open,
the slash-command completer otherwise (the two never show at once: `/name` and `@path` are
different tokens).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from tui_app.app.prompt.path_matcher import PathIndex
from tui_app.tools.project_files import list_project_files, with_directories
from widgets.mention_menu import MentionMenu
from widgets.prompt_input import PromptInput

#: `@` at the start or after a space, then what is typed so far, up to the cursor
_TYPED = re.compile(r'(?:^|(?<=\s))@("?)([^\s"]*)$')
#: a listing older than this is refreshed (in the background) when a new `@` is typed
STALE_S = 15.0
#: below this many paths a query is matched on the UI thread (it takes well under a millisecond)
INLINE_PATHS = 20_000


class ChainedCompleter:
    """Several completers of one prompt box: the first that takes a key has it."""

    def __init__(self, *completers: Any) -> None:
        self.completers = completers

    def update(self) -> None:
        for completer in self.completers:
            completer.update()

    def handle_key(self, key: str) -> bool:
        return any(completer.handle_key(key) for completer in self.completers)


class MentionCompleter:
    def __init__(self, menu: MentionMenu, prompt: PromptInput, cwd: Callable[[], str]) -> None:
        self.menu = menu
        self.prompt = prompt
        self.cwd = cwd
        self.index: PathIndex | None = None
        self._listed_at = 0.0
        self._listing = False
        self._root: str | None = None
        #: the query whose matches are on screen or on their way
        self._query: str | None = None

    # ---- what is typed ----------------------------------------------------------------------

    def typed(self) -> tuple[int, str] | None:
        """(column of the `@`, the query) when the cursor ends an `@` token on its line."""
        row, column = self.prompt.cursor_location
        line = self.prompt.document.get_line(row)[:column]
        match = _TYPED.search(line)
        if match is None:
            return None
        return match.start(), match.group(2)

    def update(self) -> None:
        typed = self.typed()
        if typed is None:
            self._query = None
            self.menu.hide()
            return
        query = typed[1]
        fresh = self._query is None
        self._query = query
        root = self.cwd()
        if self.index is None or root != self._root or (fresh and time.monotonic() - self._listed_at > STALE_S):
            self._list(root)
        if self.index is None:
            self.menu.show_message("Listing the project's files…")
            return
        self._match(query)

    # ---- listing and matching ---------------------------------------------------------------

    def _list(self, root: str) -> None:
        if self._listing:
            return
        self._listing = True
        self.prompt.run_worker(lambda: self._list_on_thread(root), thread=True, group="mention-list",
                               exclusive=True, exit_on_error=False)

    def _list_on_thread(self, root: str) -> None:
        try:
            listed = list_project_files(root)
            index = PathIndex(with_directories(listed.paths))
        except Exception as exc:  # an unreadable directory: the picker says so, the prompt still works
            self.prompt.app.call_from_thread(self._listing_failed, str(exc))
            return
        self.prompt.app.call_from_thread(self._listed, root, index)

    def _listed(self, root: str, index: PathIndex) -> None:
        self._listing = False
        self.index, self._root, self._listed_at = index, root, time.monotonic()
        if self._query is not None:
            self._match(self._query)

    def _listing_failed(self, reason: str) -> None:
        self._listing = False
        if self._query is not None:
            self.menu.show_message(f"The project's files could not be listed: {reason}")

    def _match(self, query: str) -> None:
        index = self.index
        assert index is not None
        if len(index) <= INLINE_PATHS:
            self._show(query, index.search(query))
            return
        self.prompt.run_worker(lambda: self._match_on_thread(index, query), thread=True, group="mention-match",
                               exclusive=True, exit_on_error=False)

    def _match_on_thread(self, index: PathIndex, query: str) -> None:
        matches = index.search(query)
        self.prompt.app.call_from_thread(self._show, query, matches)

    def _show(self, query: str, matches: Sequence[Any]) -> None:
        if query != self._query:
            return  # typed on meanwhile: newer matches are on their way
        self.menu.show_paths(matches, len(self.index) if self.index is not None else None)

    # ---- keys -------------------------------------------------------------------------------

    def handle_key(self, key: str) -> bool:
        if not self.menu.shown:
            return False
        if key in ("up", "down"):
            self.menu.move(-1 if key == "up" else 1)
            return True
        if key == "escape":
            self.menu.hide()
            self._query = None
            return True
        if key in ("tab", "enter"):
            if self.menu.chosen is None:
                return key == "tab"  # nothing to insert: Enter sends as usual
            self.complete()
            return True
        return False

    def complete(self) -> None:
        chosen, typed = self.menu.chosen, self.typed()
        if chosen is None or typed is None:
            return
        column, _ = typed
        row, end = self.prompt.cursor_location
        text = f'@"{chosen}"' if any(ch.isspace() for ch in chosen) else f"@{chosen}"
        # a directory stays open for the next part of its path; a file is done
        self.prompt.replace(text if chosen.endswith("/") else text + " ", (row, column), (row, end))
        self._query = None
        self.menu.hide()
        if chosen.endswith("/"):
            self.update()


def mention_picker(menu: MentionMenu, prompt: PromptInput, cwd: Callable[[], str | None]) -> MentionCompleter:
    """The `@` picker of a prompt box, over the files under `cwd()` (the process's cwd without one)."""
    return MentionCompleter(menu, prompt, lambda: cwd() or os.getcwd())
