"""`vigil serve` in a real browser (Debian's Chromium, driven by Playwright): the page needs its
token, the app renders and takes keys at once, `y` approves the demo's dialog, a click selects a
row of the tool table, and closing the tab ends the app the way ctrl+q does."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from tests.browser_kit import BrowserScreen, Served, chromium, need_browser


@pytest.fixture
def served(tmp_path):
    need_browser()
    server = Served(tmp_path, ["--demo"])
    yield server
    server.stop()


def status_of(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def events_of(log) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def wait_until(check, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_nothing_runs_without_the_token(served):
    base = f"http://127.0.0.1:{served.port}"
    for url in (f"{base}/", f"{base}/?token=wrong-token-0123456789", f"{base}/ws/wrong-token-0123456789",
                f"{base}/ws/"):
        status, body = status_of(url)
        assert status in (403, 404), url
        if status == 403:
            assert "needs its access token" in body
    status, page = status_of(served.url)
    assert status == 200
    assert '<meta name="viewport" content="width=device-width, initial-scale=1" />' in page
    assert "fonts/RobotoMono-VariableFont_wght.ttf" in page  # the shipped font, nothing from another host
    assert "googleapis" not in page
    assert f"/ws/{served.token}" in page
    assert served.apps() == [] and served.sessions() == []  # no page opened a websocket: no Vigil ran


def test_in_the_browser_the_app_renders_and_y_approves(served):
    with chromium() as browser:
        page = browser.new_page()
        screen = BrowserScreen(page)
        page.goto(served.url)
        text = screen.wait_for(lambda t: "Approve Bash?" in t, "the demo's first approval")
        assert "Vigil" in text and "waiting for you" in text
        # the page put the keyboard on the terminal by itself
        assert page.evaluate("document.activeElement.classList.contains('xterm-helper-textarea')")
        page.wait_for_timeout(400)  # the dialog ignores keys for its first 300 ms (a stray key must not answer)
        page.keyboard.press("y")
        screen.wait_for(lambda t: "Approve Bash?" not in t, "the dialog to close")
        [log] = served.sessions()
        wait_until(lambda: any(e.get("type") == "PermissionResolved" and e.get("decided_by") == "user"
                               for e in events_of(log)), "the user's answer in the log")
        answer = next(e for e in events_of(log) if e.get("type") == "PermissionResolved")
        assert answer["decision"] == "allow"


def test_in_the_browser_a_click_selects_a_table_row(tmp_path):
    need_browser()
    server = Served(tmp_path, ["--demo", "--permission-mode", "bypassPermissions"])  # no dialog in the way
    try:
        with chromium() as browser:
            page = browser.new_page()
            screen = BrowserScreen(page)
            page.goto(server.url)
            screen.wait_for(lambda t: "mode bypassPermissions" in t and "idle" in t.split("\n", 1)[0]
                            and screen.find("tests/test_stats.py") is not None, "the demo's turn to end")
            assert "class TotalTest" not in screen.text()  # the detail pane follows the last call, not this one
            column, row = screen.find("tests/test_stats.py", start_column=screen.columns // 2)  # the table's row
            screen.click_cell(column + 2, row)
            screen.wait_for(lambda t: "class TotalTest" in t, "the detail pane to show the clicked Read's output")
    finally:
        server.stop()


def test_closing_the_tab_ends_that_app_like_ctrl_q(served):
    with chromium() as browser:
        page = browser.new_page()
        screen = BrowserScreen(page)
        page.goto(served.url)
        screen.wait_for(lambda t: "Approve Bash?" in t, "the demo's first approval")
        [app] = served.apps()
        [log] = served.sessions()
        page.close()
        wait_until(lambda: app not in served.apps(), "the app to end after its tab closed")
    ended = [e for e in events_of(log) if e.get("type") == "SessionEnded"]
    assert ended, "the session was closed (tools stopped, log closed) on the way out"
    asked = [e for e in events_of(log) if e.get("type") == "PermissionResolved"]
    assert asked and asked[-1]["decision"] == "deny"  # the waiting approval was answered, never left hanging
