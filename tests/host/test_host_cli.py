"""The host driven only through the CLI and its socket: a real host process, real sessions of the
scripted built-in agent, real files."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import threading
from pathlib import Path

from tests.host_kit import HostKit, write_steps


def alive(pid: int) -> bool:
    """Running (a killed orphan may stay a zombie here: it runs nothing)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def waiting(host: HostKit, count: int) -> list[dict]:
    return host.wait(lambda: (lambda e: e if len(e) >= count else None)(host.inbox()), f"{count} waiting requests")


def test_two_sessions_one_inbox_allow_and_deny_with_feedback(host: HostKit) -> None:
    first = host.new(write_steps("a.txt", "from a\n"))
    second = host.new(write_steps("b.txt", "from b\n"))
    inbox = waiting(host, 2)
    by_session = {e["session"]: e for e in inbox}
    assert set(by_session) == {first, second}
    for entry in inbox:
        assert entry["kind"] == "permission" and entry["tool"] == "Write" and entry["agent"] == "vigil"
        assert set(entry) >= {"id", "session", "agent", "kind", "tool", "summary", "preview", "reason", "asked_at"}
    assert "+from a" in by_session[first]["preview"] and "+from b" in by_session[second]["preview"]
    states = {r["id"]: (r["state"], r["pending"]) for r in host.ls()}
    assert states == {first: ("waiting", 1), second: ("waiting", 1)}

    host.vigil("answer", by_session[first]["id"], "allow")
    host.vigil("answer", by_session[second]["id"], "deny", "--feedback", "use the other file")
    host.wait(lambda: {r["state"] for r in host.ls()} == {"idle"}, "both turns to end")
    assert (host.project / "a.txt").read_text() == "from a\n"
    assert not (host.project / "b.txt").exists()
    denied = [e for e in host.events(second) if e["type"] == "ToolCallError"]
    assert denied and "use the other file" in json.dumps(denied[0]["model_content"])
    resolved = [e for e in host.events(first) if e["type"] == "PermissionResolved"]
    assert resolved[0]["decision"] == "allow" and resolved[0]["client"].startswith("cli:")
    assert host.inbox() == []
    again = host.vigil("answer", by_session[first]["id"], "deny", check=False)
    assert again.returncode == 1 and "settled by cli:" in again.stderr


def test_watch_killed_and_watched_again_sees_every_event_once(host: HostKit) -> None:
    session = host.new([{"text": f"step {n}"} for n in range(6)], "one")
    host.wait(lambda: host.row(session)["state"] == "idle", "the first turn")
    watch = host.popen("watch", session)
    seen = [json.loads(watch.stdout.readline()) for _ in range(5)]
    watch.kill()
    watch.wait()
    for prompt in ("two", "three"):
        host.vigil("send", session, prompt)
        host.wait(lambda: host.row(session)["state"] == "idle", f"turn {prompt}")
    rest = host.popen("watch", session, "--from", str(seen[-1]["seq"]))
    host.vigil("end", session)
    out, _ = rest.communicate(timeout=60)
    assert rest.returncode == 0
    seen += [json.loads(line) for line in out.splitlines()]
    seqs = [e["seq"] for e in seen]
    logged = [e["seq"] for e in host.events(session)]
    assert seqs == logged
    assert [e["prompt"] for e in seen if e["type"] == "TurnStarted"] == ["one", "two", "three"]
    assert seen[-1]["type"] == "SessionEnded"


def test_two_clients_answer_at_once_one_wins_and_is_named(host: HostKit) -> None:
    session = host.new(write_steps())
    request = waiting(host, 1)[0]["id"]
    results: list[subprocess.CompletedProcess[str]] = []
    racers = [
        threading.Thread(target=lambda d=d: results.append(host.vigil("answer", request, d, check=False)))
        for d in ("allow", "deny")
    ]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert sorted(r.returncode for r in results) == [0, 1]
    loser = next(r for r in results if r.returncode == 1)
    host.wait(lambda: host.row(session)["state"] == "idle", "the turn to end")
    resolved = [e for e in host.events(session) if e["type"] == "PermissionResolved"]
    assert len(resolved) == 1
    winner = resolved[0]
    assert winner["client"].startswith("cli:") and f"settled by {winner['client']}" in loser.stderr
    assert (host.project / "out.txt").exists() == (winner["decision"] == "allow")


def test_kill_9_of_the_host_leaves_the_session_interrupted_and_attach_resumes_it(host: HostKit) -> None:
    session = host.new(write_steps())
    waiting(host, 1)
    pid = host.host_pid()
    os.kill(pid, signal.SIGKILL)
    host.wait(lambda: not alive(pid), "the host to die")
    row = host.row(session)  # a new host, started on demand
    assert row["state"] == "interrupted" and row["pending"] == 0 and "stopped without ending it" in row["reason"]
    assert host.host_pid() != pid
    assert not (host.project / "out.txt").exists()
    client = host.connect()
    client.hello()
    answer = client.request("attach", session=session, after_seq=0)["result"]
    assert answer["resumed"] and answer["pending"] == [] and answer["state"] == "idle"
    events = host.events(session)
    expired = [e for e in events if e["type"] == "PermissionResolved"]
    assert [(e["decision"], e["decided_by"]) for e in expired] == [("deny", "expired")]
    lost = [e for e in events if e["type"] == "ToolCallError"]
    assert lost[0]["code"] == "not_run" and "user" not in lost[0]["message"]
    assert [e["reason"] for e in events if e["type"] == "TurnEnded"] == ["interrupted"]
    assert not (host.project / "out.txt").exists()
    assert host.row(session)["state"] == "idle"
    client.close()


def test_bad_input_gets_clear_errors_and_the_host_lives(host: HostKit) -> None:
    host.vigil("ls")  # starts the host
    client = host.connect()
    client.send_line(b"this is not json")
    assert client.read()["error"]["code"] == "parse_error"
    client.send_line(b"[1, 2]")
    assert client.read()["error"]["code"] == "invalid_request"
    assert client.request("list")["error"]["code"] == "hello_first"
    wrong = client.request("hello", wire_version=999, client="old")
    assert wrong["error"]["code"] == "version_mismatch" and "different Vigil versions" in wrong["error"]["message"]
    assert client.read() is None  # the host hung up on the mismatched client
    client.close()
    client = host.connect()
    assert client.hello()["result"]["wire_version"] >= 1
    assert client.request("nope")["error"]["code"] == "unknown_method"
    assert client.request("attach", session="no-such-session")["error"]["code"] == "not_found"
    assert client.request("command", session="x", command={"type": "Nope"})["error"]["code"] == "not_found"
    assert client.request("new", options={"cwd": "/no/such/dir"})["error"]["code"] == "setup_failed"
    assert client.request("new", options={"evil": 1})["error"]["code"] == "invalid"
    client.close()
    assert host.vigil("ls", "--json").stdout.strip() == "[]"


def test_the_socket_is_the_users_alone_and_one_host_per_home(host: HostKit) -> None:
    host.vigil("ls")
    assert stat.S_IMODE(os.stat(host.socket).st_mode) == 0o600
    second = host.vigil("host", "--serve", check=False, timeout=60)
    assert second.returncode == 1 and "a host already runs" in second.stderr
    status = host.vigil("host", "status")
    assert str(host.host_pid()) in status.stdout and str(host.socket) in status.stdout
    stop = host.vigil("host", "stop")
    assert "ended 0 sessions" in stop.stdout
    gone = host.vigil("host", "status", check=False)
    assert gone.returncode == 1 and "no host is running" in gone.stderr


def test_a_socket_path_too_long_for_sun_path_is_a_clear_error(host: HostKit) -> None:
    deep = host.root / ("d" * 120)
    host.env["VIGIL_HOME"] = str(deep)
    done = host.vigil("ls", check=False)
    assert done.returncode == 1 and "longer than a Unix socket allows" in done.stderr


def test_kill_9_of_the_host_ends_the_commands_its_sessions_run(host: HostKit) -> None:
    from tests.procs import kill_marked, marker, wait_gone, with_marker

    mark = marker()
    steps = [
        {"text": "Sleeping.", "tool_calls": [{"id": "s1", "name": "Bash", "input": {"command": f"sleep {mark}"}}]},
        {"text": "Done."},
    ]
    try:
        session = host.new(steps, "sleep", "--allowedTools", "Bash(sleep *)")
        host.wait(lambda: with_marker(mark), "the sleep to start")
        assert host.row(session)["state"] == "running"
        pid = host.host_pid()
        os.kill(pid, signal.SIGKILL)
        assert wait_gone(mark) == {}, "the sleep outlived the host"
        assert host.row(session)["state"] == "interrupted"
        client = host.connect()
        client.hello()
        assert client.request("attach", session=session)["result"]["resumed"]
        client.close()
        lost = [e for e in host.events(session) if e["type"] == "ToolCallError"]
        assert [(e["code"], e["side_effects"]) for e in lost] == [("result_lost", "unknown")]
    finally:
        kill_marked(mark)


def test_another_user_is_refused_even_when_the_socket_is_opened_to_all(host: HostKit) -> None:
    import pytest

    python = "/usr/bin/python3"  # the test's own interpreter may be in a folder only root can read
    if os.getuid() != 0 or not os.access(python, os.X_OK):
        pytest.skip("needs root (and a system python3) to run a client as another user")
    host.vigil("ls")
    probe = (
        "import socket, sys; s = socket.socket(socket.AF_UNIX); s.settimeout(30)\n"
        "try:\n    s.connect(sys.argv[1])\nexcept OSError as e:\n    print('refused', e.errno); sys.exit(0)\n"
        "print(s.makefile().readline())"
    )

    def as_nobody() -> str:
        done = subprocess.run(
            [python, "-c", probe, str(host.socket)],
            user=65534,
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
            env={"PATH": "/usr/bin:/bin"},
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert as_nobody().startswith("refused")  # the folder and the 0600 socket keep it out
    for folder in (host.root, host.vigil_home):
        os.chmod(folder, 0o755)
    os.chmod(host.socket, 0o666)  # a mistake of the user's: SO_PEERCRED still keeps the host theirs
    answer = json.loads(as_nobody())
    assert answer["error"]["code"] == "forbidden" and "uid 65534" in answer["error"]["message"]
    assert host.vigil("ls", "--json").stdout.strip() == "[]"  # and the host serves its own user


def test_a_client_that_goes_away_mid_request_leaves_nothing_half_done(host: HostKit) -> None:
    host.vigil("ls")
    settings = host.root / "slow-start.json"  # a SessionStart hook: the start takes a second
    hook = {"type": "command", "command": "sleep 1"}
    settings.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}}))
    client = host.connect()
    client.hello()
    options = {"cwd": str(host.project), "script": str(host.script(write_steps())), "settings_file": str(settings)}
    client.send_line(json.dumps({"id": 9, "method": "new", "params": {"options": options, "prompt": "go"}}).encode())
    client.close()  # long before the answer
    entry = waiting(host, 1)[0]  # the session was started all the same, and its first turn runs
    assert host.row(entry["session"])["state"] == "waiting"


def test_watch_as_stream_json_prints_claude_codes_lines(host: HostKit) -> None:
    session = host.new([{"text": "Hello from the host."}], "hi")
    host.wait(lambda: host.row(session)["state"] == "idle", "the turn")
    host.vigil("end", session)
    out = host.vigil("watch", session, "--output-format", "stream-json").stdout
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["type"] for line in lines] == ["assistant"]
    assert lines[0]["message"]["content"] == [{"type": "text", "text": "Hello from the host."}]
