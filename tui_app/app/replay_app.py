"""`vigil replay ID` in the TUI, and `vigil sessions --tui`: recorded sessions read-only.

No session object, no runner, no broker, no provider: the app only reads logs (and, on request,
artifacts and MCP stderr logs). "Export transcript" from the palette is the one thing that writes.
"""

from __future__ import annotations

import gc
import sys
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from tui_app.app.commands import VigilCommands
from tui_app.app.screens.replay import ReplayLoadError, ReplayScreen, read_log
from tui_app.app.screens.sessions import SessionBrowserScreen
from tui_app.app.session_actions import open_replay
from tui_app.app.theme import pick_theme


class ReplayApp(App[int]):
    TITLE = "Vigil replay"
    COMMANDS: ClassVar = App.COMMANDS | {VigilCommands}
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+q", "quit", "Quit", priority=True)]

    def __init__(self, screen: ReplayScreen | None = None, *, in_use: tuple[str, int | None] | None = None,
                 freeze_gc: bool = True) -> None:
        """With a replay screen, that session; without, the session browser first. `in_use`: a
        session another Vigil writes (id, pid), offered read-only before anything else."""
        super().__init__()
        if freeze_gc:
            # the loaded log and everything imported stay for the app's life: out of the
            # collector's scans, which otherwise walk every recorded event again and again
            gc.freeze()
        self.first = screen
        self.in_use = in_use
        theme = pick_theme()
        if theme in self.available_themes:
            self.theme = theme

    @property
    def main(self) -> ReplayScreen | None:
        """The replay on top (what the palette's commands act on)."""
        for screen in reversed(self.screen_stack):
            if isinstance(screen, ReplayScreen):
                return screen
        return None

    async def on_mount(self) -> None:
        if self.in_use is not None:
            self.offer_read_only(*self.in_use)
        elif self.first is not None:
            await self.push_screen(self.first)
        else:
            self.browse()

    def offer_read_only(self, session_id: str, pid: int | None) -> None:
        from tui_app.app.screens.session_in_use import SessionInUseScreen

        def answered(read_only: bool | None) -> None:
            if not read_only:
                self.exit(0)
                return
            self.run_worker(open_replay(self, session_id), group="open-replay")

        self.push_screen(SessionInUseScreen(session_id, pid), answered)

    def browse(self) -> None:
        """The session browser; Esc there quits, a session chosen opens over a new browser, so
        closing the replay comes back to the list."""

        def chosen(session_id: str | None) -> None:
            if not session_id:
                self.exit(0)
                return
            self.push_screen(SessionBrowserScreen(), chosen)
            self.run_worker(open_replay(self, session_id), group="open-replay")

        self.push_screen(SessionBrowserScreen(), chosen)

    async def action_quit(self) -> None:
        self.exit(0)


def run_replay_tui(session_id: str | None) -> int:
    screen = None
    if session_id is not None:
        try:
            events, note = read_log(session_id)
        except ReplayLoadError as exc:
            from tui_app.runtime.results.sanitize import neutralize

            sys.stderr.write(f"vigil: {neutralize(str(exc))} (see `vigil sessions`)\n")
            return 2
        screen = ReplayScreen(session_id, events, note=note)
    return ReplayApp(screen).run() or 0
