"""One remote client's side of the approval race: each permission request that waits for a person
is put to the client (an Agent SDK's `can_use_tool`, an ACP client's `session/request_permission`),
and its answer goes back through the session's port, bound to the hash of the input it was shown.
When another answer settles the request first (a PermissionRequest hook, another client, an
interrupt), the client's question is withdrawn: its task is cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from tui_app.runtime.commands import AnswerApproval
from tui_app.runtime.events import PermissionRequested, PermissionResolved

#: puts one request to the client; its answer, or None when the client gave none
Ask = Callable[[PermissionRequested], Awaitable[AnswerApproval | None]]


class RequestForwarder:
    def __init__(self, controller: Any, ask: Ask, client: str) -> None:
        self.controller = controller
        self.ask = ask
        self.client = client
        self.asking: dict[str, asyncio.Task[None]] = {}

    def on_event(self, event: Any) -> None:
        if isinstance(event, PermissionRequested) and event.interactive:
            self.asking[event.request_id] = asyncio.ensure_future(self._forward(event))
        elif isinstance(event, PermissionResolved) and event.request_id in self.asking:
            task = self.asking.pop(event.request_id)
            if not task.done():
                task.cancel()  # settled without this client: its question is withdrawn

    async def _forward(self, event: PermissionRequested) -> None:
        answer = await self.ask(event)
        self.asking.pop(event.request_id, None)
        if answer is not None:
            await self.controller.handle(answer.model_copy(update={"client": self.client}))

    async def close(self) -> None:
        tasks = list(self.asking.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.asking.clear()
