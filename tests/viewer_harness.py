"""Shared by the artifact viewer tests: a host app, waiting, reading the screen, big files."""

from __future__ import annotations

import time
from pathlib import Path

from textual.app import App, ComposeResult
from textual.pilot import Pilot

from tests.waiting import DEADLINE_S
from widgets.viewer.artifact_lines import ArtifactLines
from widgets.viewer.artifact_viewer import ArtifactViewer

LINE_BYTES = 78  # every line of a generated big file has the same length: line N is at (N-1)*78


class ViewerApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ArtifactViewer(id="viewer")

    @property
    def viewer(self) -> ArtifactViewer:
        return self.query_one(ArtifactViewer)

    @property
    def lines(self) -> ArtifactLines:
        return self.query_one(ArtifactLines)


async def wait_for(pilot: Pilot, condition, timeout: float = DEADLINE_S, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def screen_rows(lines: ArtifactLines) -> list[str]:
    """The rows of the viewer as the user reads them (gutter and text)."""
    return [lines.render_line(y).text.rstrip() for y in range(lines.scrollable_content_region.height)]


def status_text(app: App) -> str:
    return app.screen.query_one(ArtifactViewer).status.plain


def generated_line(number: int) -> bytes:
    """Line `number` (1-based) of a generated big file."""
    return b"%09d the quick brown fox jumps over the lazy dog; status=ok elapsed=12ms\n" % (number - 1)


def write_big_file(path: Path, size: int, needle_line: int | None = None) -> int:
    """Writes about `size` bytes of numbered fixed-width lines quickly (one template per 10,000
    lines); returns the number of lines. The needle replaces the text of one line."""
    template = b"".join(b"KKKKK%04d the quick brown fox jumps over the lazy dog; status=ok elapsed=12ms\n" % j
                        for j in range(10_000))
    assert len(template) == 10_000 * LINE_BYTES
    blocks = max(1, size // len(template))
    with open(path, "wb") as handle:
        for k in range(blocks):
            block = template.replace(b"KKKKK", b"%05d" % k)
            if needle_line is not None and k == (needle_line - 1) // 10_000:
                at = ((needle_line - 1) % 10_000) * LINE_BYTES
                line = b"%09d NEEDLE-7f3a found here" % (needle_line - 1)
                block = block[:at] + line.ljust(LINE_BYTES - 1) + b"\n" + block[at + LINE_BYTES:]
            handle.write(block)
    return blocks * 10_000
