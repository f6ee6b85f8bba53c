"""The TUI attached to a session the host holds (a real host process, the app under pilot): it
shows what the session did before it attached, answers like any client, sees answers from other
clients, and quitting detaches (the session goes on)."""

from __future__ import annotations

import asyncio
import json

from tests.host.test_host_cli import waiting
from tests.host_kit import HostKit, write_steps
from tests.tui.app_harness import AppUnderTest
from tests.tui.helpers import screen_text, wait_until
from tui_app.host.remote import RemoteRunner


def attached_app(host: HostKit, session: str) -> tuple[AppUnderTest, RemoteRunner]:
    runner = RemoteRunner(session, socket_path=host.socket, start_host=False)
    runner.connect()
    return AppUnderTest(None, runner=runner), runner


async def test_the_tui_answers_through_the_host_and_quitting_detaches(host: HostKit) -> None:
    session = host.new(write_steps(), "make the file")
    waiting(host, 1)
    app, _ = attached_app(host, session)
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: app.dialog, "the approval dialog of the waiting request")
        assert "make the file" in screen_text(app) or app.events_of("TurnStarted")
        await pilot.press("y")
        await wait_until(pilot, lambda: (host.project / "out.txt").exists(), "the file to be written")
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the end of the turn")
    app.close_runtime()
    resolved = [e for e in host.events(session) if e["type"] == "PermissionResolved"]
    assert [(e["decision"], e["client"].split(":")[0]) for e in resolved] == [("allow", "tui")]
    host.wait(lambda: host.row(session)["clients"] == 0, "the TUI to detach")
    assert host.row(session)["state"] == "idle"  # the session goes on
    host.vigil("send", session, "still there?")


async def test_a_tui_and_a_cli_answer_at_once_one_resolution_names_the_winner(host: HostKit) -> None:
    session = host.new(write_steps())
    request = waiting(host, 1)[0]["id"]
    app, _ = attached_app(host, session)
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: app.dialog, "the approval dialog")
        other = asyncio.create_task(
            asyncio.to_thread(host.vigil, "answer", request, "deny", "--feedback", "no", check=False)
        )
        await pilot.press("y")
        cli = await other
        await wait_until(pilot, lambda: app.events_of("PermissionResolved"), "the resolution on the screen")
        await wait_until(pilot, lambda: app.dialog is None, "the dialog to close")
        shown = app.events_of("PermissionResolved")
    app.close_runtime()
    resolved = [e for e in host.events(session) if e["type"] == "PermissionResolved"]
    assert len(resolved) == 1 and len(shown) == 1
    winner = resolved[0]["client"]
    assert shown[0].client == winner
    if winner.startswith("cli:"):
        assert cli.returncode == 0 and resolved[0]["decision"] == "deny"
        assert not (host.project / "out.txt").exists()
    else:
        assert winner.startswith("tui:") and cli.returncode == 1 and f"settled by {winner}" in cli.stderr
        assert (host.project / "out.txt").exists()


async def test_an_answer_from_another_client_closes_the_dialog_saying_who(host: HostKit) -> None:
    session = host.new(write_steps())
    request = waiting(host, 1)[0]["id"]
    app, _ = attached_app(host, session)
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: app.dialog, "the approval dialog")
        await asyncio.to_thread(host.vigil, "answer", request, "deny")
        await wait_until(pilot, lambda: app.dialog is None, "the dialog to close")
        await wait_until(
            pilot,
            lambda: (
                any("Another client (cli:" in n for n in app.notifications())
                or "Another client (cli:" in screen_text(app)
            ),
            "who answered",
        )
    app.close_runtime()
    assert json.dumps(host.events(session)).count('"PermissionResolved"') == 1


async def test_ending_the_session_from_the_palette_ends_it_in_the_host(host: HostKit) -> None:
    session = host.new([{"text": "Hello."}], "hi")
    host.wait(lambda: host.row(session)["state"] == "idle", "the first turn")
    app, _ = attached_app(host, session)
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: app.events_of("TurnEnded"), "the replayed turn")
        from tui_app.app.commands import commands

        entries = {name: callback for name, callback, _ in commands(app.main)}
        assert "Quit Vigil" not in entries and "Detach (quit Vigil)" in entries
        await entries["End the session"]()
        await pilot.pause()
    app.close_runtime()
    assert host.row(session)["state"] == "ended"
    assert [e["type"] for e in host.events(session)][-1] == "SessionEnded"
