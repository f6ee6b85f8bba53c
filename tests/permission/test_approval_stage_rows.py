"""The approval stage as a driver calls it (`approve`, as the ACP driver does), one row per answer
a user or a PermissionRequest hook gives, on the real WebFetch spec (its rules are by domain):
what the model reads, what is saved, how long the call waited, what a hook is offered and told,
and what a hook's rewrite leads to. Fast and focused, so `make mutate` reaches them first."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.hook_helpers import handler, script
from tests.perm_specs import WEBFETCH
from tests.permission.approving import allow, answering, deny, setup
from tui_app.runtime.approval_stage import approve
from tui_app.runtime.call import CallState, make_context
from tui_app.runtime.outcome import CallEnded
from tui_app.runtime.permissions.broker import input_sha256
from tui_app.runtime.permissions.decision import PermissionDecision
from tui_app.runtime.pipeline import ToolCall

FETCH = {"url": "http://localhost:8080/notes", "prompt": "summarise"}
ASKED = PermissionDecision("ask", "rule", "WebFetch(domain:localhost) asks",
                           suggested_rules=("WebFetch(domain:localhost)",))


async def approval(tmp_path, decide=None, *, delay: float = 0.0, decision: PermissionDecision = ASKED,
                   data: dict[str, Any] = FETCH, **env_kw: Any):
    """Ask about one WebFetch call; returns (state, recorder, the CallEnded or None, the env)."""
    env, rec, broker = setup(tmp_path, WEBFETCH, **env_kw)
    if decide is not None:
        answering(env, rec, broker, decide, delay)
    state = CallState(ToolCall("t1", "WebFetch", dict(data)), env)
    state.spec, state.input, state.flags = WEBFETCH, dict(data), WEBFETCH.flags_of(data)
    state.ctx = make_context(state)
    try:
        await approve(state, decision)
    except CallEnded as ended:
        return state, rec, ended, env
    return state, rec, None, env


def hook_says(decision: dict[str, Any] | None) -> dict[str, Any]:
    """A PermissionRequest hook process that always gives this decision (None: no decision)."""
    output = json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}
                        ) if decision else "no opinion"
    return {"PermissionRequest": [{"hooks": [handler(script("respond.py", output))]}]}


BASE = "The user denied this WebFetch call; it was not run."


@pytest.mark.parametrize("feedback, told", [
    ("fetch the docs instead", f"{BASE} The user said: fetch the docs instead"),
    (None, f"{BASE} Wait for the user to say how to proceed."),
])
async def test_a_users_no_and_what_the_model_reads(tmp_path, feedback, told):
    _state, _rec, ended, _env = await approval(tmp_path, lambda e: deny(e, feedback=feedback))
    assert (ended.code, ended.message) == ("user_denied", told)


@pytest.mark.parametrize("answer, saved", [
    (lambda e: allow(e), []),  # "yes" is not "always"
    (lambda e: allow(e, always=True), ["WebFetch(domain:localhost)"]),  # the suggested rule
    (lambda e: allow(e, always=True, rules=("WebFetch(domain:*.localhost)",)), ["WebFetch(domain:*.localhost)"]),
    (lambda e: deny(e, always=True), []),  # a "no" never saves an allow rule
])
async def test_what_an_answer_saves(tmp_path, answer, saved):
    _state, rec, _ended, env = await approval(tmp_path, answer)
    assert rec.of("PermissionResolved")[-1].saved_rules == saved
    assert [r.text for r in env.policy.rules("allow")] == saved


async def test_the_wait_for_the_user_is_counted(tmp_path):
    state, rec, ended, _env = await approval(tmp_path, allow, delay=0.1)
    assert ended is None and state.wait_ms >= 99 and rec.of("PermissionResolved")[0].wait_ms == state.wait_ms


@pytest.mark.parametrize("decision, code, told", [
    ({"behavior": "deny", "message": "no fetching today"}, "hook_denied", "no fetching today"),
    ({"behavior": "deny"}, "hook_denied", "Denied by PermissionRequest hook"),
    ({"behavior": "allow"}, None, None),
    (None, "no_permission_client", "No permission client configured"),  # the hook had no opinion
])
async def test_a_headless_permission_hook_decides(tmp_path, decision, code, told):
    state, rec, ended, _env = await approval(tmp_path, interactive=False, hooks_config=hook_says(decision))
    assert ((ended.code, ended.message) if ended else (None, None)) == (code, told)
    assert state.approved_sha256 is (None if ended else state.approved_sha256)
    if ended is None:
        assert [(d.decision, d.decided_by) for d in rec.of("PermissionResolved")] == [("allow", "hook")]


async def test_the_hook_is_offered_the_rules_always_allow_would_save(tmp_path):
    log = tmp_path / "asked.jsonl"
    decision = PermissionDecision("ask", "rule", "asks", suggested_rules=("WebFetch(domain:localhost)", "WebFetch"))
    hooks = {"PermissionRequest": [{"hooks": [handler(script("record.py", log))]}]}
    await approval(tmp_path, decision=decision, interactive=False, hooks_config=hooks)
    (asked,) = [json.loads(line)["stdin"] for line in log.read_text().splitlines()]
    assert asked["permission_suggestions"] == [{"type": "addRules", "rules": [
        {"toolName": "WebFetch", "ruleContent": "domain:localhost"}, {"toolName": "WebFetch"}],
        "behavior": "allow", "destination": "localSettings"}]


async def test_the_notification_hook_hears_which_session_needs_permission(tmp_path):
    log = tmp_path / "notified.jsonl"
    hooks = {"Notification": [{"matcher": "permission_prompt", "hooks": [handler(script("record.py", log))]}]}
    env, rec, broker = setup(tmp_path, WEBFETCH, mode="acceptEdits", hooks_config=hooks)
    env.transcript_path = str(tmp_path / "events.jsonl")
    answering(env, rec, broker, allow)
    state = CallState(ToolCall("t1", "WebFetch", dict(FETCH)), env)
    state.spec, state.input, state.flags = WEBFETCH, dict(FETCH), WEBFETCH.flags_of(FETCH)
    state.ctx = make_context(state)
    await approve(state, ASKED)
    await env.hooks.session_end({}, "exit")  # the notification is not waited for: wait here
    [seen] = [json.loads(line)["stdin"] for line in log.read_text().splitlines()]
    assert {k: seen[k] for k in ("session_id", "transcript_path", "cwd", "permission_mode", "message")} == {
        "session_id": "test", "transcript_path": str(tmp_path / "events.jsonl"), "cwd": str(tmp_path),
        "permission_mode": "acceptEdits", "message": "Vigil needs your permission to use WebFetch"}


ELSEWHERE = {"url": "http://127.0.0.1:8080/notes", "prompt": "summarise"}


@pytest.mark.parametrize("rules, asked_again", [
    ({"allow": ["WebFetch(domain:127.0.0.1)"]}, False),  # the rules allow the rewrite: it goes ahead
    ({"ask": ["WebFetch(domain:127.0.0.1)"]}, True),  # a rule asks about it: the user decides, not the hook
])
async def test_a_hooks_rewrite_is_put_to_the_rules_again(tmp_path, rules, asked_again):
    log = tmp_path / "asked.jsonl"
    output = json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                "decision": {"behavior": "allow", "updatedInput": ELSEWHERE}}})
    hooks = {"PermissionRequest": [{"hooks": [handler(script("record.py", log, output))]}]}
    state, rec, ended, _env = await approval(tmp_path, interactive=False, rules=rules, hooks_config=hooks)
    assert state.input == ELSEWHERE
    assert len(rec.of("PermissionRequested")) == (2 if asked_again else 1)
    assert (ended.code if ended else None) == ("no_permission_client" if asked_again else None)
    assert len(log.read_text().splitlines()) == 1  # the hook was asked once
    if not asked_again:  # what may run is the rewrite (`start` refuses anything else)
        assert state.approved_sha256 == input_sha256(ELSEWHERE)


async def test_a_hooks_rewrite_into_a_deny_rule_is_denied(tmp_path):
    output = json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                "decision": {"behavior": "allow", "updatedInput": ELSEWHERE}}})
    hooks = {"PermissionRequest": [{"hooks": [handler(script("respond.py", output))]}]}
    _state, rec, ended, _env = await approval(tmp_path, interactive=False, hooks_config=hooks,
                                              rules={"deny": ["WebFetch(domain:127.0.0.1)"]})
    assert ended.code == "permission_denied"
    [resolved] = rec.of("PermissionResolved")
    assert (resolved.decision, resolved.decided_by, resolved.rule) == ("deny", "rule", "WebFetch(domain:127.0.0.1)")


async def test_a_users_edit_that_comes_with_a_no_is_not_applied(tmp_path):
    state, _rec, ended, _env = await approval(tmp_path, lambda e: deny(e, updated_input=ELSEWHERE))
    assert ended.code == "user_denied" and state.input == FETCH


async def test_no_answer_in_time_is_a_denial_that_says_so(tmp_path):
    _state, rec, ended, _env = await approval(tmp_path, timeout_s=0.05)
    assert (ended.code, ended.message) == ("permission_denied", "No answer within 0.05s")
    assert [(d.decision, d.decided_by) for d in rec.of("PermissionResolved")] == [("deny", "timeout")]


async def test_the_dialog_shows_the_exact_input_as_indented_json(tmp_path):
    """WebFetch has no preview of its own: the input is shown as written, letters and all."""
    data = {"url": "http://localhost:8080/café", "prompt": "résumé"}
    _state, rec, _ended, _env = await approval(tmp_path, deny, data=data)
    (asked,) = rec.of("PermissionRequested")
    assert (asked.preview_kind, asked.preview) == (
        "json", '{\n  "url": "http://localhost:8080/café",\n  "prompt": "résumé"\n}')


@pytest.mark.parametrize("given, escaped, feedback", [
    ({"escaped": True}, True, None),  # Esc: the ACP driver cancels the agent's turn
    ({"feedback": "not that host"}, False, "not that host"),  # words go with the next prompt
])
async def test_a_driver_learns_how_the_user_answered(tmp_path, given, escaped, feedback):
    state, _rec, ended, _env = await approval(tmp_path, lambda e: deny(e, **given))
    assert ended.code == "user_denied" and (state.answer.escaped, state.answer.feedback) == (escaped, feedback)
