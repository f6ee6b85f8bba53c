"""The approval race with real PermissionRequest hook processes and a client on another thread:
who answers first wins, the loser is cancelled, and what was approved is exactly what runs."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import replace

import pytest

from tests.fakes import Recorder, make_env
from tests.hook_helpers import SESSION, handler, live_members, make_hooks, one, script
from tests.perm_specs import BASH, DEPLOY, MCP_READ, RAN, BashInput, record
from tests.waiting import DEADLINE_S
from tui_app.runtime.contract import ApprovalPreview, PermissionSpec, ToolSpec
from tui_app.runtime.executor import TurnControl, run_batch
from tui_app.runtime.permissions.broker import ApprovalAnswer, ApprovalBroker, ApprovalRequest
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule
from tui_app.runtime.pipeline import ToolCall, run_call


@pytest.fixture(autouse=True)
def _clear_ran():
    RAN.clear()


def hook_answer(behavior: str, **decision) -> dict:
    output = {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                     "decision": {"behavior": behavior, **decision}}}
    return handler(script("respond.py", json.dumps(output)))


def slow_hook_answer(seconds: float, behavior: str, pids=None) -> dict:
    output = json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                "decision": {"behavior": behavior}}})
    record_pid = f"echo $$ > {pids}; " if pids else ""
    return handler(f"cat > /dev/null; {record_pid}sleep {seconds}; echo '{output}'")


def setup(tmp_path, hooks_config=None, interactive=True, rules=None, specs=(BASH,), timeout_s=None,
          source="session"):
    loaded = [make_rule(t, b, source) for b, ts in (rules or {}).items() for t in ts]
    policy = RulePolicy(cwd=str(tmp_path), rules=loaded,
                        destinations={"localSettings": tmp_path / ".vigil" / "settings.local.json"})
    broker = ApprovalBroker(interactive=interactive, timeout_s=timeout_s)
    env, rec = make_env(*specs, policy=policy, broker=broker, cwd=str(tmp_path))
    if hooks_config is not None:
        env.hooks, _ = make_hooks(hooks_config, tmp_path, recorder=rec)
    return env, rec, broker


class Client(threading.Thread):
    """What the TUI does: watch `pending()`, answer one request from another thread."""

    def __init__(self, broker: ApprovalBroker, decide, delay: float = 0.0, wait_for=None) -> None:
        super().__init__(daemon=True)
        self.broker, self.decide, self.delay, self.wait_for = broker, decide, delay, wait_for
        self.results: list[bool] = []
        self.seen: list[ApprovalRequest] = []

    def run(self) -> None:
        deadline = time.monotonic() + DEADLINE_S
        while not self.broker.pending() and time.monotonic() < deadline:
            time.sleep(0.002)
        if not self.broker.pending():
            return
        request = self.broker.pending()[0]
        self.seen.append(request)
        if self.wait_for is not None:
            self.wait_for.wait(DEADLINE_S)
        time.sleep(self.delay)
        self.results.append(self.broker.answer(request.request_id, self.decide(request)))


def allow(request: ApprovalRequest, **kw) -> ApprovalAnswer:
    return ApprovalAnswer("allow", input_sha256=request.input_sha256, **kw)


def resolved(rec: Recorder) -> list:
    return rec.of("PermissionResolved")


async def test_the_user_answers_before_the_hook_and_the_hook_is_cancelled(tmp_path):
    pids = tmp_path / "pid"
    env, rec, broker = setup(tmp_path, one("PermissionRequest", slow_hook_answer(30, "deny", pids)))
    client = Client(broker, allow, delay=0.2)
    client.start()
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    client.join()
    assert out.type == "ToolCallResult" and RAN == [("Bash", {"command": "make"})]
    [decision] = resolved(rec)
    assert (decision.decided_by, decision.decision) == ("user", "allow") and client.results == [True]
    assert [e.status for e in rec.of("HookRun")] == ["started", "cancelled"]
    assert live_members(int(pids.read_text())) == []  # the loser's process group is gone


async def test_the_user_answers_while_the_hook_runs(tmp_path):
    env, rec, broker = setup(tmp_path, one("PermissionRequest", slow_hook_answer(1.5, "allow")))
    started = threading.Event()

    def emit(event):
        if event.type == "HookRun" and event.status == "started":
            started.set()
        return rec(event)

    env.emit = emit
    env.hooks.emit = emit
    client = Client(broker, lambda r: ApprovalAnswer("deny", input_sha256=r.input_sha256), delay=0.3, wait_for=started)
    client.start()
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    client.join()
    assert (out.code, RAN) == ("user_denied", [])
    assert [(d.decided_by, d.decision) for d in resolved(rec)] == [("user", "deny")]


async def test_a_hook_answering_first_closes_the_request_and_a_late_user_answer_is_refused(tmp_path):
    env, rec, broker = setup(tmp_path, one("PermissionRequest", hook_answer("allow")))
    seen: list[ApprovalRequest] = []
    original_decide = broker.decide

    async def spy(request, announce, hook=None):
        seen.append(request)
        return await original_decide(request, announce, hook)

    broker.decide = spy  # type: ignore[method-assign]
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert out.type == "ToolCallResult" and [d.decided_by for d in resolved(rec)] == ["hook"]
    late = await asyncio.to_thread(broker.answer, seen[0].request_id, ApprovalAnswer(
        "deny", input_sha256=seen[0].input_sha256))
    assert late is False and broker.pending() == [] and len(resolved(rec)) == 1
    assert RAN == [("Bash", {"command": "make"})]


async def test_a_hook_with_no_decision_leaves_it_to_the_user(tmp_path):
    env, rec, broker = setup(tmp_path, one("PermissionRequest", handler(script("respond.py", "looked at it"))))
    client = Client(broker, allow, delay=0.5)
    client.start()
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    client.join()
    assert out.type == "ToolCallResult" and [d.decided_by for d in resolved(rec)] == ["user"]


async def test_an_answer_given_inside_the_announcement_is_not_lost(tmp_path):
    env, rec, broker = setup(tmp_path)
    answers = []

    def emit(event):
        rec(event)
        if event.type == "PermissionRequested":  # a client that answers the instant it is told
            answers.append(broker.answer(event.request_id, ApprovalAnswer("allow", input_sha256=event.input_sha256)))
        return event

    env.emit = emit
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert answers == [True] and out.type == "ToolCallResult"


async def test_an_answer_must_echo_the_hash_of_what_was_shown(tmp_path):
    env, rec, broker = setup(tmp_path)
    results = []

    def decide(request):
        results.append(broker.answer(request.request_id, ApprovalAnswer("allow", input_sha256="0" * 64)))
        results.append(broker.answer(request.request_id, ApprovalAnswer("allow")))  # no hash at all
        return allow(request)

    client = Client(broker, decide)
    client.start()
    await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    client.join()
    assert results + client.results == [False, False, True]
    requested = rec.of("PermissionRequested")[0]
    assert requested.input_sha256 == client.seen[0].input_sha256 and requested.preview == "make"


def _previewed_bash(captured: dict) -> ToolSpec:
    async def preview(data, ctx):
        captured["data"] = data
        return ApprovalPreview(summary="Run", kind="command", body=data["command"])

    return ToolSpec(name="Bash", description="b", handler=record, input_model=BashInput,
                    permission=PermissionSpec(kind="bash", rule_key="command"), prepare_approval=preview)


async def test_a_client_scribbling_on_its_copy_of_the_request_changes_nothing_that_runs(tmp_path):
    env, _rec, broker = setup(tmp_path, specs=(_previewed_bash({}),))

    def decide(request):
        request.input["command"] = "rm -rf /"  # the client's copy, not what the runtime holds
        return allow(request)

    client = Client(broker, decide)
    client.start()
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    client.join()
    assert client.results == [True]
    assert out.type == "ToolCallResult" and RAN == [("Bash", {"command": "make"})]


async def test_approve_a_run_b_is_refused(tmp_path):
    captured: dict = {}
    env, _rec, broker = setup(tmp_path, specs=(_previewed_bash(captured),))

    def decide(request):
        captured["data"]["command"] = "rm -rf ~"  # something changing the live input while the dialog is open
        return allow(request)

    client = Client(broker, decide)
    client.start()
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    client.join()
    assert client.results == [True]
    assert (out.code, RAN) == ("permission_denied", []) and "changed after it was approved" in out.message


async def test_always_allow_saves_the_shown_rule_and_takes_effect_at_once(tmp_path):
    env, rec, broker = setup(tmp_path)
    client = Client(broker, lambda r: allow(r, always=True))
    client.start()
    await run_call(ToolCall("t1", "Bash", {"command": "npm run lint"}), env)
    client.join()
    [decision] = resolved(rec)
    assert decision.saved_rules == ["Bash(npm run lint)"] == rec.of("PermissionRequested")[0].suggested_rules
    saved = json.loads((tmp_path / ".vigil" / "settings.local.json").read_text())
    assert saved == {"permissions": {"allow": ["Bash(npm run lint)"]}}
    await run_call(ToolCall("t2", "Bash", {"command": "npm run lint"}), env)  # no client now: must not ask
    assert len(rec.of("PermissionRequested")) == 1 and len(RAN) == 2


async def test_hook_updated_permissions_go_to_their_destination(tmp_path):
    rules = [{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "make *"}], "behavior": "allow",
              "destination": "localSettings"},
             {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "curl *"}], "behavior": "deny",
              "destination": "session"}]
    env, rec, _ = setup(tmp_path, one("PermissionRequest", hook_answer("allow", updatedPermissions=rules)),
                        interactive=False)
    await run_call(ToolCall("t1", "Bash", {"command": "make all"}), env)
    assert resolved(rec)[0].saved_rules == ["Bash(make *)", "Bash(curl *)"]
    saved = json.loads((tmp_path / ".vigil" / "settings.local.json").read_text())
    assert saved == {"permissions": {"allow": ["Bash(make *)"]}}
    out = await run_call(ToolCall("t2", "Bash", {"command": "curl x"}), env)
    assert out.code == "permission_denied"
    await run_call(ToolCall("t3", "Bash", {"command": "make test"}), env)
    assert [r[1]["command"] for r in RAN] == ["make all", "make test"]


async def test_hook_updates_set_the_mode_add_directories_and_say_what_they_did_not_apply(tmp_path):
    other = tmp_path / "shared-lib"
    other.mkdir()
    updates = [{"type": "setMode", "mode": "acceptEdits", "destination": "session"},
               {"type": "addDirectories", "directories": [str(other)], "destination": "session"},
               {"type": "grantEverything", "destination": "session"}]
    env, rec, _ = setup(tmp_path, one("PermissionRequest", hook_answer("allow", updatedPermissions=updates)),
                        interactive=False)
    await run_call(ToolCall("t1", "Bash", {"command": "make all"}), env)
    assert [r[1]["command"] for r in RAN] == ["make all"]
    assert env.policy.mode == "acceptEdits"
    [changed] = rec.of("PermissionModeChanged")
    assert (changed.mode, changed.previous) == ("acceptEdits", "default")
    assert str(other) in env.policy.workdirs
    [warning] = [w for w in rec.of("Warning") if w.code == "permission_update_not_applied"]
    assert "'grantEverything' was not applied" in warning.message


async def test_hook_updates_remove_and_replace_rules_in_their_files(tmp_path):
    settings = tmp_path / ".vigil" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "keep-me", "permissions": {
        "allow": ["Bash(make *)", "Bash(npm test)"], "deny": ["Bash(curl *)", "Bash(wget *)"]}}))
    updates = [{"type": "removeRules", "rules": [{"toolName": "Bash", "ruleContent": "make *"}], "behavior": "allow",
                "destination": "localSettings"},
               {"type": "replaceRules", "rules": [{"toolName": "Bash", "ruleContent": "rm *"}], "behavior": "deny",
                "destination": "localSettings"}]
    env, rec, _ = setup(tmp_path, one("PermissionRequest", hook_answer("allow", updatedPermissions=updates)),
                        interactive=False, rules={"allow": ["Bash(make *)", "Bash(npm test)"],
                                                  "deny": ["Bash(curl *)", "Bash(wget *)"]}, source=str(settings))
    await run_call(ToolCall("t1", "Bash", {"command": "cargo build"}), env)  # asks: the hook answers
    assert resolved(rec)[0].saved_rules == ["Bash(rm *)"]
    assert json.loads(settings.read_text()) == {"model": "keep-me", "permissions": {
        "allow": ["Bash(npm test)"], "deny": ["Bash(rm *)"]}}
    assert (await run_call(ToolCall("t2", "Bash", {"command": "rm -rf build"}), env)).code == "permission_denied"
    RAN.clear()
    await run_call(ToolCall("t3", "Bash", {"command": "curl x"}), env)  # no longer denied: the hook allows it
    await run_call(ToolCall("t4", "Bash", {"command": "make all"}), env)  # no longer allowed by a rule: asks
    assert [r[1]["command"] for r in RAN] == ["curl x", "make all"]
    assert len(rec.of("PermissionRequested")) == 3


async def test_deny_with_feedback_reaches_the_model(tmp_path):
    env, rec, broker = setup(tmp_path)
    client = Client(broker, lambda r: ApprovalAnswer("deny", input_sha256=r.input_sha256,
                                                     feedback="use make test instead"))
    client.start()
    out = await run_call(ToolCall("t1", "Bash", {"command": "make all"}), env)
    client.join()
    assert out.code == "user_denied" and RAN == []
    assert out.model_content == "The user denied this Bash call; it was not run. The user said: use make test instead"
    assert resolved(rec)[0].feedback == "use make test instead"


async def test_a_hook_deny_with_interrupt_stops_the_turn(tmp_path):
    env, _rec, _ = setup(tmp_path, one("PermissionRequest", hook_answer("deny", message="frozen", interrupt=True)))
    calls = [ToolCall("t1", "Bash", {"command": "make"}), ToolCall("t2", "Bash", {"command": "make test"})]
    outcomes = await run_batch(calls, env, TurnControl())
    assert (outcomes[0].code, outcomes[0].model_content, outcomes[0].stop_turn) == ("hook_denied", "frozen", True)
    assert outcomes[1].code == "turn_stopped" and RAN == []


@pytest.mark.parametrize("interactive, expected", [(False, "no_permission_client"), (True, "user_denied")])
async def test_an_always_ask_tool_is_asked_even_when_a_hook_allows(tmp_path, interactive, expected):
    env, _rec, broker = setup(tmp_path, one("PermissionRequest", hook_answer("allow")), interactive=interactive,
                             specs=(DEPLOY,))
    client = Client(broker, lambda r: ApprovalAnswer("deny", input_sha256=r.input_sha256))
    if interactive:
        client.start()
    out = await run_call(ToolCall("t1", "Deploy", {"target": "prod"}), env)
    if interactive:
        client.join()
    assert out.code == expected and RAN == []


async def test_headless_hooks_decide_otherwise_deny(tmp_path):
    env, rec, _ = setup(tmp_path, one("PermissionRequest", hook_answer("allow"), matcher="Bash"), interactive=False,
                        specs=(BASH, MCP_READ))
    assert (await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)).type == "ToolCallResult"
    out = await run_call(ToolCall("t2", MCP_READ.name, {"path": "a"}), env)
    assert out.code == "no_permission_client" and out.message == "No permission client configured"
    assert [d.decided_by for d in resolved(rec)] == ["hook", "no_client"]


async def test_a_permission_hook_rewrite_is_checked_against_the_rules(tmp_path):
    env, rec, _ = setup(tmp_path, one("PermissionRequest", hook_answer("allow", updatedInput={"command": "curl x"})),
                        interactive=False, rules={"deny": ["Bash(curl *)"]})
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert out.code == "permission_denied" and RAN == []
    assert [(d.decision, d.decided_by) for d in resolved(rec)] == [("deny", "rule")]


async def test_a_permission_hook_rewrite_that_hits_an_ask_rule_goes_to_the_user(tmp_path):
    env, rec, broker = setup(tmp_path, one("PermissionRequest", hook_answer("allow", updatedInput={
        "command": "git push origin"})), rules={"ask": ["Bash(git push *)"]})
    out = await asyncio.gather(run_call(ToolCall("t1", "Bash", {"command": "make"}), env),
                               asyncio.to_thread(_answer_second_request, broker))
    assert out[0].type == "ToolCallResult" and RAN == [("Bash", {"command": "git push origin"})]
    assert [(d.decision, d.decided_by) for d in resolved(rec)] == [("allow", "hook"), ("allow", "user")]
    assert [r.input["command"] for r in rec.of("PermissionRequested")] == ["make", "git push origin"]


def _answer_second_request(broker: ApprovalBroker) -> bool:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        for request in broker.pending():
            if request.input["command"] == "git push origin":
                return broker.answer(request.request_id, allow(request))
        time.sleep(0.005)
    return False


async def test_the_notification_hook_fires_when_a_prompt_opens(tmp_path):
    log = tmp_path / "log.jsonl"
    env, _rec, broker = setup(tmp_path, one("Notification", handler(script("record.py", log)),
                                           matcher="permission_prompt"))
    client = Client(broker, allow, delay=0.3)
    client.start()
    await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    client.join()
    await env.hooks.session_end(SESSION, "exit")
    [seen] = [json.loads(line) for line in log.read_text().splitlines()]
    assert seen["stdin"]["notification_type"] == "permission_prompt" and "Bash" in seen["stdin"]["message"]


async def test_an_approval_timeout_is_off_by_default_and_denies_when_set(tmp_path):
    assert ApprovalBroker(interactive=True).timeout_s is None
    env, rec, _ = setup(tmp_path, timeout_s=0.2)
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert out.code == "permission_denied" and RAN == []
    assert resolved(rec)[0].decided_by == "timeout"


async def test_an_interrupt_while_waiting_resolves_the_request_and_runs_nothing(tmp_path):
    pids = tmp_path / "pid"
    env, rec, broker = setup(tmp_path, one("PermissionRequest", slow_hook_answer(30, "allow", pids)))
    control = TurnControl()
    batch = asyncio.ensure_future(run_batch([ToolCall("t1", "Bash", {"command": "make"})], env, control))
    while not pids.exists() or not pids.read_text().strip():
        await asyncio.sleep(0.01)
    request = broker.pending()[0]
    control.abort()
    [out] = await batch
    assert out.code == "cancelled" and RAN == [] and broker.pending() == []
    assert [(d.decision, d.decided_by) for d in resolved(rec)] == [("deny", "turn")]
    assert broker.answer(request.request_id, allow(request)) is False
    assert live_members(int(pids.read_text())) == []


async def test_many_pending_requests_answered_from_many_threads(tmp_path):
    env, rec, broker = setup(tmp_path, specs=(MCP_READ,))
    calls = [ToolCall(f"t{i}", MCP_READ.name, {"path": str(i)}) for i in range(6)]
    batch = asyncio.ensure_future(run_batch(calls, env, TurnControl()))
    while len(broker.pending()) < 6:
        await asyncio.sleep(0.005)
    requests = broker.pending()
    assert [r.call_id for r in requests] == [c.id for c in calls]  # oldest first

    def answer_twice(request):  # two clients race for the same request: exactly one wins
        decision = "allow" if int(request.input["path"]) % 2 else "deny"
        answer = replace(allow(request), decision=decision)
        return [broker.answer(request.request_id, answer), broker.answer(request.request_id, answer)]

    results = await asyncio.gather(*(asyncio.to_thread(answer_twice, r) for r in requests))
    await batch
    assert all(sorted(r) == [False, True] for r in results)
    assert sorted(int(data["path"]) for _, data in RAN) == [1, 3, 5]
    assert sorted(d.request_id for d in resolved(rec)) == sorted(r.request_id for r in requests)


async def test_a_plain_allow_saves_no_rule_and_a_plain_deny_lets_the_turn_go_on(tmp_path):
    env, _rec, broker = setup(tmp_path)
    client = Client(broker, allow)
    client.start()
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    client.join()
    assert out.type == "ToolCallResult" and RAN == [("Bash", {"command": "make"})]
    assert env.policy.rules("allow") == [] and not (tmp_path / ".vigil").exists()  # "yes" is not "always"

    client = Client(broker, lambda r: ApprovalAnswer("deny", input_sha256=r.input_sha256))
    client.start()
    outcomes = await run_batch([ToolCall("t2", "Bash", {"command": "make install"}),
                                ToolCall("t3", "Bash", {"command": "ls"})], env, TurnControl())
    client.join()
    assert outcomes[0].code == "user_denied" and not outcomes[0].stop_turn
    assert outcomes[1].type == "ToolCallResult"  # the next call still runs: a "no" is not "stop"


def test_the_hash_a_client_echoes_does_not_depend_on_key_order_and_is_of_utf8_json():
    """What a client in another language computes: sorted keys, compact separators, UTF-8."""
    import hashlib

    from tui_app.runtime.permissions.broker import input_sha256

    assert input_sha256({"b": 1, "a": "café"}) == input_sha256({"a": "café", "b": 1}) == hashlib.sha256(
        '{"a":"café","b":1}'.encode()).hexdigest()


async def test_an_answered_request_leaves_the_list_at_once(tmp_path):
    env, _rec, broker = setup(tmp_path)
    seen = []

    def decide(request):
        return allow(request)

    class Watching(Client):
        def run(self) -> None:
            super().run()
            seen.append(self.broker.pending())  # right after the answer, before the runtime wakes

    client = Watching(broker, decide)
    client.start()
    await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    client.join()
    assert client.results == [True] and seen == [[]]


@pytest.mark.parametrize("answer", ["allow", "deny"])
async def test_a_failed_approval_preview_still_asks_and_shows_the_exact_input(tmp_path, answer):
    async def broken(data, ctx):
        raise RuntimeError("the diff could not be computed")

    env, rec, broker = setup(tmp_path, specs=(replace(BASH, prepare_approval=broken),))
    client = Client(broker, lambda r: ApprovalAnswer(answer, input_sha256=r.input_sha256))
    client.start()
    out = await run_call(ToolCall("t1", "Bash", {"command": "make\x1b[2Jall"}), env)
    client.join()
    (warning,) = [w for w in rec.of("Warning") if w.code == "preview_failed"]
    assert "the diff could not be computed" in warning.message
    (asked,) = rec.of("PermissionRequested")
    assert asked.preview_kind == "json" and json.loads(asked.preview) == {"command": "make\x1b[2Jall"}
    assert "\x1b" not in asked.summary and asked.summary.startswith("Bash make")
    if answer == "allow":
        assert out.type == "ToolCallResult" and RAN == [("Bash", {"command": "make\x1b[2Jall"})]
    else:
        assert out.code == "user_denied" and RAN == []


async def test_a_headless_run_takes_no_answer_but_its_hooks_while_one_runs(tmp_path):
    """Nothing but a hook may approve a headless call: an answer slipped in while the hook thinks is refused."""
    gate = tmp_path / "gate"  # the hook answers only after the client has tried
    output = json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                "decision": {"behavior": "deny"}}})
    hook = handler(f"cat > /dev/null; while [ ! -e {gate} ]; do sleep 0.02; done; echo '{output}'")
    env, _rec, broker = setup(tmp_path, one("PermissionRequest", hook), interactive=False)
    client = Client(broker, allow)
    client.start()
    call = asyncio.ensure_future(run_call(ToolCall("t1", "Bash", {"command": "make"}), env))
    await asyncio.to_thread(client.join)
    gate.touch()
    out = await asyncio.wait_for(call, 60)
    assert client.results == [False] and client.seen  # it saw the request, and its answer did not count
    assert out.code == "hook_denied" and RAN == []
    assert broker.pending() == []


@pytest.mark.parametrize("rewrite, why", [
    ({"command": 5}, "command"),  # not the tool's input
    ({"command": "make", "run_in_background": "yes please"}, "run_in_background"),
])
async def test_a_hook_rewrite_that_is_not_valid_input_is_refused_and_nothing_runs(tmp_path, rewrite, why):
    env, rec, _ = setup(tmp_path, one("PermissionRequest", hook_answer("allow", updatedInput=rewrite)),
                        interactive=False)
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert out.type == "ToolCallError" and RAN == []
    (denied,) = resolved(rec)
    assert (denied.decision, denied.decided_by) == ("deny", "hook")
    assert denied.reason.startswith("The hook's rewritten input was rejected:") and why in denied.reason


async def test_a_broker_made_without_saying_is_headless_and_denies(tmp_path):
    """An embedding program that forgets to wire a client gets denials, never a silent allow."""
    policy = RulePolicy(cwd=str(tmp_path))
    env, _rec = make_env(BASH, policy=policy, broker=ApprovalBroker(), cwd=str(tmp_path))
    out = await run_call(ToolCall("t1", "Bash", {"command": "make"}), env)
    assert out.code == "no_permission_client" and RAN == []
