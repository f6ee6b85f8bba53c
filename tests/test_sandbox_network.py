"""The sandbox's way out: a sandboxed command reaches a host only through Vigil's proxy, which lets
allowed domains through, blocks denied ones, and asks the user — once per host — about the rest.
Real curl inside real bubblewrap, a real HTTP server on a loopback address, an interactive broker
answered the way the dialog answers."""

from __future__ import annotations

import json

import pytest

from tests.needs import need_program
from tests.sec_kit import Tripwire, attack_settings, attempt, canary_root, isolate, make_canary, open_session
from tui_app.runtime.permissions.broker import ApprovalAnswer

__all__ = ["canary_root"]


@pytest.fixture(autouse=True)
def _needs():
    need_program("bwrap")
    need_program("socat")
    need_program("curl")


@pytest.fixture
def tripwire():
    wire = Tripwire()
    yield wire
    wire.close()


class Answering:
    """Answers every network question the session asks, and remembers them."""

    def __init__(self, session, decision: str, always: bool = False) -> None:
        self.asked: list = []
        self.resolved: list = []

        def on_event(event) -> None:
            if event.type == "PermissionRequested" and "network_host" in event.input:
                self.asked.append(event)
                session.broker.answer(event.request_id, ApprovalAnswer(
                    decision, input_sha256=event.input_sha256, always=always))  # type: ignore[arg-type]
            elif event.type == "PermissionResolved" and event.request_id:
                self.resolved.append(event)

        session.subscribe(on_event)


async def session_with(canary_root, monkeypatch, **sandbox):
    canary = make_canary(canary_root, attack_settings(enabled=True, **sandbox))
    isolate(monkeypatch, canary)
    return canary, await open_session(canary, interactive=True)


@pytest.mark.parametrize("tunnel", ["", "--proxytunnel "], ids=["http", "connect"])
async def test_a_new_host_is_asked_about_once_and_always_saves_a_rule(canary_root, monkeypatch, tripwire, tunnel):
    canary, session = await session_with(canary_root, monkeypatch)
    answers = Answering(session, "allow", always=True)
    try:
        first = await attempt(session, canary, "Bash", {"command": f"curl -sf {tunnel}{tripwire.url}/first"})
        second = await attempt(session, canary, "Bash", {"command": f"curl -sf {tunnel}{tripwire.url}/second"})
    finally:
        await session.close()
    assert first.sandboxed and "tripped" in first.text(), first.describe()
    assert "tripped" in second.text(), second.describe()
    assert tripwire.hits == ["/first", "/second"]
    assert [a.input["network_host"] for a in answers.asked] == [tripwire.host]  # once
    assert answers.asked[0].sandboxed and answers.asked[0].call_id == first.outcome.call_id
    rule = f"WebFetch(domain:{tripwire.host})"
    assert answers.resolved[0].saved_rules == [rule]
    saved = json.loads((canary.proj / ".vigil" / "settings.local.json").read_text())
    assert rule in saved["permissions"]["allow"]


async def test_a_host_the_user_refuses_stays_blocked_and_the_result_says_so(canary_root, monkeypatch, tripwire):
    canary, session = await session_with(canary_root, monkeypatch)
    answers = Answering(session, "deny")
    try:
        found = await attempt(session, canary, "Bash", {"command": f"curl -sf {tripwire.url}/x"})
    finally:
        await session.close()
    assert tripwire.hits == [] and len(answers.asked) == 1
    assert f"blocked network access to {tripwire.host}" in found.text(), found.describe()


async def test_allowed_domains_pass_without_a_question(canary_root, monkeypatch, tripwire):
    canary, session = await session_with(canary_root, monkeypatch, network={"allowedDomains": [tripwire.host]})
    answers = Answering(session, "deny")
    try:
        found = await attempt(session, canary, "Bash", {"command": f"curl -sf {tripwire.url}/ok"})
    finally:
        await session.close()
    assert "tripped" in found.text() and tripwire.hits == ["/ok"] and answers.asked == []


async def test_a_webfetch_deny_rule_blocks_without_a_question(canary_root, monkeypatch, tripwire):
    settings = attack_settings(enabled=True, network={"allowedDomains": [tripwire.host]})
    settings["permissions"]["deny"].append(f"WebFetch(domain:{tripwire.host})")
    canary = make_canary(canary_root, settings)
    isolate(monkeypatch, canary)
    session = await open_session(canary, interactive=True)
    answers = Answering(session, "allow")
    try:
        found = await attempt(session, canary, "Bash", {"command": f"curl -sf {tripwire.url}/no"})
    finally:
        await session.close()
    assert tripwire.hits == [] and answers.asked == [], found.describe()


async def test_a_webfetch_allow_rule_opens_the_host_to_commands_too(canary_root, monkeypatch, tripwire):
    settings = attack_settings(enabled=True)
    settings["permissions"]["allow"].append(f"WebFetch(domain:{tripwire.host})")
    canary = make_canary(canary_root, settings)
    isolate(monkeypatch, canary)
    session = await open_session(canary, interactive=True)
    answers = Answering(session, "deny")
    try:
        found = await attempt(session, canary, "Bash", {"command": f"curl -sf {tripwire.url}/rule"})
    finally:
        await session.close()
    assert "tripped" in found.text() and answers.asked == []
