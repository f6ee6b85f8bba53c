"""The TUI's side of the session port: commands up, facts on request, over the runner.

Every method is safe to call from the UI thread and never waits for the runtime: a command is sent
to the session's controller on its own loop and the reply comes back as a Future (or, in async
code, with `ask`). The screen never touches the live session; what it shows comes from events and
from `facts()`. See docs/architecture.md, "The session port".
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from typing import Any

from tui_app.app.bridge import SessionRunner
from tui_app.runtime.commands import CommandFact, Reply, SessionFacts, SetPermissionMode, SubmitPrompt

#: who the log says answered, asked or changed something from this screen
CLIENT = "tui"


class SessionClient:
    def __init__(self, runner: SessionRunner, client: str = CLIENT) -> None:
        self.runner = runner
        self.client = client
        #: the mode last asked for (the header shows the one the runtime confirmed)
        self.mode: str = runner.initial_mode
        #: the session's facts as last fetched (the prompt box completes slash commands from them)
        self.known: SessionFacts | None = None

    @property
    def busy(self) -> bool:
        return self.runner.busy

    @property
    def commands(self) -> list[CommandFact]:
        return list(self.known.slash_commands) if self.known is not None else []

    def send(self, command: Any) -> Future[Reply]:
        """Send a command (from this client) to the session; its reply comes in the Future."""
        if not command.client:
            command = command.model_copy(update={"client": self.client})
        return self.runner.send(command)

    async def ask(self, command: Any) -> Reply:
        """Send a command and wait for the reply (in the app's own async code)."""
        return await asyncio.wrap_future(self.send(command))

    def facts(self) -> Future[SessionFacts]:
        return self.runner.facts()

    async def refresh(self) -> SessionFacts:
        self.known = await asyncio.wrap_future(self.facts())
        return self.known

    def submit(self, prompt: str) -> bool:
        """Start a turn with `prompt` as it is (no command routing); False while one runs."""
        if self.runner.busy:
            return False
        self.send(SubmitPrompt(text=prompt, literal=True))
        return True

    def set_mode(self, mode: str) -> Future[Reply]:
        self.mode = mode
        return self.send(SetPermissionMode(mode=mode))
