"""The ApprovalBroker: a request is registered, then announced; then the user's answer and the
PermissionRequest hooks race, and the first answer wins.

Registering before announcing matters: a client that answers the instant it sees the request
must find it waiting (a broker that announces first drops such answers and the dialog is dead).
The client API (`pending`, `answer`) is thread-safe, so a UI on another thread can drive it.
An answer must echo the sha256 of the exact input it was shown; anything else is refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from tui_app.runtime.contract import ApprovalPreview

NO_CLIENT_MESSAGE = "No permission client configured"


def input_sha256(data: Any) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ApprovalRequest:
    request_id: str
    call_id: str
    tool: str
    input: dict[str, Any]
    input_sha256: str
    summary: str
    reason: str = ""
    #: who made this an ask: rule, mode, hook or tool
    asked_by: str = "mode"
    preview: ApprovalPreview | None = None
    suggested_rules: tuple[str, ...] = ()
    created: float = field(default_factory=time.time)


@dataclass(frozen=True)
class ApprovalAnswer:
    decision: Literal["allow", "deny"]
    decided_by: Literal["user", "hook", "no_client", "timeout"] = "user"
    #: the hash of the input the answer was given for (required from users)
    input_sha256: str = ""
    reason: str = ""
    #: deny with feedback: the text reaches the model in the tool result
    feedback: str | None = None
    #: always allow: save these rules (the suggested ones when empty)
    always: bool = False
    rules: tuple[str, ...] = ()
    destination: str = "localSettings"
    #: from PermissionRequest hooks
    updated_input: dict[str, Any] | None = None
    updated_permissions: tuple[dict[str, Any], ...] = ()
    interrupt: bool = False
    #: the user left the dialog with Esc (an ACP agent hears `cancelled`; Vigil's own calls: deny)
    escaped: bool = False
    #: the client that gave the answer (the log records it with PermissionResolved)
    client: str | None = None


@dataclass
class _Pending:
    request: ApprovalRequest
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[ApprovalAnswer]
    resolved: bool = False


HookRacer = Callable[[], Awaitable[ApprovalAnswer | None]]


class ApprovalBroker:
    """`interactive=False` (headless): only hooks can answer, else the call is denied with
    "No permission client configured"."""

    def __init__(self, interactive: bool = False, timeout_s: float | None = None) -> None:
        self.interactive = interactive
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}
        self._ids = itertools.count(1)
        self._questions: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future[QuestionAnswer]]] = {}

    def new_request_id(self) -> str:
        return f"perm-{next(self._ids)}"

    # ---- client side (any thread) -----------------------------------------------------------

    def pending(self) -> list[ApprovalRequest]:
        """Open requests, oldest first."""
        with self._lock:
            return [p.request for p in self._pending.values() if not p.resolved]

    def answer(self, request_id: str, answer: ApprovalAnswer) -> bool:
        """Deliver a user's answer. False if the request is gone, already decided (a hook was
        first), or the answer was given for another input than the one being decided. A broker
        without an interactive client (headless) takes no answers: only hooks decide there."""
        if answer.input_sha256 == "" or not self.interactive:
            return False
        return self._claim(request_id, replace(answer, decided_by="user"), check_hash=True)

    # ---- runtime side -----------------------------------------------------------------------

    def _claim(self, request_id: str, answer: ApprovalAnswer, check_hash: bool) -> bool:
        with self._lock:
            entry = self._pending.get(request_id)
            if entry is None or entry.resolved:
                return False
            if check_hash and answer.input_sha256 != entry.request.input_sha256:
                return False
            try:
                entry.loop.call_soon_threadsafe(_settle, entry.future, answer)
            except RuntimeError:  # the runtime's loop is gone: nothing is waiting any more
                return False
            entry.resolved = True
        return True

    async def decide(
        self,
        request: ApprovalRequest,
        announce: Callable[[], None],
        hook: HookRacer | None = None,
    ) -> ApprovalAnswer:
        loop = asyncio.get_running_loop()
        entry = _Pending(request, loop, loop.create_future())
        with self._lock:
            self._pending[request.request_id] = entry
        hook_task: asyncio.Future[None] | None = None
        try:
            announce()
            if hook is not None:
                hook_task = asyncio.ensure_future(self._race_hook(request, hook))
            elif not self.interactive:
                self._claim(request.request_id, _no_client(request), check_hash=False)
            if self.timeout_s is None:
                return await entry.future
            try:
                return await asyncio.wait_for(asyncio.shield(entry.future), self.timeout_s)
            except TimeoutError:
                self._claim(request.request_id, ApprovalAnswer(
                    "deny", "timeout", reason=f"No answer within {self.timeout_s:g}s"), check_hash=False)
                return await entry.future
        finally:
            with self._lock:
                entry.resolved = True
                self._pending.pop(request.request_id, None)
            if hook_task is not None:
                # the loser is cancelled, and waited for: its processes are gone when this returns
                # (a hook that already answered is done: cancelling it changes nothing)
                hook_task.cancel()
                await asyncio.gather(hook_task, return_exceptions=True)

    async def _race_hook(self, request: ApprovalRequest, hook: HookRacer) -> None:
        try:
            answer = await hook()
        except Exception:  # a broken hook runner decides nothing (the runner reports its own failures)
            answer = None
        if answer is not None:
            self._claim(request.request_id, answer, check_hash=False)
        elif not self.interactive:
            self._claim(request.request_id, _no_client(request), check_hash=False)

    # ---- questions to the user (AskUserQuestion) ---------------------------------------------

    async def ask_user(self, request: QuestionRequest, announce: Callable[[], None]) -> QuestionAnswer:
        """Register the question, then announce it, then wait for `answer_question`. Only an
        interactive client can answer; the tool refuses to ask without one."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[QuestionAnswer] = loop.create_future()
        with self._lock:
            self._questions[request.request_id] = (loop, future)
        try:
            announce()
            return await future
        finally:
            with self._lock:
                self._questions.pop(request.request_id, None)

    def answer_question(self, request_id: str, answers: dict[str, str] | None, client: str | None = None) -> bool:
        """Thread-safe. `answers` maps each question's text to the answer; None = declined.
        False if no such question is waiting (already answered, or its call was cancelled)."""
        with self._lock:
            entry = self._questions.pop(request_id, None)
        if entry is None:
            return False
        loop, future = entry
        loop.call_soon_threadsafe(_settle_question, future,
                                  QuestionAnswer(None if answers is None else dict(answers), client))
        return True


@dataclass(frozen=True)
class QuestionRequest:
    request_id: str
    call_id: str
    questions: list[dict[str, Any]]
    created: float = field(default_factory=time.time)


@dataclass(frozen=True)
class QuestionAnswer:
    #: question text → answer; None when the user declined to answer
    answers: dict[str, str] | None
    #: the client that answered (recorded with UserQuestionAnswered)
    client: str | None = None


def _settle_question(future: asyncio.Future[QuestionAnswer], answer: QuestionAnswer) -> None:
    if not future.done():
        future.set_result(answer)


def _settle(future: asyncio.Future[ApprovalAnswer], answer: ApprovalAnswer) -> None:
    if not future.done():
        future.set_result(answer)


def _no_client(request: ApprovalRequest) -> ApprovalAnswer:
    """Nobody can answer. A hook that said `ask` gave a reason meant for whoever answers: with
    nobody there, the model reads it (Claude Code's rule), not a generic sentence."""
    if request.asked_by == "hook" and request.reason:
        return ApprovalAnswer("deny", "no_client", reason=request.reason)
    return ApprovalAnswer("deny", "no_client", reason=NO_CLIENT_MESSAGE)
