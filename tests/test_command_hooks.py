"""Command hooks with real scripts and real processes: input, environment, exit codes, every JSON
output form, combining several hooks, timeouts that kill the whole group, hooks that cannot start."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from tests.hook_helpers import SESSION, call, handler, live_members, make_hooks, one, script
from tests.waiting import eventually

ALLOW = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}


def respond(output: dict | str = "", code: int = 0, stderr: str = "") -> str:
    text = output if isinstance(output, str) else json.dumps(output)
    return script("respond.py", text, code, stderr) if stderr else script("respond.py", text, code)


def records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def runs(recorder, status=None):
    return [e for e in recorder.of("HookRun") if status is None or e.status == status]


# ---- input, environment, process ------------------------------------------------------------------

async def test_pre_tool_use_input_environment_and_process(tmp_path):
    log = tmp_path / "log.jsonl"
    hooks, rec = make_hooks(one("PreToolUse", handler(script("record.py", log)), matcher="Bash"), tmp_path)
    await hooks.pre_tool_use(call("Bash", {"command": "npm test", "description": "Run tests", "timeout": 120000}))
    [seen] = records(log)
    assert seen["stdin"] == {
        "session_id": "sess-1", "transcript_path": "/tmp/events.jsonl", "cwd": "/tmp", "permission_mode": "default",
        "effort": {"level": "medium"}, "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "npm test", "description": "Run tests", "timeout": 120000},
        "tool_use_id": "toolu_01"}
    assert seen["CLAUDE_PROJECT_DIR"] == seen["VIGIL_PROJECT_DIR"] == str(tmp_path)
    assert seen["cwd"] == str(tmp_path)
    assert seen["pgid"] == seen["pid"] == seen["sid"]  # its own session and process group
    assert seen["has_tty"] is False
    assert [(e.status, e.event) for e in runs(rec)] == [("started", "PreToolUse"), ("ok", "PreToolUse")]
    assert runs(rec)[1].exit_code == 0 and runs(rec)[1].call_id == "toolu_01"


@pytest.mark.parametrize("event, invoke, fields", [
    ("PermissionRequest", lambda h: h.permission_request(call(), [{"type": "addRules", "rules": [
        {"toolName": "Bash", "ruleContent": "npm test"}], "behavior": "allow", "destination": "localSettings"}]),
     {"tool_name": "Bash", "tool_input": {"command": "npm test"}, "permission_suggestions": [
         {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test"}], "behavior": "allow",
          "destination": "localSettings"}]}),
    ("PostToolUse", lambda h: h.post_tool_use(call("Write", {"file_path": "/abs/a.txt", "content": "x"}),
                                              {"filePath": "/abs/a.txt", "success": True}, 12),
     {"tool_name": "Write", "tool_response": {"filePath": "/abs/a.txt", "success": True}, "duration_ms": 12,
      "tool_use_id": "toolu_01"}),
    ("PostToolUseFailure", lambda h: h.post_tool_use_failure(call(), "Exit code 1\n...", False, 4187),
     {"tool_name": "Bash", "error": "Exit code 1\n...", "is_interrupt": False, "duration_ms": 4187}),
    ("UserPromptSubmit", lambda h: h.user_prompt_submit(SESSION, "fix the tests"), {"prompt": "fix the tests"}),
    ("Stop", lambda h: h.stop(SESSION, "All done.", True),
     {"stop_hook_active": True, "last_assistant_message": "All done."}),
    ("SessionStart", lambda h: h.session_start(SESSION, "startup"), {"source": "startup"}),
    ("SessionEnd", lambda h: h.session_end(SESSION, "exit"), {"reason": "exit"}),
])
async def test_each_event_gets_its_fields(tmp_path, event, invoke, fields):
    log = tmp_path / "log.jsonl"
    hooks, _ = make_hooks(one(event, handler(script("record.py", log))), tmp_path)
    await invoke(hooks)
    [seen] = records(log)
    assert seen["stdin"]["hook_event_name"] == event and seen["stdin"]["session_id"] == "sess-1"
    assert {k: seen["stdin"][k] for k in fields} == fields


async def test_notification_runs_in_the_background_and_session_end_waits_for_it(tmp_path):
    log = tmp_path / "log.jsonl"
    hooks, _ = make_hooks({**one("Notification", handler(f"sleep 0.3; {script('record.py', log)}"),
                                 matcher="permission_prompt")}, tmp_path)
    began = time.perf_counter()
    await hooks.notification(SESSION, "Vigil needs your permission", "Permission needed", "permission_prompt")
    assert time.perf_counter() - began < 0.25 and not log.exists()
    await hooks.session_end(SESSION, "exit")
    [seen] = records(log)
    assert {k: seen["stdin"][k] for k in ("message", "title", "notification_type")} == {
        "message": "Vigil needs your permission", "title": "Permission needed",
        "notification_type": "permission_prompt"}


# ---- exit codes ----------------------------------------------------------------------------------

async def test_exit_0_plain_stdout_is_logged_for_tools_and_context_for_prompts(tmp_path):
    hooks, rec = make_hooks({**one("PreToolUse", handler(respond("checked by lint"))),
                             **one("UserPromptSubmit", handler(respond("Branch: main"))),
                             **one("SessionStart", handler(script("exit_with.sh", 0, "", "Sprint goal: tests")))},
                            tmp_path)
    pre = await hooks.pre_tool_use(call())
    assert (pre.decision, pre.context) == (None, [])
    assert runs(rec, "ok")[0].message == "checked by lint"
    assert (await hooks.user_prompt_submit(SESSION, "hi")).context == ["Branch: main"]
    assert await hooks.session_start(SESSION, "startup") == ["Sprint goal: tests"]


async def test_exit_2_blocks_with_stderr_per_event(tmp_path):
    block = handler(script("exit_with.sh", 2, "not on main"))
    hooks, rec = make_hooks({e: one(e, block)[e] for e in (
        "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "UserPromptSubmit", "PermissionRequest",
        "Notification")}, tmp_path)
    pre = await hooks.pre_tool_use(call())
    assert (pre.decision, pre.reason) == ("deny", "not on main\nsecond line")
    assert (await hooks.post_tool_use(call(), {}, 1)).block_reason == "not on main\nsecond line"
    assert (await hooks.post_tool_use_failure(call(), "boom", False, 1)).block_reason == "not on main\nsecond line"
    assert (await hooks.stop(SESSION, "done", False)).continue_with == "not on main\nsecond line"
    prompt = await hooks.user_prompt_submit(SESSION, "hi")
    assert prompt.blocked and prompt.reason == "not on main\nsecond line"
    assert await hooks.permission_request(call(), []) is None  # PermissionRequest ignores exit 2
    await hooks.notification(SESSION, "m", "t", "permission_prompt")
    await hooks.session_end(SESSION, "exit")
    ignored = [e for e in runs(rec) if e.event in ("PermissionRequest", "Notification") and e.status != "started"]
    assert [e.status for e in ignored] == ["error", "error"] and all("ignored" in e.message for e in ignored)


async def test_exit_2_prefers_the_json_reason(tmp_path):
    hooks, _ = make_hooks(one("PreToolUse", handler(respond({"reason": "policy 7"}, 2, "stderr text"))), tmp_path)
    assert (await hooks.pre_tool_use(call())).reason == "policy 7"


@pytest.mark.parametrize("code", [1, 3, 137])
async def test_other_exit_codes_are_visible_non_blocking_errors(tmp_path, code):
    hooks, rec = make_hooks(one("PreToolUse", handler(script("exit_with.sh", code, "lint crashed"))), tmp_path)
    pre = await hooks.pre_tool_use(call())
    assert pre.decision is None
    finished = runs(rec)[-1]
    assert (finished.status, finished.exit_code) == ("error", code)
    [warning] = rec.of("Warning")
    assert warning.message.startswith("PreToolUse hook error:") and warning.message.endswith("lint crashed")


# ---- JSON output ---------------------------------------------------------------------------------

@pytest.mark.parametrize("output, decision, reason", [
    ({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                             "permissionDecisionReason": "no network"}}, "deny", "no network"),
    ({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                             "permissionDecisionReason": "double-check"}}, "ask", "double-check"),
    ({"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "safe"}}, "allow", "safe"),
    ({"decision": "approve", "reason": "legacy ok"}, "allow", "legacy ok"),
    ({"decision": "block", "reason": "legacy no"}, "deny", "legacy no"),
    ({"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny"}}, None, ""),
])
async def test_pre_tool_use_decisions(tmp_path, output, decision, reason):
    hooks, _ = make_hooks(one("PreToolUse", handler(respond(output))), tmp_path)
    pre = await hooks.pre_tool_use(call())
    assert (pre.decision, pre.reason) == (decision, reason)


async def test_universal_fields(tmp_path):
    output = {"continue": False, "stopReason": "Build is red", "systemMessage": "Lint ran", "suppressOutput": True,
              "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "3 warnings"}}
    hooks, rec = make_hooks(one("PostToolUse", handler(respond(output))), tmp_path)
    post = await hooks.post_tool_use(call(), {}, 1)
    assert (post.stop_reason, post.system_messages, post.context) == ("Build is red", ["Lint ran"], ["3 warnings"])
    assert {w.code: w.message for w in rec.of("Warning")} == {"hook_system_message": "Lint ran",
                                                               "hook_stopped": "Build is red"}


@pytest.mark.parametrize("event, invoke, check", [
    ("PostToolUse", lambda h: h.post_tool_use(call(), {}, 1), lambda r: r.block_reason == "fix lint"),
    ("PostToolUseFailure", lambda h: h.post_tool_use_failure(call(), "e", False, 1),
     lambda r: r.block_reason == "fix lint"),
    ("Stop", lambda h: h.stop(SESSION, "done", False), lambda r: r.continue_with == "fix lint"),
    ("UserPromptSubmit", lambda h: h.user_prompt_submit(SESSION, "p"), lambda r: r.blocked and r.reason == "fix lint"),
])
async def test_top_level_decision_block(tmp_path, event, invoke, check):
    hooks, _ = make_hooks(one(event, handler(respond({"decision": "block", "reason": "fix lint"}))), tmp_path)
    assert check(await invoke(hooks))


async def test_stop_continue_false_wins_over_block(tmp_path):
    hooks, _ = make_hooks(one("Stop", handler(respond({"decision": "block", "reason": "go on"})),
                              handler(respond({"continue": False, "stopReason": "enough"}))), tmp_path)
    assert (await hooks.stop(SESSION, "done", False)).continue_with is None


async def test_context_from_every_event_that_gives_it(tmp_path):
    def ctx(event):
        return handler(respond({"hookSpecificOutput": {"hookEventName": event, "additionalContext": f"{event} says"}}))

    hooks, _ = make_hooks({e: one(e, ctx(e))[e] for e in ("PreToolUse", "PostToolUseFailure", "UserPromptSubmit",
                                                         "SessionStart")}, tmp_path)
    assert (await hooks.pre_tool_use(call())).context == ["PreToolUse says"]
    assert (await hooks.post_tool_use_failure(call(), "e", False, 1)).context == ["PostToolUseFailure says"]
    assert (await hooks.user_prompt_submit(SESSION, "p")).context == ["UserPromptSubmit says"]
    assert await hooks.session_start(SESSION, "startup") == ["SessionStart says"]


async def test_permission_request_allow_with_updates(tmp_path):
    output = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {
        "behavior": "allow", "updatedInput": {"command": "npm run lint"}, "updatedPermissions": [
            {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm run lint"}], "behavior": "allow",
             "destination": "session"}]}}}
    hooks, _ = make_hooks(one("PermissionRequest", handler(respond(output))), tmp_path)
    answer = await hooks.permission_request(call(), [])
    assert answer.behavior == "allow" and answer.updated_input == {"command": "npm run lint"}
    assert answer.updated_permissions[0]["rules"] == [{"toolName": "Bash", "ruleContent": "npm run lint"}]


async def test_permission_request_deny_with_interrupt_beats_allow(tmp_path):
    deny = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {
        "behavior": "deny", "message": "told to the model", "interrupt": True}}}
    allow = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    hooks, _ = make_hooks(one("PermissionRequest", handler(respond(allow)), handler(respond(deny))), tmp_path)
    answer = await hooks.permission_request(call(), [])
    assert (answer.behavior, answer.message, answer.interrupt) == ("deny", "told to the model", True)


async def test_output_that_is_not_json_is_an_error_not_a_decision(tmp_path):
    hooks, rec = make_hooks(one("PreToolUse", handler(respond('{"permissionDecision": deny'))), tmp_path)
    assert (await hooks.pre_tool_use(call())).decision is None
    assert runs(rec)[-1].status == "error" and rec.of("Warning")


# ---- several hooks ---------------------------------------------------------------------------------

@pytest.mark.parametrize("words, expected", [
    (["allow", "deny", "ask"], "deny"), (["allow", "ask"], "ask"), (["allow", "allow"], "allow"),
])
async def test_several_hooks_deny_beats_ask_beats_allow(tmp_path, words, expected):
    handlers = [handler(respond({"hookSpecificOutput": {"permissionDecision": w,
                                                        "permissionDecisionReason": f"{w}-{i}"}}))
                for i, w in enumerate(words)]
    hooks, _ = make_hooks(one("PreToolUse", *handlers), tmp_path)
    pre = await hooks.pre_tool_use(call())
    assert pre.decision == expected and pre.reason == "; ".join(f"{w}-{i}" for i, w in enumerate(words)
                                                                if w == expected)


async def test_updated_input_from_several_hooks_applies_in_configuration_order(tmp_path):
    original = {"command": "npm test", "description": "Run tests"}

    def rewrite(**changes):
        new = {**original, **changes}
        return handler(respond({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": new}}))

    hooks, _ = make_hooks({"PreToolUse": [
        {"matcher": "Bash", "hooks": [rewrite(command="npm test -- --ci")]},
        {"hooks": [rewrite(timeout=60000), rewrite(command="npm test -- --ci --bail")]},
    ]}, tmp_path)
    pre = await hooks.pre_tool_use(call("Bash", original))
    assert pre.updated_input == {"command": "npm test -- --ci --bail", "description": "Run tests", "timeout": 60000}


async def test_identical_commands_run_once(tmp_path):
    log = tmp_path / "log.jsonl"
    same = handler(script("record.py", log))
    hooks, rec = make_hooks({"PreToolUse": [{"matcher": "Bash", "hooks": [same]}, {"hooks": [same, same]}]}, tmp_path)
    await hooks.pre_tool_use(call())
    assert len(records(log)) == 1 and len(runs(rec, "started")) == 1


async def test_matching_hooks_run_in_parallel(tmp_path):
    naps = [handler(script("nap.sh", 1) + f" #{i}") for i in range(3)]
    hooks, _ = make_hooks(one("PreToolUse", *naps), tmp_path)
    began = time.perf_counter()
    assert (await hooks.pre_tool_use(call())).decision == "allow"
    assert time.perf_counter() - began < 2.5  # three 1 s hooks, not one after another


async def test_matchers_and_legacy_aliases(tmp_path):
    log = tmp_path / "log.jsonl"
    hooks, _ = make_hooks(one("PreToolUse", handler(script("record.py", log)), matcher="MultiEdit"), tmp_path,
                          aliases={"Edit": ("MultiEdit",)})
    await hooks.pre_tool_use(call("Bash"))
    await hooks.pre_tool_use(call("Edit", {"file_path": "/a"}))
    assert [r["stdin"]["tool_name"] for r in records(log)] == ["Edit"]
    assert hooks.has_permission_request_hooks("Edit") is False


# ---- hooks that fail: fail-open, always visible ------------------------------------------------------

async def test_a_hook_past_its_timeout_is_killed_with_its_whole_group(tmp_path):
    pids = tmp_path / "pids"
    hooks, rec = make_hooks(one("PreToolUse", handler(script("sleepy.sh", pids), timeout=1)), tmp_path)
    began = time.perf_counter()
    pre = await hooks.pre_tool_use(call())
    assert time.perf_counter() - began < 5
    assert pre.decision is None  # decides nothing …
    leader, child = map(int, pids.read_text().split())
    assert live_members(leader) == [] and child not in live_members(leader)
    finished = runs(rec)[-1]
    assert finished.status == "timeout" and "timed out after 1s" in finished.message
    assert rec.of("Warning")[0].code == "hook_timeout"  # … but says so


async def test_a_hook_that_ignores_sigterm_is_killed_after_the_grace(tmp_path):
    pids = tmp_path / "pids"
    hooks, rec = make_hooks(one("PreToolUse", handler(script("stubborn.sh", pids), timeout=0.5)), tmp_path,
                            kill_grace_s=0.3)
    await hooks.pre_tool_use(call())
    leader, _child = map(int, pids.read_text().split())
    assert live_members(leader) == []
    assert runs(rec)[-1].status == "timeout"


@pytest.mark.parametrize("hook", [
    handler("/nonexistent/check.sh"),
    handler(str(__import__("tests.hook_helpers", fromlist=["HOOKS"]).HOOKS / "not_executable.sh")),
    handler("/nonexistent/bin/check", args=["--fast"]),
], ids=["missing-script", "not-executable", "exec-missing"])
async def test_a_hook_that_cannot_start_is_reported_and_decides_nothing(tmp_path, hook):
    hooks, rec = make_hooks(one("PreToolUse", hook), tmp_path)
    assert (await hooks.pre_tool_use(call())).decision is None
    finished = runs(rec)[-1]
    assert finished.status == "spawn_failed" and finished.message.startswith("could not start")
    assert rec.of("Warning")[0].code == "hook_spawn_failed"


async def test_a_cancelled_hook_is_killed(tmp_path):
    pids = tmp_path / "pids"
    hooks, rec = make_hooks(one("PermissionRequest", handler(script("sleepy.sh", pids))), tmp_path)
    task = asyncio.ensure_future(hooks.permission_request(call(), []))
    await eventually(lambda: pids.exists() and pids.read_text().strip(), "the hook to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    leader, _child = map(int, pids.read_text().split())
    assert live_members(leader) == []
    assert runs(rec)[-1].status == "cancelled"


async def test_a_hook_cancelled_while_asyncio_still_connects_its_pipes_leaves_nothing_running(
        tmp_path, monkeypatch):
    """A permission hook loses its race to the user's answer while it is still starting: forked
    (and forking), its pipes not yet connected. asyncio alone kills only the leader there, and on
    Python 3.11 can wait for ever for pipes it never connected; the hook's whole group must go,
    and the cancellation must end."""
    pids = tmp_path / "pids"
    # like sleepy.sh, but it forks before reading its input (which is only written once started)
    hooks, _ = make_hooks(one("PermissionRequest", handler(f"sleep 300 & echo $$ $! > {pids}; sleep 300")),
                          tmp_path)
    loop = asyncio.get_running_loop()
    real_exec = loop.subprocess_exec
    forked = asyncio.Event()

    async def slow_to_connect(*args, **kw):  # type: ignore[no-untyped-def]
        started = asyncio.ensure_future(real_exec(*args, **kw))
        await eventually(lambda: pids.exists() and pids.read_text().strip(), "the hook to fork")
        forked.set()
        await asyncio.sleep(0.5)  # still "starting" when the cancellation comes
        return await started

    monkeypatch.setattr(loop, "subprocess_exec", slow_to_connect)
    task = asyncio.ensure_future(hooks.permission_request(call(), []))
    await asyncio.wait_for(forked.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 60)
    leader, _child = map(int, pids.read_text().split())
    await eventually(lambda: live_members(leader) == [], "the hook's group to end")
