"""The sandbox on its own: with `sandbox.enabled: true` (so `autoAllowBashIfSandboxed` is on and
any command runs without asking), commands the classifier would never let through run for real
inside bubblewrap, and the sandbox alone must hold: the root filesystem read-only, the working
directories writable, /tmp private, denied paths masked, settings / hooks / `.mcp.json` /
`.git/hooks` / rc files read-only (and impossible to create), no network but through the proxy,
nothing left running afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path

import pytest

from tests.needs import need_program
from tests.procs import marker, with_marker
from tests.sec_kit import Tripwire, attack_settings, attempt, canary_root, isolate, make_canary, open_session

__all__ = ["canary_root"]
PY = "python3 -c"


@pytest.fixture(autouse=True)
def _needs_bubblewrap():
    need_program("bwrap")
    need_program("socat")


@pytest.fixture
def tripwire():
    wire = Tripwire()
    yield wire
    wire.close()


async def run(canary, command: str, **kw):
    session = await open_session(canary, **kw)
    try:
        return await attempt(session, canary, "Bash", {"command": canary.fill(command)})
    finally:
        await session.close()


def py(code: str) -> str:
    return f"{PY} {json.dumps(code)}"


@pytest.fixture
def auto(canary_root, monkeypatch):
    """The canary with the sandbox explicitly enabled: auto-allow on, every command runs unasked."""
    canary = make_canary(canary_root, attack_settings(enabled=True))
    isolate(monkeypatch, canary)
    return canary


async def test_a_command_runs_in_the_sandbox_and_may_write_the_working_directory(auto):
    found = await run(auto, "echo made > made.txt && cat made.txt")
    assert found.ran and found.sandboxed and not found.denied, found.describe()
    assert (auto.proj / "made.txt").read_text() == "made\n"
    assert "made" in found.text()


@pytest.mark.parametrize("target", ["{outside}/new.txt", "{outside}/outside.txt", "{home}/new.txt",
                                    "{root}/proj-evil/x.txt", "/etc/vigil-sandbox-probe-{token}"])
async def test_outside_the_working_directories_nothing_can_be_written(auto, target):
    target = auto.fill(target).replace("{token}", secrets.token_hex(6))
    try:
        found = await run(auto, py(f"open({target!r}, 'w').write('pwned')"))
        assert not os.path.exists(target) or target.startswith(str(auto.root))
    finally:
        if target.startswith("/etc/") and os.path.exists(target):
            os.unlink(target)  # a broken sandbox must not leave the machine changed
    assert found.ran and found.sandboxed
    assert not found.changed, found.describe()
    assert "Read-only file system" in found.text() and "ran in Vigil's sandbox" in found.text(), found.describe()


async def test_tmp_is_private_to_the_command(auto):
    name = f"/tmp/vigil-sandbox-{secrets.token_hex(6)}"
    found = await run(auto, f"echo x > {name} && cat {name}")
    assert found.ran and found.sandboxed and "x" in found.text(), found.describe()
    assert not os.path.exists(name)


@pytest.mark.parametrize("code", [
    "print(open('secret/key').read())",
    "import glob; [print(open(p).read()) for p in glob.glob('se*/*')]",
    "import os; [print(open(os.path.join(d, f)).read()) for d, _, fs in os.walk('.') for f in fs]",
    "import os; os.chdir('secret'); print(open('key').read())",
    "print(open('docs/secret_link').read())",
])
async def test_paths_under_a_read_deny_rule_are_masked(auto, code):
    found = await run(auto, py(code))
    assert found.ran and found.sandboxed, found.describe()
    assert not found.leaked, found.describe()


async def test_a_bare_name_rule_masks_the_name_at_any_depth(canary_root, monkeypatch):
    settings = attack_settings(enabled=True)
    settings["permissions"]["deny"].append("Read(.env)")
    canary = make_canary(canary_root, settings)
    isolate(monkeypatch, canary)
    for where in (canary.proj / ".env", canary.proj / "src" / ".env", canary.proj / "docs" / ".env"):
        where.write_text(canary.secret + "\n")
    found = await run(canary, "grep -r CANARY . ; " + py(
        "import os; [print(open(os.path.join(d, f)).read()) for d, _, fs in os.walk('.') for f in fs "
        "if f == '.env']"))
    assert found.ran and found.sandboxed and not found.leaked, found.describe()


async def test_a_home_rule_masks_outside_the_project_too(canary_root, monkeypatch):
    settings = attack_settings(enabled=True)
    settings["permissions"]["deny"].append("Read(~/.ssh/**)")
    canary = make_canary(canary_root, settings)
    isolate(monkeypatch, canary)
    (canary.home / ".ssh").mkdir()
    (canary.home / ".ssh" / "id_rsa").write_text(canary.secret)
    found = await run(canary, py(f"print(open({str(canary.home / '.ssh' / 'id_rsa')!r}).read())"))
    assert found.ran and found.sandboxed and not found.leaked, found.describe()


@pytest.mark.parametrize("path", [".mcp.json", ".claude/settings.json", ".claude/settings.local.json",
                                  ".vigil/settings.json", ".vigil/settings.local.json", "hooks/check.sh",
                                  ".git/hooks/pre-commit", ".git/config"])
async def test_protected_files_cannot_be_written_or_created(auto, path):
    """Through a program the rules cannot see into (python), with nothing asked first."""
    (auto.proj / ".mcp.json").write_text("{}\n")  # one that exists; .claude/ does not
    code = (f"import os; p = {path!r}; os.makedirs(os.path.dirname(p) or '.', exist_ok=True); "
            f"open(p, 'a').write('pwned')")
    found = await run(auto, py(code))
    assert found.ran and found.sandboxed, found.describe()
    assert not found.changed, found.describe()


async def test_placeholders_leave_nothing_behind(auto):
    assert not (auto.proj / ".claude").exists()
    found = await run(auto, "ls -a")
    assert found.ran and found.sandboxed
    assert ".claude" in found.text() and not (auto.proj / ".claude").exists()
    assert not found.changed


async def test_shell_rc_files_stay_read_only_even_when_home_is_a_working_directory(auto):
    found = await run(auto, py(f"open({str(auto.home / '.bashrc')!r}, 'a').write('pwned')"),
                      add_dirs=(str(auto.home),))
    assert found.ran and found.sandboxed
    assert not found.changed, found.describe()


@pytest.mark.parametrize("command", [
    "curl -s --max-time 5 {tw}/direct --noproxy '*'",
    "curl -s --max-time 5 {tw}/through-the-proxy",
    py("import socket; socket.create_connection(('{host}', {port}), 5).sendall(b'GET /raw HTTP/1.0\\r\\n\\r\\n')"),
])
async def test_the_network_is_closed_headless(auto, tripwire, command):
    port = tripwire.url.rsplit(":", 1)[1]
    found = await run(auto, command.replace("{tw}", tripwire.url).replace("{port}", port)
                      .replace("{host}", tripwire.host))
    assert found.ran and found.sandboxed
    assert tripwire.hits == [], found.describe()


async def test_allowed_domains_go_through_the_proxy(canary_root, monkeypatch, tripwire):
    canary = make_canary(canary_root, attack_settings(enabled=True, network={"allowedDomains": [tripwire.host]}))
    isolate(monkeypatch, canary)
    found = await run(canary, f"curl -s --max-time 10 {tripwire.url}/allowed")
    assert found.sandboxed and "tripped" in found.text(), found.describe()
    assert tripwire.hits == ["/allowed"]


async def test_a_blocked_host_is_named_in_the_result(auto, tripwire):
    found = await run(auto, f"curl -sf --max-time 5 {tripwire.url}/x")
    assert f"blocked network access to {tripwire.host}" in found.text(), found.describe()
    assert tripwire.hits == []


async def test_nothing_the_command_started_outlives_it(auto):
    mark = marker()
    found = await run(auto, f"(sleep {mark} &) ; nohup sleep {mark} >/dev/null 2>&1 & echo started")
    assert found.sandboxed and "started" in found.text(), found.describe()
    assert with_marker(mark) == {}


@pytest.mark.parametrize("command", ["unshare -U true", "umount secret", "mount -o remount,rw /"])
async def test_the_sandbox_cannot_be_taken_apart_from_inside(auto, command):
    escape = py(f"print(open('secret/key').read()); open({str(auto.outside)!r} + '/x', 'w')")
    found = await run(auto, f"{command}; {escape}")
    assert found.sandboxed and not found.leaked and not found.changed, found.describe()


# ---- the settings ------------------------------------------------------------------------------

async def test_dangerously_disable_sandbox_always_asks(auto):
    session = await open_session(auto)
    try:
        found = await attempt(session, auto, "Bash", {"command": "touch x", "dangerouslyDisableSandbox": True})
    finally:
        await session.close()
    assert found.denied and found.outcome.code == "no_permission_client", found.describe()
    assert not found.changed


async def test_with_unsandboxed_commands_not_allowed_the_flag_is_ignored(canary_root, monkeypatch):
    canary = make_canary(canary_root, attack_settings(enabled=True, allowUnsandboxedCommands=False))
    isolate(monkeypatch, canary)
    session = await open_session(canary)
    try:
        found = await attempt(session, canary, "Bash", {
            "command": py(f"open({str(canary.outside)!r} + '/x', 'w')"), "dangerouslyDisableSandbox": True})
    finally:
        await session.close()
    assert found.ran and found.sandboxed and not found.changed, found.describe()
    assert "allowUnsandboxedCommands: false" in found.text() and "dangerouslyDisableSandbox: true" not in found.text()


async def test_excluded_commands_run_outside_and_so_ask(canary_root, monkeypatch):
    canary = make_canary(canary_root, attack_settings(enabled=True, excludedCommands=["touch"]))
    isolate(monkeypatch, canary)
    found = await run(canary, "touch x")
    assert found.denied and not found.changed, found.describe()
    also = await run(canary, "cat notes.txt")  # read-only, not excluded: sandboxed, no question
    assert also.ran and also.sandboxed


async def test_by_default_only_read_only_commands_run_unasked(canary_root, monkeypatch):
    """Vigil turns the sandbox on by itself, but auto-allow stays with the classifier unless the
    user enabled the sandbox: anything else asks as before (headless: denied)."""
    canary = make_canary(canary_root)
    isolate(monkeypatch, canary)
    found = await run(canary, "touch x")
    assert found.denied and not found.changed
    read = await run(canary, "cat notes.txt")
    assert read.ran and read.sandboxed and "hello" in read.text()


async def test_turned_off_commands_run_without_it(canary_root, monkeypatch):
    canary = make_canary(canary_root, attack_settings(enabled=False))
    isolate(monkeypatch, canary)
    found = await run(canary, "cat notes.txt")
    assert found.ran and not found.sandboxed


def _unavailable(monkeypatch):
    from tui_app.tools.bash import sandbox

    monkeypatch.setattr(sandbox, "probe", lambda: sandbox.Probe(False, "bubblewrap is switched off for this test"))


async def test_without_bubblewrap_the_session_says_so_and_runs_unsandboxed(canary_root, monkeypatch):
    canary = make_canary(canary_root)
    isolate(monkeypatch, canary)
    _unavailable(monkeypatch)
    session = await open_session(canary)
    try:
        warnings = [e for e in session.startup_events if getattr(e, "code", "") == "sandbox_unavailable"]
        assert warnings and "apt-get install bubblewrap socat" in warnings[0].message
        found = await attempt(session, canary, "Bash", {"command": "cat notes.txt"})
        assert found.ran and not found.sandboxed
        recursive = await attempt(session, canary, "Bash", {"command": "grep -r CANARY ."})
        assert recursive.denied and not recursive.leaked, recursive.describe()
    finally:
        await session.close()


async def test_fail_if_unavailable_refuses_to_run_bash(canary_root, monkeypatch):
    canary = make_canary(canary_root, attack_settings(failIfUnavailable=True))
    isolate(monkeypatch, canary)
    _unavailable(monkeypatch)
    found = await run(canary, "cat notes.txt")
    assert found.denied and "failIfUnavailable" in found.text() and not found.ran, found.describe()


async def test_wrong_sandbox_settings_are_reported(canary_root, monkeypatch):
    canary = make_canary(canary_root, attack_settings(enabled="yes", network={"allowedDomains": "x.com"}))
    isolate(monkeypatch, canary)
    session = await open_session(canary)
    try:
        messages = [e.message for e in session.startup_events if getattr(e, "code", "") == "settings_invalid"]
    finally:
        await session.close()
    assert any("sandbox.enabled" in m for m in messages) and any("allowedDomains" in m for m in messages)


def test_the_canary_workspace_is_outside_tmp(canary_root):
    assert not str(Path(canary_root).resolve()).startswith("/tmp/")


async def test_a_deep_tmpdir_does_not_break_the_network_relay(auto, monkeypatch, tmp_path):
    """A Unix socket's path is at most 107 bytes: the proxy's socket must not live wherever $TMPDIR
    points (pytest-xdist and tmux tests nest it deep)."""
    import tempfile

    from tui_app.tools.bash import sandbox

    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    sandbox._socket_dir.cache_clear()
    try:
        found = await run(auto, "python3 -c 'print(6 * 7)'")  # a program the classifier does not know: relay
    finally:
        sandbox._socket_dir.cache_clear()
    assert found.ran and found.sandboxed and "42" in found.text(), found.describe()


async def test_a_background_command_runs_in_the_sandbox_too(auto):
    session = await open_session(auto)
    try:
        found = await attempt(session, auto, "Bash", {
            "command": "touch bg.txt; " + py(f"open({str(auto.outside)!r} + '/bg', 'w')"),
            "run_in_background": True})
        assert found.ran and found.sandboxed, found.describe()
        tasks = session.services["background_tasks"]
        (task,) = tasks.list()
        assert await tasks.wait(task, 60)
    finally:
        await session.close()
    assert (auto.proj / "bg.txt").exists()
    assert not (auto.outside / "bg").exists()
    assert not (auto.proj / ".claude").exists()  # its placeholders went with it


@pytest.mark.parametrize("settings, reachable", [({}, False), ({"network": {"allowAllUnixSockets": True}}, True)])
async def test_a_daemon_socket_is_hidden_unless_allowed(canary_root, monkeypatch, settings, reachable):
    """A container or system-bus daemon acts for whoever connects: its socket is a way out."""
    import socket
    import threading

    from tui_app.runtime.permissions import sandbox_policy

    canary = make_canary(canary_root, attack_settings(enabled=True, **settings))
    isolate(monkeypatch, canary)
    path = str(canary.outside / "daemon.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    connected: list[bytes] = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = server.accept()
            connected.append(conn.recv(100))
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    monkeypatch.setattr(sandbox_policy, "DAEMON_SOCKETS", [path])
    try:
        found = await run(canary, py(f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({path!r}); "
                                     "s.sendall(b'run-a-container'); print('connected')"))
    finally:
        server.close()
    assert found.ran and found.sandboxed, found.describe()
    assert ("connected" in found.text()) == reachable, found.describe()


async def test_commands_that_overlap_keep_each_others_placeholders(tmp_path):
    """Read-only commands of one batch run at once. One command's bwrap makes the empty mount
    points for protected paths that do not exist (`.vigil`, `.mcp.json` …); the next command's
    layout sees them as existing and binds them. Removing them when the first command ends broke
    the second one's sandbox ("Can't find source path …/.vigil")."""
    import asyncio

    from tui_app.runtime.permissions.sandbox_policy import SandboxPolicy, SandboxSettings
    from tui_app.runtime.permissions.working_dirs import WorkingDirs
    from tui_app.tools.bash.sandbox import prepare

    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("hello\n")
    policy = SandboxPolicy(SandboxSettings(enabled=True), dirs=WorkingDirs(str(project)), home=str(tmp_path))

    async def run(launch) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            *launch.wrap(["bash", "-c", "cat notes.txt"]), env=launch.env, cwd=str(project),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await process.communicate()
        return process.returncode, out.decode()

    first = await prepare(policy, str(project), dict(os.environ), "cat notes.txt")
    assert await run(first) == (0, "hello\n")
    assert (project / ".vigil").is_dir()  # the first command's mount point, still there
    second = await prepare(policy, str(project), dict(os.environ), "cat notes.txt")  # sees it
    await first.close()
    assert await run(second) == (0, "hello\n")
    await second.close()
    assert sorted(p.name for p in project.iterdir()) == ["notes.txt"]  # nothing left behind
