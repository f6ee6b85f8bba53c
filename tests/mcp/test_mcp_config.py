"""MCP configuration: files, precedence, variable expansion, and what a user sees when an entry is wrong."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.mcp.helpers import of, run_vigil
from tui_app.mcp.config import config_sources, expand, load_mcp_config


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def sources(project: Path, tmp_path: Path, **options):
    return config_sources(str(project), home=tmp_path / "home", user_config_dir=tmp_path / "config", **options)


def test_variables_expand_with_defaults_and_unset_ones_stay_literal():
    env = {"HOST": "example.org", "EMPTY": ""}
    assert expand("https://${HOST}/mcp", env) == ("https://example.org/mcp", [])
    assert expand("${PORT:-8080}", env) == ("8080", [])
    assert expand("${EMPTY:-fallback}", env) == ("fallback", [])
    assert expand("Bearer ${API_KEY}", env) == ("Bearer ${API_KEY}", ["API_KEY"])
    assert expand("$HOST and ${HOST", env) == ("$HOST and ${HOST", [])


def test_mcp_json_entries_expand_everywhere_and_unset_variables_are_reported(tmp_path):
    project = tmp_path / "p"
    write(project / ".mcp.json", {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-filesystem", "${CLAUDE_PROJECT_DIR:-.}"],
                  "env": {"API_KEY": "${MY_API_KEY}"}},
        "remote": {"type": "http", "url": "${API_BASE_URL:-https://api.example.com}/mcp",
                   "headers": {"Authorization": "Bearer ${TOKEN}"}, "timeout": 5000}}})
    config = load_mcp_config(sources(project, tmp_path), env={"TOKEN": "t0k"}, project_dir=str(project))
    files, remote = config.servers["files"], config.servers["remote"]
    assert (files.transport, files.command, files.args) == ("stdio", "npx", ("-y", "server-filesystem", str(project)))
    assert files.env == {"API_KEY": "${MY_API_KEY}"}
    assert (remote.transport, remote.url, remote.headers) == (
        "http", "https://api.example.com/mcp", {"Authorization": "Bearer t0k"})
    assert remote.timeout_ms == 5000
    assert [str(p) for p in config.unset] == [
        f'{project / ".mcp.json"}: server "files": ${{MY_API_KEY}} is not set (left as written)']


def test_an_entry_with_a_url_but_no_type_is_a_clear_error(tmp_path):
    project = tmp_path / "p"
    mcp_json = write(project / ".mcp.json", {"mcpServers": {
        "remote": {"url": "https://example.org/mcp"},
        "odd": {"type": "websocket", "url": "wss://x"},
        "bare": {"args": ["x"]},
        "ok": {"type": "streamable-http", "url": "https://example.org/mcp"}}})
    config = load_mcp_config(sources(project, tmp_path), env={})
    assert str(config.invalid["remote"]) == (
        f'{mcp_json}: server "remote": has a "url" but no "type": add "type": "http" (streamable HTTP) '
        'or "type": "sse"')
    assert "unknown \"type\" 'websocket'" in config.invalid["odd"].reason
    assert config.invalid["bare"].reason == '"command" is missing'
    assert config.servers["ok"].transport == "http"
    assert list(config.servers) == ["ok"]


def test_later_sources_win_and_strict_keeps_only_the_command_line(tmp_path):
    project = tmp_path / "p"
    write(tmp_path / "home" / ".claude" / "settings.json",
          {"mcpServers": {"a": {"command": "from-user"}, "u": {"command": "user-only"}}})
    write(project / ".mcp.json", {"mcpServers": {"a": {"command": "from-mcp-json"}, "b": {"command": "b"}}})
    write(project / ".claude" / "settings.local.json", {"mcpServers": {"b": {"command": "from-local-settings"}}})
    cli = write(tmp_path / "cli.json", {"mcpServers": {"a": {"command": "from-cli"}}})

    merged = load_mcp_config(sources(project, tmp_path, mcp_config=[str(cli)]), env={})
    assert {n: s.command for n, s in merged.servers.items()} == {
        "a": "from-cli", "u": "user-only", "b": "from-local-settings"}
    assert merged.servers["a"].source == str(cli)

    strict = load_mcp_config(sources(project, tmp_path, mcp_config=[str(cli)], strict=True), env={})
    assert {n: s.command for n, s in strict.servers.items()} == {"a": "from-cli"}

    no_claude = load_mcp_config(sources(project, tmp_path, no_claude_settings=True), env={})
    assert {n: s.command for n, s in no_claude.servers.items()} == {"a": "from-mcp-json", "b": "b"}


def test_inline_json_is_accepted_by_mcp_config(tmp_path):
    inline = json.dumps({"mcpServers": {"x": {"command": "run-x"}}})
    config = load_mcp_config(sources(tmp_path, tmp_path, mcp_config=[inline], strict=True), env={})
    assert config.servers["x"].command == "run-x"
    assert config.servers["x"].source == "--mcp-config (inline JSON)"


def test_a_broken_mcp_config_file_stops_the_run_with_one_line(vigil_env, tmp_path, capsys):
    from tui_app.cli import main

    bad = write(tmp_path / "bad.json", '{"mcpServers": {"x": {"command": "a",}}}')
    assert main(["-p", "hi", "--mcp-config", str(bad), "--cwd", str(vigil_env)]) == 2
    err = capsys.readouterr().err
    assert err == f"vigil: invalid MCP config {bad}: is not valid JSON: Expecting property name enclosed in " \
                  "double quotes at line 1 column 38\n"

    typeless = write(tmp_path / "typeless.json", {"mcpServers": {"remote": {"url": "http://127.0.0.1:9/mcp"}}})
    assert main(["-p", "hi", "--mcp-config", str(typeless), "--cwd", str(vigil_env)]) == 2
    assert 'server "remote": has a "url" but no "type"' in capsys.readouterr().err

    missing = tmp_path / "missing.json"
    assert main(["-p", "hi", "--mcp-config", str(missing), "--cwd", str(vigil_env)]) == 2
    assert f"invalid MCP config {missing}: cannot be read: No such file or directory" in capsys.readouterr().err


def test_a_broken_project_file_is_reported_and_the_session_goes_on(vigil_env):
    write(vigil_env / ".mcp.json", {"mcpServers": {"remote": {"url": "http://127.0.0.1:9/mcp"}}})
    write(vigil_env / ".vigil" / "settings.json", "{not json")
    code, lines = run_vigil(vigil_env, [{"text": "fine"}], None, fmt="stream-json")
    assert code == 0
    init = lines[0]
    assert init["subtype"] == "init"
    assert init["mcp_servers"] == [{"name": "remote", "status": "failed"}]
    assert lines[-1]["result"] == "fine"

    code, events = run_vigil(vigil_env, [{"text": "fine"}], None)
    status = of(events, "McpServerStatus")
    assert [(s["server"], s["status"]) for s in status] == [("remote", "failed")]
    assert 'has a "url" but no "type"' in status[0]["message"]
    warnings = [w for w in of(events, "Warning") if w["code"] == "mcp_config_invalid"]
    assert len(warnings) == 1
    assert "settings.json: is not valid JSON: Expecting property name" in warnings[0]["message"]


def test_no_server_configured_means_the_mcp_sdk_is_never_imported(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    code = (
        "import sys, tui_app.tools\n"
        "tui_app.tools.builtin_tools = lambda: []\n"
        "from tui_app.assemble import SessionOptions, build_session\n"
        f"session = build_session(SessionOptions(cwd={str(project)!r}, persist=False))\n"
        "print('mcp' in session.services, 'mcp' in sys.modules)\n"
    )
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "VIGIL_HOME": str(tmp_path / "v"),
           "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True,
                         cwd=Path(__file__).parents[2])
    assert out.stdout.strip() == "False False"
