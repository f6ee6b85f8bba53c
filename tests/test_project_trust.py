"""Trust before code, headless: a cloned project whose `.mcp.json` stdio server and whose
SessionStart hook each write a marker. Nothing of it runs before the project is trusted — no
marker, the servers listed as `needs-trust`, a Warning naming each command — and all of it runs
with `--trust-project`, after a remembered "Trust" for the same files, or (MCP only) with the
user's own `enableAllProjectMcpServers` / `enabledMcpjsonServers`. A changed file asks again; the
project's own settings cannot trust the project. Real `vigil -p` runs, real processes."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from tui_app.cli import main
from tui_app.project_trust import TRUST_ENV, TrustStore, fingerprint


@pytest.fixture
def place(tmp_path, monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vigil-home"))
    return tmp_path


def hostile_project(root: Path, name: str = "cloned") -> Path:
    """What a repository from someone else may hold: a server and a hook that run at start."""
    project = root / name
    (project / ".claude").mkdir(parents=True)
    marker = root / "markers"
    marker.mkdir(exist_ok=True)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "helper": {"command": "sh", "args": ["-c", f"touch {marker}/mcp-ran"]}}}))
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": f"touch {marker}/hook-ran"}]}]}}))
    return project


def markers(root: Path) -> set[str]:
    return {p.name for p in (root / "markers").iterdir()}


def vigil(project: Path, *args: str) -> list[dict]:
    script = project.parent / "script.json"
    script.write_text(json.dumps({"steps": [{"text": "done"}]}))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["-p", "go", "--script", str(script), "--cwd", str(project), "--output-format", "stream-json",
                     *args])
    assert code == 0, out.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def init_servers(lines: list[dict]) -> dict[str, str]:
    init = next(line for line in lines if line.get("type") == "system" and line.get("subtype") == "init")
    return {s["name"]: s["status"] for s in init["mcp_servers"]}


def test_an_untrusted_project_runs_none_of_its_own_code_and_says_so(place):
    project = hostile_project(place)
    lines = vigil(project)
    assert markers(place) == set()
    assert init_servers(lines) == {"helper": "needs-trust"}
    events = vigil(project)  # the events format names the warning
    assert markers(place) == set() and events


def test_the_warning_names_what_did_not_run(place):
    """An HTTP server is held back too (the project's URL would get the headers it names)."""
    project = hostile_project(place)
    servers = json.loads((project / ".mcp.json").read_text())
    servers["mcpServers"]["remote"] = {"type": "http", "url": "http://127.0.0.1:9/mcp"}
    (project / ".mcp.json").write_text(json.dumps(servers))
    script = place / "script.json"
    script.write_text(json.dumps({"steps": [{"text": "done"}]}))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(["-p", "go", "--script", str(script), "--cwd", str(project), "--output-format", "events"])
    assert "vigil: warning: This project is not trusted" in err.getvalue()
    events = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
    warning = next(e for e in events if e["type"] == "Warning" and e["code"] == "project_untrusted")
    assert "SessionStart hook: touch" in warning["message"] and 'MCP server "helper": sh -c touch' in warning["message"]
    assert 'MCP server "remote": http://127.0.0.1:9/mcp' in warning["message"]
    assert warning["detail"]["mcp_servers"] == ["helper", "remote"]
    assert [e["status"] for e in events if e["type"] == "McpServerStatus"] == ["needs-trust", "needs-trust"]
    assert not [e for e in events if e["type"] == "HookRun"]


def test_trust_project_runs_it(place):
    project = hostile_project(place)
    lines = vigil(project, "--trust-project")
    assert markers(place) == {"mcp-ran", "hook-ran"}
    assert init_servers(lines)["helper"] == "failed"  # it ran (and is no MCP server at all)


def test_a_remembered_trust_holds_until_a_file_changes(place):
    project = hostile_project(place)
    TrustStore(place / "vigil-home" / "trust.json").remember(str(project), fingerprint(str(project)))
    vigil(project)
    assert markers(place) == {"mcp-ran", "hook-ran"}
    for marker in (place / "markers").iterdir():
        marker.unlink()
    settings = project / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace("hook-ran", "hook-ran-changed"))
    assert init_servers(vigil(project)) == {"helper": "needs-trust"}
    assert markers(place) == set()


def test_a_trust_is_for_one_project_path(place):
    first, second = hostile_project(place, "first"), hostile_project(place, "second")
    TrustStore(place / "vigil-home" / "trust.json").remember(str(first), fingerprint(str(first)))
    vigil(second)
    assert markers(place) == set()


@pytest.mark.parametrize("settings", [{"enableAllProjectMcpServers": True}, {"enabledMcpjsonServers": ["helper"]}])
def test_the_users_own_mcp_settings_start_the_server_but_not_the_hooks(place, settings):
    project = hostile_project(place)
    (place / "home" / ".claude" / "settings.json").write_text(json.dumps(settings))
    vigil(project)
    assert markers(place) == {"mcp-ran"}


@pytest.mark.parametrize("settings", [{"enableAllProjectMcpServers": True}, {"enabledMcpjsonServers": ["helper"]}])
@pytest.mark.parametrize("where", [".claude/settings.json", ".claude/settings.local.json", ".vigil/settings.json"])
def test_a_project_cannot_trust_itself(place, settings, where):
    project = hostile_project(place)
    path = project / where
    path.parent.mkdir(exist_ok=True)
    data = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**data, **settings}))
    assert init_servers(vigil(project)) == {"helper": "needs-trust"}
    assert markers(place) == set()


def test_disabled_servers_stay_off_in_a_trusted_project(place):
    project = hostile_project(place)
    (place / "home" / ".claude" / "settings.json").write_text(json.dumps({"disabledMcpjsonServers": ["helper"]}))
    vigil(project, "--trust-project")
    assert markers(place) == {"hook-ran"}


def test_the_users_own_hooks_and_servers_need_no_trust(place):
    project = place / "plain"
    project.mkdir()
    (place / "markers").mkdir()
    (place / "home" / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": f"touch {place}/markers/user-hook"}]}]}}))
    config = place / "mine.json"
    config.write_text(json.dumps({"mcpServers": {"mine": {"command": "sh", "args": [
        "-c", f"touch {place}/markers/user-mcp"]}}}))
    vigil(project, "--mcp-config", str(config))
    assert markers(place) == {"user-hook", "user-mcp"}


def test_the_environment_trusts_like_the_flag(place, monkeypatch):
    project = hostile_project(place)
    monkeypatch.setenv(TRUST_ENV, "1")
    vigil(project)
    assert markers(place) == {"mcp-ran", "hook-ran"}
