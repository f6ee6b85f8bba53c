"""Reading the screen the way a user sees it: the final composited strips of the active screen."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from rich.segment import Segment
from textual.app import App

from tests.waiting import DEADLINE_S

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def screen_segments(app: App[Any]) -> list[list[Segment]]:
    strips = app.screen._compositor.render_strips()
    return [list(strip) for strip in strips]


def screen_lines(app: App[Any]) -> list[str]:
    return ["".join(segment.text for segment in line) for line in screen_segments(app)]


def screen_text(app: App[Any]) -> str:
    return "\n".join(screen_lines(app))


def control_characters(app: App[Any]) -> list[str]:
    """Control bytes that would reach the terminal inside the text of the screen."""
    found = []
    for line in screen_segments(app):
        for segment in line:
            if segment.control:
                found.append(repr(segment.control))
            found.extend(repr(c) for c in CONTROL.findall(segment.text))
    return found


def click_actions(app: App[Any]) -> list[str]:
    """Every `@click` action a mouse click on the screen could run."""
    actions = []
    for line in screen_segments(app):
        for segment in line:
            meta = segment.style.meta if segment.style is not None else {}
            if meta and "@click" in meta:
                actions.append(str(meta["@click"]))
    return actions


def styled_segments(app: App[Any], text: str) -> list[Segment]:
    """Segments whose text contains `text`."""
    return [s for line in screen_segments(app) for s in line if text in s.text]


def find_text(app: App[Any], text: str) -> tuple[int, int]:
    """(row, column) of the first place `text` shows on the screen."""
    for y, line in enumerate(screen_lines(app)):
        x = line.find(text)
        if x != -1:
            return y, x
    raise AssertionError(f"{text!r} is not on the screen")


def style_at(app: App[Any], y: int, x: int) -> Any:
    """The style of the character at (row, column) (cells, assuming single-width text)."""
    column = 0
    for segment in screen_segments(app)[y]:
        if column <= x < column + len(segment.text):
            return segment.style
        column += len(segment.text)
    raise AssertionError(f"nothing at {x},{y}")


def style_of(app: App[Any], text: str, offset: int = 0) -> Any:
    y, x = find_text(app, text)
    return style_at(app, y, x + offset)


async def wait_until(pilot: Any, condition: Callable[[], Any], what: str, timeout: float = DEADLINE_S) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; the screen shows:\n{screen_text(pilot.app)}")
        await pilot.pause(0.05)
