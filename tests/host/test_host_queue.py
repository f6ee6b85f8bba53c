"""A client too slow for its session: its bounded queue overflows, it is told it fell behind, and it
catches up from the kept events with nothing lost or doubled; the session never waits for it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.waiting import eventually
from tui_app.host.hosted import HostedSession, Subscription
from tui_app.host.wire import split_event
from tui_app.runtime.events import ToolCallProgress


class SlowPeer:
    """A connection whose reader does not read until told to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.notes: list[tuple[str, dict[str, Any]]] = []
        self.reading = asyncio.Event()

    def send_bytes(self, data: bytes) -> None:
        self.lines += data.decode().splitlines()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.notes.append((method, params))

    async def drain(self) -> None:
        await self.reading.wait()

    def buffered(self) -> int:
        return 0 if self.reading.is_set() else 1 << 20  # a reader that does not read: the buffer is full

    def seqs(self) -> list[int]:
        return [json.loads(split_event(line.encode())[1])["seq"] for line in self.lines]


def emit(hosted: HostedSession, seq: int) -> None:
    event = ToolCallProgress(kind="output", stream="stdout", text=f"line {seq}\n", call_id="c1")
    event.__dict__.update(seq=seq, session_id=hosted.id, ts=0.0)
    hosted.on_event(event)


async def test_a_slow_client_is_told_it_fell_behind_and_catches_up_exactly_once() -> None:
    hosted = HostedSession("s1", {"cwd": "/"})
    for seq in range(1, 11):
        emit(hosted, seq)
    peer = SlowPeer()
    sub = Subscription(hosted, peer, after_seq=4, bound=20)
    sub.start()
    await eventually(lambda: peer.lines, "the replay to start")
    for seq in range(11, 200):  # the session goes on, whatever the client does
        emit(hosted, seq)
    assert sub.behind and sub.lagged >= 1
    peer.reading.set()
    await eventually(lambda: peer.seqs()[-1:] == [199], "the client to catch up")
    assert peer.seqs() == list(range(5, 200))
    assert [m for m, _ in peer.notes] == ["behind"] * len(peer.notes) and peer.notes
    emit(hosted, 200)  # and then it follows live again
    await eventually(lambda: peer.seqs()[-1:] == [200], "the live event")
    assert peer.seqs() == list(range(5, 201))
    sub.stop()


async def test_a_client_keeping_up_is_never_told_it_is_behind() -> None:
    hosted = HostedSession("s2", {"cwd": "/"})
    peer = SlowPeer()
    peer.reading.set()
    sub = Subscription(hosted, peer, bound=50)
    sub.start()
    for seq in range(1, 301):
        emit(hosted, seq)
        if seq % 25 == 0:
            await eventually(lambda s=seq: peer.seqs()[-1:] == [s], "the client to read")
    assert peer.seqs() == list(range(1, 301)) and peer.notes == []
    sub.stop()
