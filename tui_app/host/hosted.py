"""A session the host holds: its events as wire lines, what waits for a person, its state, and
one Subscription per attached client.

Every event the session emits is encoded once (a wire notification line) and kept, so an
attaching client is replayed what it missed from memory and then follows live. A Subscription
has a bounded queue: a client that reads too slowly is told it fell behind and catches up from
the kept lines, so a slow client never slows the session and never misses or doubles an event.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import Any, Protocol

from tui_app.host.wire import ConnectionLost, dumps, event_line_prefix

#: lines a client may have queued before it is told it is behind (and catches up from the kept lines)
QUEUE_BOUND = 4096
#: lines written before waiting for the socket to take them
BATCH = 256
#: bytes a connection may have waiting in its socket buffer for an event to be written at once
DIRECT_LIMIT = 1 << 16

STATES = ("running", "waiting", "idle", "ended", "interrupted")


class LinePeer(Protocol):
    """What a subscription needs of a connection (the wire's Peer)."""

    def send_bytes(self, data: bytes) -> None: ...

    def buffered(self) -> int: ...

    def notify(self, method: str, params: dict[str, Any]) -> None: ...

    async def drain(self) -> None: ...


def preview_text(event: Any) -> str:
    return event.preview or dumps(event.input)[:2000]


class HostedSession:
    """`session` is the live runtime Session (None while the session is ended or interrupted)."""

    def __init__(
        self,
        session_id: str,
        options: dict[str, Any],
        *,
        started: float | None = None,
        state: str = "idle",
        reason: str = "",
    ) -> None:
        self.id = session_id
        self.options = options
        self.session: Any = None
        self.started = started or time.time()
        self.last_activity = self.started
        self.agent = str(options.get("agent") or "vigil")
        self.cwd = str(options.get("cwd") or "")
        #: set for a session that is not live: "ended" or "interrupted"
        self.rest_state = state if state in ("ended", "interrupted") else None
        self.reason = reason
        #: (seq, notification line, encoded, with its newline) of every logged event, in order
        self.lines: list[tuple[int, bytes]] = []
        self.loaded = False
        #: request id → inbox entry, oldest first
        self.pending: dict[str, dict[str, Any]] = {}
        #: request id → who settled it (the client, or the decider)
        self.settled: dict[str, str] = {}
        self.subscriptions: set[Subscription] = set()
        self._prefix = event_line_prefix(session_id)

    # ---- events ----------------------------------------------------------------------------------

    @property
    def head(self) -> int:
        return self.lines[-1][0] if self.lines else 0

    def load(self, events: list[Any]) -> None:
        """The events a log already holds (a resumed or finished session), before any new one."""
        for event in events:
            self._keep(event)
        self.loaded = True

    def attach_session(self, session: Any) -> None:
        self.session = session
        self.rest_state = None
        self.reason = ""
        self.agent = session.agent.name
        self.cwd = session.cwd
        session.subscribe(self.on_event)

    def on_event(self, event: Any) -> None:
        """Called by the session (on the host's loop) for every event it emits."""
        self.last_activity = time.time()
        if event.ephemeral:
            line = self._encode(event)
            for sub in tuple(self.subscriptions):
                if sub.partial:
                    sub.offer(event.seq, line, ephemeral=True)
            return
        seq, line = self._keep(event)
        for sub in tuple(self.subscriptions):
            sub.offer(seq, line)
        if event.type == "SessionEnded":
            if self.session is not None:
                self.rest_state = "ended"
                self.reason = event.reason
            for sub in tuple(self.subscriptions):
                sub.poke()  # a caught-up client was written to directly: its task tells it the session ended

    def _keep(self, event: Any) -> tuple[int, bytes]:
        line = self._encode(event)
        entry = (event.seq, line)
        self.lines.append(entry)
        self._fold(event)
        return entry

    def _encode(self, event: Any) -> bytes:
        return (self._prefix + event.model_dump_json() + "}}\n").encode("utf-8")

    def lines_after(self, seq: int) -> list[tuple[int, bytes]]:
        if not self.lines or seq >= self.lines[-1][0]:
            return []
        if seq <= 0:
            return list(self.lines)
        low, high = 0, len(self.lines)
        while low < high:  # the first line with a seq above `seq`
            mid = (low + high) // 2
            if self.lines[mid][0] <= seq:
                low = mid + 1
            else:
                high = mid
        return self.lines[low:]

    # ---- what waits for a person -----------------------------------------------------------------

    def _fold(self, event: Any) -> None:
        kind = event.type
        if kind == "PermissionRequested" and event.interactive:
            self._ask(
                event,
                "permission",
                event.tool,
                event.summary,
                preview_text(event),
                event.reason,
                input_sha256=event.input_sha256,
                suggested_rules=list(event.suggested_rules),
            )
        elif kind == "UserQuestionAsked":
            first = event.questions[0].get("question", "") if event.questions else ""
            self._ask(
                event, "question", "AskUserQuestion", str(first), dumps(event.questions), "", questions=event.questions
            )
        elif kind == "PlanApprovalAsked":
            self._ask(event, "plan", "ExitPlanMode", "Approve the plan", event.plan, "")
        elif kind in ("PermissionResolved", "UserQuestionAnswered") and event.request_id:
            self.pending.pop(event.request_id, None)
            who = event.client or getattr(event, "decided_by", None) or getattr(event, "outcome", "")
            self.settled[event.request_id] = str(who)
            if len(self.settled) > 1000:
                self.settled.pop(next(iter(self.settled)))
        elif kind == "SessionEnded" or (kind == "TurnEnded" and event.agent_id is None):
            self.pending.clear()

    async def settler(self, request_id: str, timeout: float = 2.0) -> str | None:
        """Who settled `request_id`: an answer that lost the race is refused before the winner's
        PermissionResolved is emitted, so this waits a moment for it."""
        deadline = time.monotonic() + timeout
        while request_id not in self.settled and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return self.settled.get(request_id)

    def _ask(self, event: Any, kind: str, tool: str, summary: str, preview: str, reason: str, **extra: Any) -> None:
        self.pending[event.request_id] = {
            "id": f"{self.id}:{event.request_id}",
            "session": self.id,
            "agent": self.agent,
            "kind": kind,
            "tool": tool,
            "summary": summary,
            "preview": preview,
            "reason": reason,
            "asked_at": event.ts,
            "request_id": event.request_id,
            "seq": event.seq,
            "cwd": self.cwd,
            "worktree": None,
            **extra,
        }

    # ---- what `vigil ls` shows -------------------------------------------------------------------

    @property
    def state(self) -> str:
        if self.rest_state is not None:
            return self.rest_state
        if self.pending:
            return "waiting"
        session = self.session
        if session is not None and session.controller.busy:
            return "running"
        return "idle"

    def row(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "agent": self.agent,
            "state": self.state,
            "pending": len(self.pending),
            "cwd": self.cwd,
            "worktree": None,
            "branch": None,
            "started": self.started,
            "last_activity": self.last_activity,
            "reason": self.reason or None,
            "clients": len(self.subscriptions),
        }


class Subscription:
    """One client following one session: replayed from `after_seq`, then live, in order."""

    def __init__(
        self,
        hosted: HostedSession,
        peer: LinePeer,
        after_seq: int = 0,
        *,
        partial: bool = False,
        bound: int = QUEUE_BOUND,
    ) -> None:
        self.hosted = hosted
        self.peer = peer
        self.partial = partial
        self.bound = bound
        self.sent_seq = after_seq
        self.queue: deque[tuple[int, bytes]] = deque()
        #: the queue overflowed (or nothing was sent yet): the next lines come from the kept ones
        self.behind = True
        self.lagged = 0
        self._wake = asyncio.Event()
        #: the writer task waits for lines (an event may then be written at once, in `offer`)
        self.idle = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.hosted.subscriptions.add(self)
        self._task = asyncio.ensure_future(self._run())

    def poke(self) -> None:
        """Look again (the session ended)."""
        self._wake.set()

    def stop(self) -> None:
        self.hosted.subscriptions.discard(self)
        if self._task is not None:
            self._task.cancel()

    def offer(self, seq: int, line: bytes, ephemeral: bool = False) -> None:
        if self.behind:
            return  # it will be read from the kept lines (a partial one is lost: the whole one follows)
        if self.idle and not self.queue and self.peer.buffered() < DIRECT_LIMIT:
            # caught up, and the socket takes it: written now, no hop through the writer task
            self.peer.send_bytes(line)
            if not ephemeral:
                self.sent_seq = seq
            return
        if len(self.queue) >= self.bound:
            self.behind = True
            self.lagged += 1
            self.queue.clear()
        else:
            self.queue.append((-1 if ephemeral else seq, line))
        self._wake.set()

    async def _run(self) -> None:
        with contextlib.suppress(ConnectionLost, asyncio.CancelledError):
            while True:
                if self.behind:
                    # taken and switched to live in one step of the loop: nothing between is lost or doubled
                    backlog = self.hosted.lines_after(self.sent_seq)
                    self.behind = False
                    if self.lagged:
                        self.peer.notify(
                            "behind",
                            {
                                "session": self.hosted.id,
                                "from_seq": self.sent_seq,
                                "missed": len(backlog),
                                "times": self.lagged,
                            },
                        )
                    await self._send(backlog)
                    continue
                if not self.queue:
                    if self.hosted.rest_state is not None:
                        self.peer.notify(
                            "ended",
                            {
                                "session": self.hosted.id,
                                "state": self.hosted.rest_state,
                                "reason": self.hosted.reason,
                                "last_seq": self.sent_seq,
                            },
                        )
                        await self.peer.drain()
                        self.hosted.subscriptions.discard(self)
                        return
                    self._wake.clear()
                    self.idle = True
                    try:
                        await self._wake.wait()
                    finally:
                        self.idle = False
                    continue
                batch = []
                while self.queue and len(batch) < BATCH:
                    batch.append(self.queue.popleft())
                await self._send(batch)
        self.hosted.subscriptions.discard(self)

    async def _send(self, lines: list[tuple[int, bytes]]) -> None:
        """Whole batches in one write each; `behind` only changes while this waits for the socket."""
        for start in range(0, len(lines), BATCH):
            if self.behind:
                return  # overflowed while sending: start again from the kept lines
            batch = lines[start : start + BATCH]
            self.peer.send_bytes(b"".join(line for _, line in batch))
            seqs = [seq for seq, _ in batch if seq >= 0]
            if seqs:
                self.sent_seq = seqs[-1]
            await self.peer.drain()
