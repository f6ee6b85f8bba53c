"""Driving replays under pilot and comparing what they show, pane by pane."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.tui.app_harness import wait_until
from tests.tui.helpers import screen_lines
from tui_app.app.screens.replay import ReplayScreen

#: the header's marker: "[demo] ", "[READ-ONLY replay] ", …
MARKER = re.compile(r"^ Vigil \[[^\]]*\] ")


async def caught_up(pilot: Any, screen: Any = None) -> Any:
    """The replay on top shows the position asked for, and its background work is done."""
    app = pilot.app

    def ready() -> Any:
        target = screen or app.screen
        return isinstance(target, ReplayScreen) and target.is_mounted and target.synced and target

    target = await wait_until(pilot, ready, "the replay to catch up")
    await settled(pilot)
    return target


async def settled(pilot: Any) -> None:
    """Workers done, and the detail's tab underline where it slides to (it starts sliding 20 ms
    after the tab changes, once the screen has been refreshed)."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.05)
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def panes(app: Any, screen: Any) -> dict[str, list[str]]:
    """The text of each pane of a main screen as shown (trailing blanks dropped), the header
    without its marker."""
    lines = screen_lines(app)

    def crop(region: Any) -> list[str]:
        return [line[region.x: region.right].rstrip() for line in lines[region.y: region.bottom]]

    header = MARKER.sub(" Vigil ", lines[screen.header.region.y]).rstrip()
    detail = crop(screen.detail.region)
    # the tab underline is the active tab's name instead: Textual slides it on a timer, and two tab
    # changes close together can leave it under the earlier tab for a while
    underline = screen.detail.query_one("Underline").region.y - screen.detail.region.y
    detail[underline] = f"(active tab: {screen.detail.active_tab})"
    # the chat without its scrollbar: the thumb stands elsewhere in a taller chat
    return {"header": [header], "chat": crop(screen.chat.scrollable_content_region),
            "table": crop(screen.table.region), "detail": detail}


def assert_same_screen(live: dict[str, list[str]], replay: dict[str, list[str]]) -> None:
    """Same header, table and detail; the chat's last lines the same (the live chat is shorter by
    the prompt box, which a replay has not; both keep their last line at the bottom)."""
    for pane in ("header", "table", "detail"):
        assert live[pane] == replay[pane], f"the {pane} differs:\n" + "\n".join(live[pane] + ["---"] + replay[pane])
    shown = len(live["chat"])
    chat = replay["chat"][-shown:]
    assert chat == live["chat"], "the chat differs:\n" + "\n".join(live["chat"] + ["---"] + chat)


def files_under(*roots: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under `roots` with its mtime and size."""
    found = {}
    for root in roots:
        for path in [root, *root.rglob("*")]:
            stat = path.stat()
            found[str(path)] = (stat.st_mtime_ns, stat.st_size if path.is_file() else -1)
    return found


@contextmanager
def no_process_may_start(monkeypatch: Any) -> Iterator[list[Any]]:
    """Every way this process could start another one is refused and noted (asyncio's
    subprocesses go through Popen)."""
    spawned: list[Any] = []
    real = subprocess.Popen

    class Refused(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            spawned.append(args[0] if args else kwargs.get("args"))
            raise AssertionError("a process was started")

    def refuse(name: str) -> Any:
        def spawn(*args: Any, **kwargs: Any) -> Any:
            spawned.append(name)
            raise AssertionError(f"{name} called")
        return spawn

    with monkeypatch.context() as patch:
        patch.setattr(subprocess, "Popen", Refused)
        for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve"):
            if hasattr(os, name):
                patch.setattr(os, name, refuse(name))
        yield spawned
