"""Against a real Python MCP server over stdio (tests/mcp_servers/fixture_server.py, no npm):
timeouts, a server killed mid-call, servers that fail to start, a tool list that changes."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

from tests.mcp.helpers import call, fixture, of, outcome, run_vigil, text_of
from tests.waiting import DEADLINE_S, eventually
from tui_app.mcp.projection import tool_name


def wait_for(path: Path, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return True
        time.sleep(0.02)
    return False


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


ALLOW_ALL = ("--allowedTools", "mcp__fx__echo,mcp__fx__slow,mcp__fx__grow,mcp__fx__shout,mcp__fx__env_value,"
                               "mcp__fx__complain,mcp__fx__refuse")


def test_a_call_that_outlives_its_timeout_is_cancelled_at_the_server_and_the_session_goes_on(vigil_env, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    steps = [{"tool_calls": [call("slow", "mcp__fx__slow", {"seconds": 5})]},
             {"tool_calls": [call("after", "mcp__fx__echo", {"text": "still here"})]},
             {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, {"fx": fixture(state, timeout=600)}, *ALLOW_ALL)
    assert code == 0
    slow = outcome(events, "slow")
    assert slow["metrics"]["exec_ms"] < 4000  # not the 5 s the call wanted (a generous bound)
    assert (slow["type"], slow["phase"], slow["code"], slow["side_effects"]) == (
        "ToolCallError", "timeout", "timeout", "unknown")
    assert slow["model_content"] == "Tool execution timed out after 600ms"
    assert of(events, "ToolCallStarted", "slow")[0]["timeout_ms"] == 600
    assert wait_for(state / "cancelled"), "the server never saw a cancellation"
    # progress arrived while the call ran, and none was recorded after its outcome
    progress = of(events, "ToolCallProgress", "slow")
    assert progress and progress[0]["text"] == "step 0"
    assert all(p["seq"] < slow["seq"] for p in progress)
    assert text_of(outcome(events, "after")) == "still here"


def test_a_server_killed_mid_call_fails_that_call_and_a_later_call_starts_it_again_once(vigil_env, tmp_path):
    """The call it died in fails (effects unknown); the next call restarts the server and works; a
    server that dies again within a minute is not restarted in a loop: its calls fail cleanly."""
    state = tmp_path / "state"
    state.mkdir()

    def kill_each_slow_call(times: int) -> None:
        for _ in range(times):
            if not wait_for(state / "pid", DEADLINE_S):
                return
            pid = int((state / "pid").read_text())
            (state / "pid").unlink()
            os.kill(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_each_slow_call, args=(2,), daemon=True)
    killer.start()
    steps = [{"tool_calls": [call("slow", "mcp__fx__slow", {"seconds": 20})]},
             {"tool_calls": [call("later", "mcp__fx__echo", {"text": "anyone?"})]},
             {"tool_calls": [call("slow2", "mcp__fx__slow", {"seconds": 20})]},
             {"tool_calls": [call("last", "mcp__fx__echo", {"text": "still?"})]},
             {"text": "I will tell the user the server is gone."}]
    code, events = run_vigil(vigil_env, steps, {"fx": fixture(state)}, *ALLOW_ALL)
    killer.join(DEADLINE_S)
    assert code == 0
    slow = outcome(events, "slow")
    assert (slow["phase"], slow["code"], slow["side_effects"]) == ("execute", "execution_failed", "unknown")
    assert slow["model_content"].startswith('<tool_use_error>MCP server "fx" went away during the call')
    assert "(MCPError -32000)" in slow["model_content"]
    assert text_of(outcome(events, "later")) == "anyone?"  # the server was started again for it
    notes = [p["text"] for p in of(events, "ToolCallProgress", "later")]
    assert 'MCP server "fx" had stopped: starting it again' in notes
    [restarted] = [w for w in of(events, "Warning") if w["code"] == "mcp_server_restarted"]
    assert restarted["message"].startswith('MCP server "fx" had stopped (the server closed the connection')
    last = outcome(events, "last")
    assert (last["phase"], last["code"]) == ("execute", "execution_failed")
    assert 'MCP server "fx" is not connected (failed: ' in last["model_content"]
    statuses = [s["status"] for s in of(events, "McpServerStatus")]
    assert statuses == ["connecting", "connected", "failed", "connecting", "connected", "failed"]
    assert of(events, "TurnEnded")[0]["reason"] == "completed"


def test_servers_that_fail_to_start_are_reported_and_the_others_work(vigil_env, tmp_path):
    # MCP_TIMEOUT stays at its default: the good server's start may take seconds on a busy machine
    states = {name: tmp_path / name for name in ("good", "exits")}
    for path in states.values():
        path.mkdir()
    servers = {"good": fixture(states["good"]), "exits": fixture(states["exits"], "--fail"),
               "missing": {"command": str(tmp_path / "no-such-server")}}
    steps = [{"tool_calls": [call("ok", "mcp__good__echo", {"text": "hello"}),
                             call("gone", "mcp__exits__echo", {"text": "hello"})]},
             {"text": "done"}]
    code, lines = run_vigil(vigil_env, steps, servers, "--allowedTools", "mcp__good__echo", fmt="stream-json")
    assert code == 0
    init = lines[0]
    assert sorted((s["name"], s["status"]) for s in init["mcp_servers"]) == [
        ("exits", "failed"), ("good", "connected"), ("missing", "failed")]
    assert [t for t in init["tools"] if "__good__" in t] == [
        "mcp__good__echo", "mcp__good__slow", "mcp__good__grow", "mcp__good__env_value", "mcp__good__complain",
        "mcp__good__refuse"]
    assert not [t for t in init["tools"] if "__exits__" in t]
    results = {block["tool_use_id"]: block for line in lines if line["type"] == "user"
               for block in line["message"]["content"]}
    assert results["ok"]["content"] == "hello" and not results["ok"].get("is_error")
    assert results["gone"]["is_error"] and results["gone"]["content"] == "Tool not found: mcp__exits__echo"

    log = Path(os.environ["VIGIL_HOME"]) / "sessions" / init["session_id"] / "events.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    failed = {s["server"]: s["message"] for s in of(events, "McpServerStatus") if s["status"] == "failed"}
    assert failed["exits"].endswith("server said: fixture server: cannot open its database (simulated start failure)")
    assert "no-such-server" in failed["missing"]


def test_a_server_that_never_finishes_starting_is_given_up_and_stopped(vigil_env, tmp_path, monkeypatch):
    # alone in its session, so a short MCP_TIMEOUT races nothing that has to start in time
    monkeypatch.setenv("MCP_TIMEOUT", "2500")
    state = tmp_path / "hangs"
    state.mkdir()
    code, lines = run_vigil(vigil_env, [{"text": "done"}], {"hangs": fixture(state, "--hang")}, fmt="stream-json")
    assert code == 0
    init = lines[0]
    assert [(s["name"], s["status"]) for s in init["mcp_servers"]] == [("hangs", "failed")]
    assert not [t for t in init["tools"] if "__hangs__" in t]
    # the hung server was not left running
    assert wait_for(state / "server-pid")
    hung = int((state / "server-pid").read_text())
    deadline = time.monotonic() + 30
    while alive(hung) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(hung)
    log = Path(os.environ["VIGIL_HOME"]) / "sessions" / init["session_id"] / "events.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    failed = {s["server"]: s["message"] for s in of(events, "McpServerStatus") if s["status"] == "failed"}
    assert failed["hangs"].startswith("did not finish starting within 2500 ms; server said: fixture server ")


def test_a_tools_changed_notification_brings_a_new_menu(vigil_env, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    steps = [{"tool_calls": [call("grow", "mcp__fx__grow", {"name": "shout"})]},
             # the new tool is listed in the background while this step runs (the server announced
             # the change before it answered); a real model takes longer than this to answer. The
             # scripted model cannot wait for the listing itself: 3 s is ten times what it takes here
             {"delay_ms": 3000, "tool_calls": [call("echo", "mcp__fx__echo", {"text": "meanwhile"})]},
             {"tool_calls": [call("use", "mcp__fx__shout", {"text": "quiet"})]},
             {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, {"fx": fixture(state)}, *ALLOW_ALL)
    assert code == 0
    menus = of(events, "ToolMenu")
    assert len(menus) == 2
    first, second = ({t["name"] for t in m["tools"]} for m in menus)
    assert second - first == {"mcp__fx__shout"}
    [shout] = [t for t in menus[1]["tools"] if t["name"] == "mcp__fx__shout"]
    assert shout["description"] == "shout: added at run time"
    # the menu changed during the grow call's batch, before the step whose request carries it
    step3 = next(e for e in of(events, "ModelStepStarted") if e["step"] == 3)
    assert of(events, "ToolCallStarted", "grow")[0]["seq"] < menus[1]["seq"] < step3["seq"]
    assert text_of(outcome(events, "use")) == "QUIET"
    status = of(events, "McpServerStatus")[-2]
    assert (status["status"], status["tools"], status["message"]) == ("connected", 7, "tool list changed")


def test_env_reaches_the_server_stderr_only_the_log_and_results_keep_to_the_budget(
        vigil_env, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("MY_SECRET", "s3cret")
    monkeypatch.setenv("NOT_PASSED", "should not leak")
    state = tmp_path / "state"
    state.mkdir()
    server = fixture(state, env={"SECRET_FROM_CONFIG": "${MY_SECRET}"})
    steps = [{"tool_calls": [call("a", "mcp__fx__env_value", {"name": "SECRET_FROM_CONFIG"}),
                             call("b", "mcp__fx__env_value", {"name": "NOT_PASSED"}),
                             call("c", "mcp__fx__complain", {"text": "a complaint for the log only"}),
                             call("d", "mcp__fx__refuse", {"reason": "no such table: users"}),
                             call("big", "mcp__fx__echo", {"text": "é" * 40_000})]},
             {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, {"fx": server}, *ALLOW_ALL)
    assert code == 0
    assert text_of(outcome(events, "a")) == "s3cret"
    assert text_of(outcome(events, "b")) == "<unset>"
    refused = outcome(events, "d")
    assert (refused["type"], refused["phase"]) == ("ToolCallError", "execute")
    assert refused["model_content"] == "Error executing tool refuse: no such table: users"
    assert refused["display"]["kind"] == "mcp" and refused["display"]["is_error"]
    big = outcome(events, "big")  # 80000 bytes of output against the 50000-byte MCP budget
    assert (big["truncated"], big["original_bytes"], big["strategy"]) == (True, 80_000, "truncate")
    assert big["sent_bytes"] <= 50_000
    assert big["model_content"].endswith(
        "[Tool output truncated by resultBudget: original 80000 bytes, limit 50000 bytes]")
    captured = capfd.readouterr()
    assert "a complaint for the log only" not in captured.err + captured.out
    log = Path(of(events, "McpServerStatus")[0]["log_path"])
    assert log.name == "fx.stderr.log"
    assert "a complaint for the log only" in log.read_text()


async def test_an_interrupted_call_is_cancelled_at_the_server(vigil_env, tmp_path):
    """The user interrupts the turn while an MCP call runs: the call ends as cancelled, the server
    is told, and its late progress is not recorded."""
    from tui_app.assemble import SessionOptions, build_session

    state = tmp_path / "state"
    state.mkdir()
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"fx": fixture(state)}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"tool_calls": [call("slow", "mcp__fx__slow", {"seconds": 10})]},
                                            {"tool_calls": [call("after", "mcp__fx__echo", {"text": "after"})]},
                                            {"text": "done"}]}))
    session = build_session(SessionOptions(cwd=str(vigil_env), script=str(script), mcp_config=[str(config)],
                                           allowed_tools=["mcp__fx__slow", "mcp__fx__echo"]))
    events: list = []
    session.subscribe(events.append)

    def on_event(event) -> None:
        if event.type == "ToolCallProgress" and event.progress == 2:
            session.interrupt("user pressed Esc")

    session.subscribe(on_event)
    await session.start()
    try:
        turn = await session.run_turn("go")
        assert turn.reason == "interrupted"
        ended = next(e for e in events if e.type == "ToolCallError")
        assert (ended.phase, ended.code) == ("cancel", "cancelled")
        assert ended.model_content == ("The user interrupted this call to MCP server fx; "
                                       "the server was asked to cancel it.")
        await eventually(lambda: (state / "cancelled").exists(), "the server's cancellation")
        assert (state / "cancelled").read_text().startswith("cancelled at step")
        # a later call's answer comes down the same pipe after anything the server sent before it
        await session.run_turn("again")
        assert [e.call_id for e in events if e.type == "ToolCallResult"] == ["after"]
        assert all(e.seq < ended.seq for e in events if e.type == "ToolCallProgress")
    finally:
        await session.close()


async def test_a_dead_server_can_be_reconnected(vigil_env, tmp_path):
    from tui_app.assemble import SessionOptions, build_session

    state = tmp_path / "state"
    state.mkdir()
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"fx": fixture(state)}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"tool_calls": [call("e", "mcp__fx__echo", {"text": "back"})]},
                                            {"text": "done"}]}))
    session = build_session(SessionOptions(cwd=str(vigil_env), script=str(script), mcp_config=[str(config)],
                                           allowed_tools=["mcp__fx__echo"]))
    events: list = []
    session.subscribe(events.append)
    await session.start()
    manager = session.agent.mcp
    try:
        [info] = manager.servers()
        assert (info.name, info.status, len(info.tools), info.transport) == ("fx", "connected", 6, "stdio")
        assert (info.server, info.protocol_version) == ("vigil-fixture", "2025-11-25")
        assert info.log_path == str(manager.log_path("fx"))
        first_pid = int((state / "server-pid").read_text())
        os.kill(first_pid, signal.SIGKILL)
        await eventually(lambda: manager.info("fx").status == "failed", "the server marked failed")
        assert manager.info("fx").status == "failed"
        assert [e.status for e in events if e.type == "McpServerStatus"][-1] == "failed"
        assert "fixture server" in manager.read_log("fx")

        info = await manager.reconnect("fx")
        assert info.status == "connected"
        assert int((state / "server-pid").read_text()) != first_pid
        menus = [e for e in events if e.type == "ToolMenu"]
        assert len(menus) == 1  # same tools after the reconnect: the menu did not change
        turn = await session.run_turn("go")
        assert turn.reason == "completed"
        assert [e.model_content for e in events if e.type == "ToolCallResult"] == ["back"]
    finally:
        await session.close()
    assert [e.status for e in events if e.type == "McpServerStatus"][-1] == "disconnected"


def test_colliding_names_and_disallowed_tools(vigil_env, tmp_path):
    """Two servers whose names sanitise alike: the second one's tools are left out (with a warning),
    never routed to the wrong server; a disallowed MCP tool is off the menu and cannot be called."""
    states = {name: tmp_path / name for name in ("dotted", "underscored")}
    for path in states.values():
        path.mkdir()
    servers = {"a.b": fixture(states["dotted"]), "a_b": fixture(states["underscored"])}
    steps = [{"tool_calls": [call("echo", "mcp__a_b__echo", {"text": "who answers?"}),
                             call("hidden", "mcp__a_b__refuse", {"reason": "x"})]},
             {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, servers, "--allowedTools", "mcp__a_b__echo",
                             "--disallowedTools", "mcp__a_b__refuse")
    assert code == 0
    collisions = [w["message"] for w in of(events, "Warning") if w["code"] == "mcp_tool_name_collision"]
    assert len(collisions) == 6
    assert collisions[0] == ('MCP server "a_b": tool \'echo\' would be named mcp__a_b__echo, which is already taken; '
                             "it was left out")
    [menu] = of(events, "ToolMenu")
    assert [t["name"] for t in menu["tools"]] == [
        "mcp__a_b__echo", "mcp__a_b__slow", "mcp__a_b__grow", "mcp__a_b__env_value", "mcp__a_b__complain"]
    assert text_of(outcome(events, "echo")) == "who answers?"
    hidden = outcome(events, "hidden")
    assert (hidden["phase"], hidden["code"]) == ("lookup", "tool_not_visible")
    logs = {s["server"]: Path(s["log_path"]).name for s in of(events, "McpServerStatus") if s["status"] == "connected"}
    assert logs == {"a.b": "a.b.stderr.log", "a_b": "a_b.stderr.log"}


def test_a_tool_name_too_long_for_the_providers_is_offered_shortened_and_still_called(vigil_env, tmp_path):
    """A long server name pushes every tool name past 64 characters: the menu holds the shortened
    names (the server's own tool is still what is called), and a warning says how each is offered."""
    server = "an-internal-server-whose-name-alone-takes-about-sixty-chars"
    state = tmp_path / "state"
    state.mkdir()
    long_echo = tool_name(server, "echo")
    steps = [{"tool_calls": [call("e", long_echo, {"text": "still reached"})]}, {"text": "done"}]
    code, events = run_vigil(vigil_env, steps, {server: fixture(state)}, "--allowedTools", long_echo)
    assert code == 0
    [menu] = of(events, "ToolMenu")
    names = [t["name"] for t in menu["tools"] if t["name"].startswith("mcp__")]
    assert long_echo in names and all(len(n) <= 64 for n in names)
    assert text_of(outcome(events, "e")) == "still reached"
    renamed = [w["message"] for w in of(events, "Warning") if w["code"] == "mcp_tool_renamed"]
    assert f"MCP server \"{server}\": tool 'echo' is offered as {long_echo} (tool names are at most 64 " \
           "characters)" in renamed
