"""What a command hook's exit code and output mean (Claude Code's hook contract), one row per case a
hook author writes: the words the permission stage acts on, what blocks, what is only a message.

The hooks themselves run as real processes in tests/test_command_hooks.py; this table checks the
reading of their output, every branch, without starting hundreds of processes."""

from __future__ import annotations

import json

import pytest

from tui_app.runtime.hooks.config import HookHandler
from tui_app.runtime.hooks.output import interpret
from tui_app.runtime.hooks.process import ProcessResult

SHELL = HookHandler(command="./guard.sh", timeout_s=60)
EXEC = HookHandler(command="guard", timeout_s=60, args=("--strict",))


def run(event, code=0, out="", err="", handler=SHELL, status="exited", error=""):
    stdout = out if isinstance(out, str) else json.dumps(out)
    return interpret(event, handler, ProcessResult(status, code, stdout, err, 12, error=error))


def pre(**specific):
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **specific}}


def perm(**decision):
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


@pytest.mark.parametrize("out, decision, reason, status", [
    (pre(permissionDecision="deny", permissionDecisionReason="no network"), "deny", "no network", "blocked"),
    (pre(permissionDecision="ask", permissionDecisionReason="double-check"), "ask", "double-check", "ok"),
    (pre(permissionDecision="ask"), "ask", "", "ok"),
    (pre(permissionDecision="allow", permissionDecisionReason=7), "allow", "", "ok"),
    (pre(permissionDecision="maybe"), None, "", "ok"),
    ({"decision": "approve", "reason": "legacy ok"}, "allow", "legacy ok", "ok"),
    ({"decision": "block", "reason": "legacy no"}, "deny", "legacy no", "blocked"),
    ({"decision": "block", "reason": 5}, "deny", "", "blocked"),
    # the new form wins over the legacy one, and keeps the legacy reason when it has none
    ({"decision": "approve", "reason": "old", **pre(permissionDecision="deny")}, "deny", "old", "blocked"),
    # output meant for another event changes nothing here
    ({"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny"}}, None, "", "ok"),
])
def test_a_pre_tool_use_hook_says_allow_ask_or_deny(out, decision, reason, status):
    verdict = run("PreToolUse", out=out)
    assert (verdict.decision, verdict.reason, verdict.status) == (decision, reason, status)


def test_another_events_output_is_reported_as_ignored():
    verdict = run("PreToolUse", out={"hookSpecificOutput": {"hookEventName": "Stop", "permissionDecision": "deny"}})
    assert verdict.message == "hookSpecificOutput for Stop ignored in a PreToolUse hook"


@pytest.mark.parametrize("event, out, err, decision, block, message", [
    ("PreToolUse", {"reason": "policy 7"}, "stderr text", "deny", None, "policy 7"),
    ("PreToolUse", "", "  \n  rm is not allowed here\nsecond line", "deny", None, "rm is not allowed here"),
    ("PreToolUse", "not json", "", "deny", None, "Blocked by a PreToolUse hook (exit 2)"),
    ("PostToolUse", "", "fix lint", None, "fix lint", "fix lint"),
    ("Stop", {"reason": "tests are red"}, "", None, "tests are red", "tests are red"),
    ("UserPromptSubmit", "", "no secrets in prompts", None, "no secrets in prompts", "no secrets in prompts"),
])
def test_exit_2_blocks_with_the_json_reason_else_stderr(event, out, err, decision, block, message):
    verdict = run(event, 2, out, err)
    assert (verdict.status, verdict.decision, verdict.block, verdict.message) == ("blocked", decision, block, message)
    if decision == "deny":
        assert verdict.reason == ({"reason": "policy 7"}["reason"] if isinstance(out, dict) else
                                  err.strip() or "Blocked by a PreToolUse hook (exit 2)")


@pytest.mark.parametrize("event", ["Notification", "SessionStart", "PermissionRequest"])
def test_exit_2_of_an_event_that_cannot_block_is_an_error_not_a_block(event):
    verdict = run(event, 2, "", "stop it")
    assert (verdict.status, verdict.decision, verdict.block) == ("error", None, None)
    assert verdict.message == f"exit 2 (ignored for {event}): stop it" and verdict.failed


@pytest.mark.parametrize("code, handler, status, message", [
    (1, SHELL, "error", "exit 1: lint crashed"), (3, EXEC, "error", "exit 3: lint crashed"),
    (127, SHELL, "spawn_failed", "could not start: lint crashed"),
    (126, SHELL, "spawn_failed", "could not start: lint crashed"),
    # a program run without a shell may exit 127 itself: that is its answer, not a failure to start
    (127, EXEC, "error", "exit 127: lint crashed"),
])
def test_other_exit_codes_are_errors_that_decide_nothing(code, handler, status, message):
    verdict = run("PreToolUse", code, pre(permissionDecision="allow"), "\nlint crashed\n", handler)
    assert (verdict.status, verdict.message, verdict.decision) == (status, message, None) and verdict.failed


def test_an_error_without_stderr_says_so():
    assert run("PreToolUse", 1).message == "exit 1: no error output"


def test_the_line_shown_for_a_hook_is_at_most_300_characters():
    """A hook that dumps a minified bundle or a base64 blob on one line: the screen gets a line."""
    assert run("PreToolUse", 1, "", "E" * 5000 + "\nsecond").message == "exit 1: " + "E" * 300
    assert run("PostToolUse", 0, "x" * 301).message == "x" * 300


@pytest.mark.parametrize("event, out, message", [
    # the screen shows the hook's reason, or what it blocked with, when it printed no other line
    ("PreToolUse", pre(permissionDecision="deny", permissionDecisionReason="no network"), "no network"),
    ("PreToolUse", pre(permissionDecision="ask", permissionDecisionReason="double-check"), "double-check"),
    ("PreToolUse", {"decision": "approve", "reason": "legacy ok"}, "legacy ok"),
    ("PostToolUse", {"decision": "block", "reason": "3 lint errors"}, "3 lint errors"),
    ("Stop", {"decision": "block"}, "Blocked by a Stop hook"),
    ("PostToolUse", {"continue": False, "stopReason": "Build is red"}, "Build is red"),
    ("PreToolUse", pre(permissionDecision="allow"), ""),
])
def test_the_line_shown_for_a_json_answer(event, out, message):
    assert run(event, out=out).message == message


@pytest.mark.parametrize("status, error, message", [
    ("timeout", "timed out after 60 s", "timed out after 60 s"),
    ("spawn_failed", "no such file", "could not start: no such file"),
])
def test_a_hook_that_did_not_finish_decides_nothing(status, error, message):
    verdict = run("PreToolUse", None, "", "", status=status, error=error)
    assert (verdict.status, verdict.message, verdict.decision) == (status, message, None) and verdict.failed


@pytest.mark.parametrize("out, status, message, context", [
    ("", "ok", "", []),
    ("checked 3 files\nall fine\n", "ok", "checked 3 files", []),
    ('  {"decision": ', "error", "output starts with `{` but is not a JSON object", []),
    ("[1, 2]", "ok", "[1, 2]", []),
    ('"just a string"', "ok", '"just a string"', []),
    # a no-break space is not JSON's white space: meant as JSON, but not JSON
    ("\u00a0{}", "error", "output starts with `{` but is not a JSON object", []),
])
def test_plain_output_is_a_message(out, status, message, context):
    verdict = run("PreToolUse", out=out)
    assert (verdict.status, verdict.message, verdict.context, verdict.decision) == (status, message, context, None)


@pytest.mark.parametrize("event, context", [("UserPromptSubmit", ["remember: staging is down"]),
                                            ("SessionStart", ["remember: staging is down"]),
                                            ("PostToolUse", [])])
def test_plain_output_is_context_for_the_model_only_where_claude_code_adds_it(event, context):
    assert run(event, out="remember: staging is down\n").context == context
    # a hook that printed only blank lines gives the model nothing, not an empty note
    assert run(event, out="\n  \n").context == []


def test_additional_context_only_when_it_says_something():
    out = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "3 warnings"}}
    assert run("PostToolUse", out=out).context == ["3 warnings"]
    blank = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "  "}}
    assert run("PostToolUse", out=blank).context == []


@pytest.mark.parametrize("out, stop", [
    ({"continue": False, "stopReason": "Build is red"}, "Build is red"),
    ({"continue": False, "stopReason": ""}, "Stopped by a PostToolUse hook"),
    ({"continue": False}, "Stopped by a PostToolUse hook"),
    ({"continue": True, "stopReason": "ignored"}, None),
    # a reason that is not text is not shown as one
    ({"continue": False, "stopReason": 5}, "Stopped by a PostToolUse hook"),
    ({"continue": False, "stopReason": ["Build", "red"]}, "Stopped by a PostToolUse hook"),
])
def test_continue_false_stops_the_turn(out, stop):
    verdict = run("PostToolUse", out=out)
    assert verdict.stop_reason == stop
    assert verdict.status == ("blocked" if stop else "ok")
    assert verdict.message == (stop or "")


@pytest.mark.parametrize("event, out, block", [
    ("PostToolUse", {"decision": "block", "reason": "fix lint"}, "fix lint"),
    ("Stop", {"decision": "block"}, "Blocked by a Stop hook"),
    ("Notification", {"decision": "block", "reason": "x"}, None),
])
def test_a_top_level_block(event, out, block):
    verdict = run(event, out=out)
    assert verdict.block == block and verdict.status == ("blocked" if block else "ok")


def test_a_system_message_is_kept_and_other_types_are_not():
    assert run("PostToolUse", out={"systemMessage": "Lint ran"}).system_message == "Lint ran"
    assert run("PostToolUse", out={"systemMessage": 3}).system_message is None


def test_a_pre_tool_use_rewrite_is_taken_only_as_an_object():
    assert run("PreToolUse", out=pre(updatedInput={"command": "make test"})).updated_input == {"command": "make test"}
    assert run("PreToolUse", out=pre(updatedInput="make test")).updated_input is None


@pytest.mark.parametrize("out, decision, reason, interrupt, updated, updates", [
    (perm(behavior="allow", updatedInput={"command": "make test"},
          updatedPermissions=[{"type": "setMode", "mode": "acceptEdits"}, "junk"]),
     "allow", "", False, {"command": "make test"}, [{"type": "setMode", "mode": "acceptEdits"}]),
    (perm(behavior="allow", updatedInput={}), "allow", "", False, None, []),
    (perm(behavior="allow", updatedPermissions="x"), "allow", "", False, None, []),
    (perm(behavior="deny", message="frozen", interrupt=True), "deny", "frozen", True, None, []),
    (perm(behavior="deny", message=3, interrupt="yes"), "deny", "", False, None, []),
    # a deny carries no rewrite and no rule updates
    (perm(behavior="deny", updatedInput={"command": "rm -rf /"}, updatedPermissions=[{"type": "setMode"}]),
     "deny", "", False, None, []),
    (perm(behavior="ask"), None, "", False, None, []),
    ({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": "allow"}}, None, "", False, None, []),
])
def test_a_permission_request_hook_answers_for_the_user(out, decision, reason, interrupt, updated, updates):
    verdict = run("PermissionRequest", out=out)
    assert (verdict.decision, verdict.reason, verdict.interrupt, verdict.updated_input,
            verdict.updated_permissions) == (decision, reason, interrupt, updated, updates)
    assert verdict.status == ("blocked" if decision == "deny" else "ok")
