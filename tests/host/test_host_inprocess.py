"""The host's security checks run in this process (so `make mutate` sees them): what a killed
host's open requests become on resume (expired, never allowed), and who may use the socket."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tui_app.host.client import HostClient
from tui_app.host.server import Host, peer_allowed
from tui_app.runtime.events import (
    HookRun,
    PermissionRequested,
    PermissionResolved,
    PlanApprovalAsked,
    SessionEnded,
    SubagentEnded,
    ToolCallError,
    ToolCallRequested,
    ToolCallResult,
    ToolCallStarted,
    TurnEnded,
    TurnStarted,
    UserQuestionAnswered,
    UserQuestionAsked,
)
from tui_app.runtime.log.lost_calls import closing_events


def asked(call: str, request: str) -> PermissionRequested:
    return PermissionRequested(
        request_id=request,
        call_id=call,
        turn_id="turn-1",
        tool="Write",
        input={},
        input_sha256="x",
        summary="Write a file",
    )


def requested(call: str) -> ToolCallRequested:
    return ToolCallRequested(step=1, index=0, name="Write", input={}, call_id=call, turn_id="turn-1")


def test_a_request_left_waiting_expires_as_a_deny_and_its_call_is_not_run() -> None:
    hook = HookRun(event="PreToolUse", command="check.sh", status="ok", call_id="c1", turn_id="turn-1")
    log = [TurnStarted(prompt="go", turn_id="turn-1"), requested("c1"), hook, asked("c1", "perm-1")]
    out = closing_events(log)
    assert [e.type for e in out] == ["PermissionResolved", "ToolCallError", "TurnEnded"]
    resolved, error, ended = out
    assert (resolved.request_id, resolved.decision, resolved.decided_by) == ("perm-1", "deny", "expired")
    assert resolved.call_id == "c1" and "expired" in resolved.reason and resolved.feedback is None
    assert (error.call_id, error.code, error.side_effects) == ("c1", "not_run", "none")
    assert "refused" not in error.message and "denied" not in error.message
    assert (ended.turn_id, ended.reason) == ("turn-1", "interrupted")


def test_a_started_call_is_lost_not_done_and_a_question_is_cancelled() -> None:
    log = [
        TurnStarted(prompt="go", turn_id="turn-1"),
        requested("c1"),
        ToolCallStarted(tool="Bash", input={}, flags={}, call_id="c1", turn_id="turn-1"),
        UserQuestionAsked(request_id="q-1", questions=[{"question": "which?"}], call_id="c2", turn_id="turn-1"),
    ]
    out = closing_events(log)
    assert [(e.type, getattr(e, "code", None) or getattr(e, "outcome", None)) for e in out] == [
        ("UserQuestionAnswered", "cancelled"),
        ("ToolCallError", "result_lost"),
        ("TurnEnded", None),
    ]
    assert out[1].side_effects == "unknown"


def test_what_was_settled_needs_nothing() -> None:
    log = [
        TurnStarted(prompt="go", turn_id="turn-1"),
        requested("c1"),
        asked("c1", "perm-1"),
        PermissionResolved(request_id="perm-1", decision="allow", decided_by="user", call_id="c1"),
        ToolCallResult(tool="Write", model_content="ok", call_id="c1", turn_id="turn-1"),
        TurnEnded(reason="completed", turn_id="turn-1"),
    ]
    assert closing_events(log) == []
    answered_then_crashed = [*log[:4], ToolCallStarted(tool="Write", input={}, flags={}, call_id="c1")]
    assert [e.type for e in closing_events(answered_then_crashed)] == ["ToolCallError", "TurnEnded"]


def test_only_the_last_open_turn_is_closed_and_a_plan_waiting_is_cancelled() -> None:
    earlier = [
        TurnStarted(prompt="one", turn_id="turn-1"),
        requested("c0"),
        asked("c0", "perm-0"),
        UserQuestionAsked(request_id="q-0", questions=[], call_id="c9", turn_id="turn-1"),
        TurnEnded(reason="interrupted", turn_id="turn-1"),
    ]
    now = [
        TurnStarted(prompt="two", turn_id="turn-2"),
        requested("c1"),
        ToolCallStarted(tool="Agent", input={}, flags={}, call_id="c1", turn_id="turn-2"),
        TurnEnded(reason="completed", turn_id="turn-2", agent_id="sub-1"),  # a subagent's turn, not this one
        SubagentEnded(reason="completed", call_id="c1", agent_id="sub-1"),
        UserQuestionAsked(request_id="q-1", questions=[], call_id="c2", turn_id="turn-2"),
        UserQuestionAnswered(request_id="q-1", call_id="c2", turn_id="turn-2"),
        PlanApprovalAsked(request_id="q-2", plan="the plan", call_id="c3", turn_id="turn-2"),
    ]
    out = closing_events(earlier + now)
    assert [(e.type, getattr(e, "request_id", None) or e.call_id or e.turn_id) for e in out] == [
        ("UserQuestionAnswered", "q-2"),
        ("ToolCallError", "c1"),
        ("TurnEnded", "turn-2"),
    ]
    ended_session = [
        TurnStarted(prompt="one", turn_id="turn-1"),
        requested("c0"),
        asked("c0", "perm-0"),
        SessionEnded(reason="exit"),
    ]
    assert closing_events(ended_session) == []


def test_a_call_with_its_result_is_not_closed_again_in_an_open_turn() -> None:
    log = [
        TurnStarted(prompt="go", turn_id="turn-1"),
        requested("c1"),
        requested("c2"),
        ToolCallResult(tool="Write", model_content="ok", call_id="c1", turn_id="turn-1"),
        ToolCallError(
            tool="Write", phase="execute", code="x", message="no", model_content="no", call_id="c2", turn_id="turn-1"
        ),
    ]
    assert [e.type for e in closing_events(log)] == ["TurnEnded"]


def test_only_the_hosts_own_user_may_talk_to_it() -> None:
    assert peer_allowed(os.getuid())
    assert not peer_allowed(os.getuid() + 1)
    assert not peer_allowed(None)


async def test_another_uid_is_refused_by_a_host_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    python = "/usr/bin/python3"
    if os.getuid() != 0 or not os.access(python, os.X_OK):
        pytest.skip("needs root (and a system python3) to run a client as another user")
    folder = Path(tempfile.mkdtemp(prefix="vi", dir="/tmp"))
    monkeypatch.setenv("VIGIL_HOME", str(folder))
    path = folder / "host.sock"
    host = Host(path)
    serving = asyncio.ensure_future(host.serve())
    try:
        while not path.exists():
            await asyncio.sleep(0.01)
        os.chmod(folder, 0o755)
        os.chmod(path, 0o666)
        probe = (
            "import socket, sys; s = socket.socket(socket.AF_UNIX); s.settimeout(20); s.connect(sys.argv[1]);"
            "print(s.makefile().readline())"
        )
        done = await asyncio.to_thread(
            subprocess.run,
            [python, "-c", probe, str(path)],
            user=65534,
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
            env={"PATH": "/usr/bin:/bin"},
        )
        assert json.loads(done.stdout)["error"]["code"] == "forbidden", done.stderr
        assert host.connections == 0  # it never became a client
        mine = await HostClient.connect(socket_path=path, start=False)  # and the host's own user is served
        assert mine.hello["host_pid"] == os.getpid() and host.connections == 1
        assert await mine.call("list") == []
        await mine.close()
    finally:
        host.stopping.set()
        await serving
        shutil.rmtree(folder, ignore_errors=True)
