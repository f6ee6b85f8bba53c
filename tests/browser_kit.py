"""Driving `vigil serve` with a real browser: Debian's Chromium through Playwright (never a
downloaded browser), and the screen read back the way the page shows it.

The page draws the terminal on a canvas, so the test watches the websocket instead: every frame
the app sends is fed to pyte, a terminal emulator, sized as the page told the server.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.needs import require
from tests.waiting import DEADLINE_S

ROOT = Path(__file__).parent.parent
CHROMIUM = os.environ.get("VIGIL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--no-first-run", "--disable-component-update", "--disable-sync", "--disable-extensions",
                 "--disable-default-apps", "--mute-audio"]


def need_browser() -> None:
    try:
        import playwright.sync_api  # noqa: F401
        import pyte  # noqa: F401
    except ImportError as exc:
        require(f"{exc.name} is not installed (pip install -e '.[dev]')")
    require(None if os.access(CHROMIUM, os.X_OK) else f"{CHROMIUM} is not installed (apt-get install chromium)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Served:
    """`vigil serve` in its own process group, on a free port, with a known token."""

    def __init__(self, tmp_path: Path, args: list[str], token: str = "a-test-token-0123456789") -> None:
        self.token = token
        self.port = free_port()
        self.home = tmp_path / "home"
        env = {**os.environ, "VIGIL_HOME": str(self.home), "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT),
               "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
        env.pop("TEXTUAL_DRIVER", None)
        self.log = open(tmp_path / "serve.log", "w+b")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tui_app", "serve", "--port", str(self.port), "--token", token, "--", *args],
            cwd=tmp_path, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_listening()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def _wait_listening(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"vigil serve ended: {self.output()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"vigil serve is not listening: {self.output()}")

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")

    def apps(self) -> list[int]:
        """The Vigil apps the server started (its children), still running."""
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if fields[0] != "Z" and int(fields[1]) == self.process.pid and b"tui_app" in cmdline:
                found.append(int(name))
        return found

    def sessions(self) -> list[Path]:
        return sorted((self.home / "sessions").glob("*/events.jsonl")) if (self.home / "sessions").is_dir() else []

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(DEADLINE_S)
        self.log.close()


class BrowserScreen:
    """What the page's terminal shows, rebuilt from the frames the app sent."""

    def __init__(self, page: Any) -> None:
        import pyte

        self.page = page
        self.pyte = pyte
        self.screen: Any = None
        self.stream: Any = None
        self.columns = self.rows = 0
        page.on("websocket", self._socket)

    def _socket(self, socket: Any) -> None:
        size = re.search(r"width=(\d+)&height=(\d+)", socket.url)
        self.columns, self.rows = (int(size.group(1)), int(size.group(2))) if size else (80, 24)
        self.screen = self.pyte.Screen(self.columns, self.rows)
        self.stream = self.pyte.ByteStream(self.screen)
        socket.on("framereceived", self._frame)

    def _frame(self, payload: Any) -> None:
        if isinstance(payload, bytes) and self.stream is not None:
            self.stream.feed(payload)

    def text(self) -> str:
        return "\n".join(self.screen.display) if self.screen is not None else ""

    def wait_for(self, check: Callable[[str], bool], what: str, timeout: float = 90.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()
            if check(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the page shows:\n{text}")
            self.page.wait_for_timeout(100)

    def find(self, needle: str, start_column: int = 0) -> tuple[int, int] | None:
        """(column, row) of `needle` on the screen, at or right of `start_column`."""
        for row, line in enumerate(self.screen.display if self.screen is not None else []):
            column = line.find(needle, start_column)
            if column >= 0:
                return column, row
        return None

    def click_cell(self, column: int, row: int) -> None:
        box = self.page.locator(".xterm-screen").bounding_box()
        width, height = box["width"] / self.columns, box["height"] / self.rows
        self.page.mouse.click(box["x"] + (column + 0.5) * width, box["y"] + (row + 0.5) * height)


@contextmanager
def chromium(viewport: tuple[int, int] = (1400, 860)) -> Iterator[Any]:
    """A fresh headless Chromium (its own profile directory) with one page."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="vigil-chromium-") as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
            viewport={"width": viewport[0], "height": viewport[1]})
        try:
            yield context
        finally:
            context.close()
