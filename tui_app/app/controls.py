"""What the screen asks of a live session, over the runner: every method is safe to call from the
UI thread and never waits for the runtime (a mode change is done on the runtime's own loop).

The slash commands' work is here too: /compact and /clear run between turns (a compaction holds
the session like a turn does, and Esc stops it), /add-dir, /model and `#` notes for memory files."""

from __future__ import annotations

import os
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from tui_app.agents.compaction import clear, compact
from tui_app.agents.memory import append_note
from tui_app.app.bridge import SessionRunner
from tui_app.runtime.events import PermissionModeChanged
from tui_app.runtime.executor import TurnControl
from tui_app.runtime.permissions.broker import ApprovalAnswer
from tui_app.runtime.permissions.updates import apply_update


class LiveControls:
    def __init__(self, runner: SessionRunner) -> None:
        self.runner = runner
        self.session = runner.session
        #: the mode last asked for (the header shows the one the runtime confirmed)
        self.mode: str = self.session.permission_mode
        #: a /compact in progress (Esc stops it)
        self._compaction: TurnControl | None = None

    @property
    def busy(self) -> bool:
        return self.runner.busy

    def submit(self, prompt: str) -> bool:
        return self.runner.submit(prompt) is not None

    def interrupt(self) -> bool:
        if not self.runner.busy:
            return False
        manual = self._compaction
        if manual is not None:
            self.runner.call(_abort(manual))
        self.runner.interrupt()
        return True

    # ---- slash commands ---------------------------------------------------------------------

    @property
    def commands(self) -> Any:
        return self.session.services.get("slash_commands")

    def service(self, name: str) -> Any:
        return self.session.services.get(name)

    def compact(self, instructions: str = "") -> Future[Any] | None:
        """/compact: None while a turn runs (the conversation is still changing)."""
        if self.runner.busy:
            return None
        control = self._compaction = TurnControl()

        async def run() -> Any:
            try:
                return await compact(self.session, control, trigger="manual", instructions=instructions)
            finally:
                self._compaction = None

        self.runner.turn = self.runner.call(run())
        return self.runner.turn

    def clear(self) -> Future[Any] | None:
        if self.runner.busy:
            return None

        async def run() -> Any:
            return clear(self.session)

        return self.runner.call(run())

    def run_shell(self, command: str) -> Future[Any] | None:
        """`!command`: the user's own command in the session's cwd (Esc stops it); its output is
        context for the next prompt. None while a turn runs."""
        if self.runner.busy:
            return None
        from tui_app.agents.user_shell import run_user_command

        self.runner.turn = self.runner.call(run_user_command(self.session, command))
        return self.runner.turn

    def add_directory(self, path: str) -> tuple[bool, str]:
        """/add-dir: a working directory for this session (through the same mechanism as a hook's
        addDirectories update). (ok, the absolute path or why not)."""
        target = Path(os.path.expanduser(path.strip()))
        if not target.is_absolute():
            target = Path(self.session.cwd) / target
        target = target.resolve()
        if not target.is_dir():
            return False, f"{target} is not a directory"
        session = self.session

        async def run() -> None:
            apply_update(session.policy, session.emit, {"type": "addDirectories", "directories": [str(target)]})

        self.runner.call(run())
        return True, str(target)

    def set_model(self, name: str) -> str:
        """/model NAME: later requests use this model (the scripted model plays its script anyway)."""
        self.session.model.model = name
        return name

    def add_memory_note(self, path: Path, note: str) -> Future[Any]:
        """A `#` line: appended to a memory file, which is read again into the system prompt."""
        session = self.session

        async def run() -> Path:
            written = append_note(path, note)
            memory = session.services.get("memory")
            if memory is not None:
                memory.reload()
                session.system_prompt = memory.system_prompt()
                session.emit(memory.memory.event())
            return written

        return self.runner.call(run())

    def set_mode(self, mode: str) -> Future[Any]:
        self.mode = mode
        session = self.session

        async def change() -> None:
            previous = session.policy.mode
            if previous != mode:
                session.policy.mode = mode  # type: ignore[assignment]
                session.emit(PermissionModeChanged(mode=mode, previous=previous))

        return self.runner.call(change())

    def select_agent_mode(self, mode_id: str) -> Future[Any] | None:
        """shift+tab with an external agent that has modes of its own (ACP): switch the agent's."""
        select = getattr(self.session.driver, "select_mode", None)
        return self.runner.call(select(mode_id)) if select is not None else None

    def answer_approval(self, request_id: str, answer: ApprovalAnswer) -> bool:
        return self.session.broker.answer(request_id, answer)

    def answer_question(self, request_id: str, answers: dict[str, str] | None) -> bool:
        return self.session.broker.answer_question(request_id, answers)


async def _abort(control: TurnControl) -> None:
    control.abort("interrupted")
