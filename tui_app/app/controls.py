"""What the screen asks of a live session, over the runner: every method is safe to call from the
UI thread and never waits for the runtime (a mode change is done on the runtime's own loop)."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from tui_app.app.bridge import SessionRunner
from tui_app.runtime.events import PermissionModeChanged, WorkingDirectoriesChanged
from tui_app.runtime.permissions.broker import ApprovalAnswer


class LiveControls:
    def __init__(self, runner: SessionRunner) -> None:
        self.runner = runner
        self.session = runner.session
        #: the mode last asked for (the header shows the one the runtime confirmed)
        self.mode: str = self.session.permission_mode

    @property
    def busy(self) -> bool:
        return self.runner.busy

    def submit(self, prompt: str) -> bool:
        return self.runner.submit(prompt) is not None

    def interrupt(self) -> bool:
        if not self.runner.busy:
            return False
        self.runner.interrupt()
        return True

    def set_mode(self, mode: str) -> Future[Any]:
        self.mode = mode
        session = self.session

        async def change() -> None:
            previous = session.policy.mode
            if previous != mode:
                session.policy.mode = mode  # type: ignore[assignment]
                session.emit(PermissionModeChanged(mode=mode, previous=previous))

        return self.runner.call(change())

    def add_directory(self, path: str) -> Future[Any]:
        """A working directory more, for this session (the result: the directories added)."""
        session = self.session

        async def add() -> list[str]:
            adder = getattr(session.policy, "add_directories", None)
            added = adder([path]) if adder is not None else []
            if added:
                session.emit(WorkingDirectoriesChanged(directories=list(session.policy.dirs.dirs), added=added))
            return list(added or [])

        return self.runner.call(add())

    def answer_approval(self, request_id: str, answer: ApprovalAnswer) -> bool:
        return self.session.broker.answer(request_id, answer)

    def answer_question(self, request_id: str, answers: dict[str, str] | None) -> bool:
        return self.session.broker.answer_question(request_id, answers)
