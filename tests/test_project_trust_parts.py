"""The parts of trust before code, on their own: the fingerprint of a project's files, the store
of answers, which settings may trust what, and the question a session asks and waits on. Real
files; the session is a recorder."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from tui_app.project_trust import (
    TRUST_ENV,
    ProjectTrust,
    Runnable,
    TrustStore,
    decide_trust,
    fingerprint,
    project_files,
    truthy,
    user_mcp_choices,
)

HOOK = Runnable("hook", "SessionStart", "touch x", "/p/.claude/settings.json")
SERVER = Runnable("mcp", "helper", "npx helper", "/p/.mcp.json")
OTHER = Runnable("mcp", "other", "npx other", "/p/.mcp.json")


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)


class Recorder:
    def __init__(self) -> None:
        self.events: list = []

    def emit(self, event) -> None:
        self.events.append(event)


def test_the_fingerprint_changes_with_every_file_that_can_run_something(tmp_path):
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".vigil").mkdir()
    script = project / "tools" / "guard.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    seen = {fingerprint(str(project), [str(script)])}
    for rel in [".mcp.json", ".claude/settings.json", ".claude/settings.local.json", ".vigil/settings.json",
                ".vigil/settings.local.json", "tools/guard.sh"]:
        (project / rel).write_text(f"changed {rel}")
        seen.add(fingerprint(str(project), [str(script)]))
    assert len(seen) == 7
    # an empty file is not a missing one, and the same content under another name is another project
    (project / "tools" / "empty.sh").write_text("")
    assert fingerprint(str(project), [str(project / "tools" / "empty.sh")]) != fingerprint(
        str(project), [str(project / "tools" / "missing.sh")])
    assert fingerprint(str(project), [str(script)]) == fingerprint(str(project), [str(script), str(script)])
    assert fingerprint(str(project)) != fingerprint(str(project), [str(script)])
    twin = project / "tools" / "twin.sh"
    twin.write_text(script.read_text())  # the same script under another name is another script
    assert fingerprint(str(project), [str(script)]) != fingerprint(str(project), [str(twin)])
    assert [os.path.relpath(p, project) for p in project_files(str(project))] == [
        ".mcp.json", ".claude/settings.json", ".claude/settings.local.json", ".vigil/settings.json",
        ".vigil/settings.local.json"]


def test_a_file_moved_between_two_places_is_a_change(tmp_path):
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text("{}")
    before = fingerprint(str(project))
    (project / ".claude" / "settings.json").rename(project / ".claude" / "settings.local.json")
    assert fingerprint(str(project)) != before


def test_the_store_remembers_a_project_for_one_fingerprint(tmp_path):
    store = TrustStore(tmp_path / "home" / "vigil" / "trust.json")
    assert not store.trusted("/p", "a")
    store.remember("/p", "a")
    store.remember("/q", "b")
    assert store.trusted("/p", "a") and store.trusted("/q", "b")
    assert not store.trusted("/p", "b") and not store.trusted("/r", "a")
    store.remember("/p", "c")
    assert store.trusted("/p", "c") and not store.trusted("/p", "a") and store.trusted("/q", "b")
    data = json.loads((tmp_path / "home" / "vigil" / "trust.json").read_text())
    assert set(data["projects"]) == {"/p", "/q"} and data["projects"]["/p"]["sha256"] == "c"
    assert isinstance(data["projects"]["/p"]["trusted_at"], float)  # when, for the user reading the file
    assert [p.name for p in (tmp_path / "home" / "vigil").iterdir()] == ["trust.json"]  # no temporary file left


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"projects": []}', '{"projects": {"/p": "a"}}'])
def test_a_damaged_store_trusts_nothing_and_is_rewritten(tmp_path, text):
    path = tmp_path / "trust.json"
    path.write_text(text)
    store = TrustStore(path)
    assert not store.trusted("/p", "a")
    store.remember("/p", "a")
    assert store.trusted("/p", "a")


def test_a_store_that_cannot_be_written_raises_and_leaves_nothing(tmp_path):
    (tmp_path / "file").write_text("")
    store = TrustStore(tmp_path / "file" / "trust.json")
    with pytest.raises(OSError):
        store.remember("/p", "a")


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    store = TrustStore(tmp_path / "trust.json")

    def fail(*_args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        store.remember("/p", "a")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("value", "expected"), [
    ("1", True), ("true", True), ("YES", True), (" on ", True), ("0", False), ("", False), (None, False),
    ("no", False), ("trusted", False)])
def test_the_environment_says_yes_in_the_usual_spellings(value, expected):
    assert truthy(value) is expected


def test_only_the_users_own_settings_choose_mcp_servers():
    project = "/p"
    values = [
        ("/home/u/.claude/settings.json", {"enableAllProjectMcpServers": True, "enabledMcpjsonServers": ["a"]}),
        ("/p/.claude/settings.json", {"enabledMcpjsonServers": ["evil"], "disabledMcpjsonServers": ["a"]}),
        ("/p/.vigil/settings.local.json", {"enableAllProjectMcpServers": True}),
        ("--settings", {"disabledMcpjsonServers": ["b", 3], "enabledMcpjsonServers": "c"}),
    ]
    assert user_mcp_choices(values, project) == (True, frozenset({"a"}), frozenset({"b"}))
    later_off = [*values, ("/home/u/.config/vigil/settings.json", {"enableAllProjectMcpServers": False})]
    assert user_mcp_choices(later_off, project)[0] is False
    assert user_mcp_choices([("/u", {"enableAllProjectMcpServers": "yes"})], project)[0] is False
    assert user_mcp_choices([("/p/.vigil/settings.json", {"enableAllProjectMcpServers": True})], project)[0] is False


def decided(tmp_path, runnables, *, flag=False, values=()):
    project = tmp_path / "p"
    project.mkdir(exist_ok=True)
    return decide_trust(str(project), runnables, [], flag=flag, source_values=values, home=tmp_path / "home")


def test_nothing_to_run_is_nothing_to_ask(tmp_path):
    trust = decided(tmp_path, [])
    assert trust.trusted and not trust.needs_answer and trust.held() == []


def test_untrusted_every_hook_and_server_is_held(tmp_path):
    trust = decided(tmp_path, [HOOK, SERVER])
    assert not trust.trusted and trust.trusted_by == "" and trust.needs_answer
    assert trust.held() == [HOOK, SERVER]
    assert not trust.server_allowed("helper")


@pytest.mark.parametrize(("how", "flag", "env"), [("--trust-project", True, None), (TRUST_ENV, False, "1")])
def test_the_flag_and_the_environment_trust(tmp_path, monkeypatch, how, flag, env):
    if env:
        monkeypatch.setenv(TRUST_ENV, env)
    trust = decided(tmp_path, [HOOK, SERVER], flag=flag)
    assert trust.trusted_by == how and trust.held() == [] and trust.server_allowed("helper")


def test_a_remembered_answer_trusts_the_same_files_only(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    TrustStore(tmp_path / "home" / "trust.json").remember(str(project), fingerprint(str(project)))
    assert decided(tmp_path, [HOOK]).trusted_by == "remembered"
    (project / ".mcp.json").write_text("{}")
    assert decided(tmp_path, [HOOK]).trusted_by == ""


def test_enable_all_starts_the_servers_and_holds_the_hooks(tmp_path):
    values = [("/home/u/.claude/settings.json", {"enableAllProjectMcpServers": True})]
    trust = decided(tmp_path, [HOOK, SERVER, OTHER], values=values)
    assert trust.held() == [HOOK] and trust.needs_answer and not trust.trusted
    assert trust.server_allowed("helper") and trust.server_allowed("other")
    only_servers = decided(tmp_path, [SERVER, OTHER], values=values)
    assert only_servers.held() == [] and not only_servers.needs_answer


def test_a_server_named_like_a_hook_event_starts_no_hook(tmp_path):
    values = [("/home/u/.claude/settings.json", {"enabledMcpjsonServers": ["SessionStart"]})]
    assert decided(tmp_path, [HOOK], values=values).held() == [HOOK]


def test_named_servers_start_and_disabled_ones_never(tmp_path):
    values = [("/home/u/.claude/settings.json", {"enabledMcpjsonServers": ["helper"],
                                                  "disabledMcpjsonServers": ["other"]})]
    trust = decided(tmp_path, [HOOK, SERVER, OTHER], values=values)
    assert trust.held() == [HOOK, OTHER]
    assert trust.server_allowed("helper") and not trust.server_allowed("other")
    trusted = decided(tmp_path, [HOOK, SERVER, OTHER], flag=True, values=values)
    assert trusted.held() == [] and trusted.server_allowed("helper") and not trusted.server_allowed("other")


def test_granting_runs_the_callbacks_and_remembers(tmp_path):
    trust = decided(tmp_path, [HOOK])
    called = []
    trust.on_grant.append(lambda: called.append(1))
    trust.grant(remember=False)
    assert trust.trusted and called == [1] and not (tmp_path / "home" / "trust.json").exists()
    again = decided(tmp_path, [HOOK])
    again.grant()
    assert decided(tmp_path, [HOOK]).trusted_by == "remembered"


async def test_the_start_asks_and_waits_for_the_answer(tmp_path):
    trust = decided(tmp_path, [HOOK, SERVER])
    trust.ask = True
    session = Recorder()
    start = asyncio.ensure_future(trust.astart(session))
    await asyncio.sleep(0.01)
    assert not start.done() and trust.waiting
    asked = [e for e in session.events if e.type == "ProjectTrustAsked"]
    assert len(asked) == 1 and asked[0].project == trust.project and asked[0].sha256 == trust.digest
    assert asked[0].items == [{"kind": "hook", "name": "SessionStart", "command": "touch x",
                               "source": "/p/.claude/settings.json"},
                              {"kind": "mcp", "name": "helper", "command": "npx helper", "source": "/p/.mcp.json"}]
    trust.answer(True, "tui")
    await start
    assert trust.trusted and not trust.waiting
    answered = [e for e in session.events if e.type == "ProjectTrustAnswered"]
    assert [(e.trusted, e.remembered, e.client) for e in answered] == [(True, True, "tui")]
    assert not [e for e in session.events if e.type == "Warning"]
    assert decided(tmp_path, [HOOK, SERVER]).trusted_by == "remembered"


async def test_not_trusting_is_said_once_and_a_closing_session_stops_waiting(tmp_path):
    trust = decided(tmp_path, [HOOK, SERVER])
    trust.ask = True
    session = Recorder()
    start = asyncio.ensure_future(trust.astart(session))
    await asyncio.sleep(0.01)
    trust.answer(False, "tui")
    trust.answer(True, "late")  # nothing waits any more: the first answer stands for the start
    await start
    warnings = [e for e in session.events if e.type == "Warning"]
    assert [w.code for w in warnings] == ["project_untrusted"]
    assert warnings[0].detail["hooks"] == ["touch x"] and warnings[0].detail["mcp_servers"] == ["helper"]
    await trust.astart(session)
    assert len([e for e in session.events if e.type == "Warning"]) == 1

    closing = decided(tmp_path, [HOOK])
    closing.ask = True
    waiting = asyncio.ensure_future(closing.astart(Recorder()))
    await asyncio.sleep(0.01)
    await closing.aclose()
    await asyncio.wait_for(waiting, 5)
    assert not closing.trusted
    await closing.aclose()  # twice is harmless


async def test_a_trust_that_cannot_be_saved_holds_for_the_session(tmp_path):
    (tmp_path / "home").write_text("not a directory")
    trust = decided(tmp_path, [HOOK])
    trust.ask = True
    session = Recorder()
    called = []
    trust.on_grant.append(lambda: called.append(1))
    start = asyncio.ensure_future(trust.astart(session))
    await asyncio.sleep(0.01)
    trust.answer(True)
    await start
    assert trust.trusted and called == [1]
    assert [(e.trusted, e.remembered) for e in session.events if e.type == "ProjectTrustAnswered"] == [(True, False)]


async def test_headless_nobody_is_asked(tmp_path):
    trust = decided(tmp_path, [HOOK])
    session = Recorder()
    await asyncio.wait_for(trust.astart(session), 5)
    assert [e.type for e in session.events] == ["Warning"] and not trust.waiting


def test_a_project_trust_is_a_dataclass_of_its_parts():
    trust = ProjectTrust("/p", "d", [HOOK], TrustStore(os.devnull))  # type: ignore[arg-type]
    assert trust.held() == [HOOK] and not trust.ask
