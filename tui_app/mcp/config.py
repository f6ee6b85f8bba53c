"""MCP server configuration: `.mcp.json`, the `mcpServers` key of settings files, `--mcp-config`.

Claude Code's format (docs/architecture.md §9.4). No `type` means stdio; `http` (alias `streamable-http`)
and the legacy `sse` connect over HTTP. `${VAR}` and `${VAR:-default}` expand in `command`,
`args`, `env`, `cwd`, `url` and `headers`; an unset variable with no default stays literal and
is reported. Nothing here imports the MCP SDK: a project without servers never pays for it.

Sources, lowest priority first (a later entry with the same name replaces an earlier one):
user settings files, the project's `.mcp.json`, project settings files, `--settings FILE`, then
each `--mcp-config` in order. `--strict-mcp-config` keeps only the `--mcp-config` sources.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Transport = Literal["stdio", "http", "sse"]
SourceKind = Literal["settings", "mcp_json", "cli"]

_TYPES: dict[str, Transport] = {"stdio": "stdio", "http": "http", "streamable-http": "http", "sse": "sse"}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class ServerConfig:
    name: str
    transport: Transport
    source: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    #: the server's own tool timeout in ms (`timeout` in the entry)
    timeout_ms: int | None = None


@dataclass(frozen=True)
class ConfigProblem:
    source: str
    reason: str
    server: str | None = None

    def __str__(self) -> str:
        where = f'{self.source}: server "{self.server}"' if self.server else self.source
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class ConfigSource:
    kind: SourceKind
    #: a file path, or the JSON text itself for an inline `--mcp-config '{...}'`
    location: str

    @property
    def label(self) -> str:
        return "--mcp-config (inline JSON)" if self.is_inline else self.location

    @property
    def is_inline(self) -> bool:
        return self.kind == "cli" and self.location.lstrip().startswith("{")


@dataclass
class McpConfig:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    #: entries that name a server but cannot be used: listed as failed servers with the reason
    invalid: dict[str, ConfigProblem] = field(default_factory=dict)
    #: whole files that could not be read or parsed
    file_problems: list[ConfigProblem] = field(default_factory=list)
    #: `${VAR}` references to unset variables (left literal)
    unset: list[ConfigProblem] = field(default_factory=list)
    #: the sources that were read (files that exist, inline JSON)
    sources: list[str] = field(default_factory=list)
    #: labels of the `--mcp-config` sources
    cli_labels: set[str] = field(default_factory=set)

    @property
    def empty(self) -> bool:
        return not (self.servers or self.invalid or self.file_problems or self.unset)

    def cli_problems(self) -> list[ConfigProblem]:
        """Problems in `--mcp-config` sources: the user named them on the command line, so they stop the start."""
        found = [p for p in self.file_problems if p.source in self.cli_labels]
        return found + [p for p in self.invalid.values() if p.source in self.cli_labels]


# ---- variables -----------------------------------------------------------------------------------

def expand(text: str, env: Mapping[str, str]) -> tuple[str, list[str]]:
    """`${VAR}` / `${VAR:-default}` → value. Returns the text and the names of unset variables
    (those stay literal: a visible `${API_KEY}` in an error beats an empty string that hides it)."""
    unset: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value:
            return value
        if default is not None:
            return default
        if value is not None:  # set but empty, no default: the empty value is what the user set
            return value
        unset.append(name)
        return match.group(0)

    return _VAR.sub(replace, text), unset


# ---- one entry -----------------------------------------------------------------------------------

class _EntryError(ValueError):
    pass


def _string(entry: Mapping[str, Any], key: str, required: bool = False) -> str | None:
    value = entry.get(key)
    if value is None:
        if required:
            raise _EntryError(f'"{key}" is missing')
        return None
    if not isinstance(value, str):
        raise _EntryError(f'"{key}" must be a string')
    if required and not value.strip():
        raise _EntryError(f'"{key}" is empty')
    return value


def _string_list(entry: Mapping[str, Any], key: str) -> list[str]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _EntryError(f'"{key}" must be a list of strings')
    return value


def _string_map(entry: Mapping[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _EntryError(f'"{key}" must be an object of strings')
    return value


def _timeout(entry: Mapping[str, Any]) -> int | None:
    value = entry.get("timeout")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise _EntryError('"timeout" must be a positive number of milliseconds')
    return int(value)


def parse_entry(name: str, entry: Any, source: str, env: Mapping[str, str]) -> tuple[ServerConfig, list[str]]:
    """One `mcpServers` entry → a ServerConfig and the unset variables it uses. Raises _EntryError."""
    if not name.strip():
        raise _EntryError("a server needs a non-empty name")
    if not isinstance(entry, dict):
        raise _EntryError("the entry must be an object")
    kind = entry.get("type")
    if kind is None:
        if "url" in entry:
            raise _EntryError('has a "url" but no "type": add "type": "http" (streamable HTTP) or "type": "sse"')
        kind = "stdio"
    if not isinstance(kind, str) or kind not in _TYPES:
        raise _EntryError(f'unknown "type" {kind!r}: use "stdio", "http" (or "streamable-http") or "sse"')
    transport = _TYPES[kind]
    unset: list[str] = []

    def x(text: str) -> str:
        value, missing = expand(text, env)
        unset.extend(missing)
        return value

    timeout_ms = _timeout(entry)
    if transport == "stdio":
        command = _string(entry, "command", required=True)
        args = _string_list(entry, "args")
        server_env = _string_map(entry, "env")
        cwd = _string(entry, "cwd")
        config = ServerConfig(
            name=name, transport="stdio", source=source, command=x(command or ""), args=tuple(x(a) for a in args),
            env={k: x(v) for k, v in server_env.items()}, cwd=x(cwd) if cwd else None, timeout_ms=timeout_ms)
    else:
        url = _string(entry, "url", required=True)
        headers = _string_map(entry, "headers")
        config = ServerConfig(name=name, transport=transport, source=source, url=x(url or ""),
                              headers={k: x(v) for k, v in headers.items()}, timeout_ms=timeout_ms)
    return config, list(dict.fromkeys(unset))


# ---- files ---------------------------------------------------------------------------------------

def config_sources(cwd: str, *, settings_file: str | None = None, no_claude_settings: bool = False,
                   mcp_config: list[str] | tuple[str, ...] = (), strict: bool = False,
                   home: Path | None = None, user_config_dir: Path | None = None) -> list[ConfigSource]:
    cli = [ConfigSource("cli", value) for value in mcp_config]
    if strict:
        return cli
    project = Path(cwd)
    home = home if home is not None else Path.home()
    if user_config_dir is None:
        import platformdirs

        user_config_dir = Path(platformdirs.user_config_dir("vigil", appauthor=False))
    claude = not no_claude_settings
    user = [home / ".claude" / "settings.json"] if claude else []
    user.append(user_config_dir / "settings.json")
    project_files = [
        *([project / ".claude" / "settings.json"] if claude else []),
        project / ".vigil" / "settings.json",
        *([project / ".claude" / "settings.local.json"] if claude else []),
        project / ".vigil" / "settings.local.json",
    ]
    sources = [ConfigSource("settings", str(p)) for p in user]
    sources.append(ConfigSource("mcp_json", str(project / ".mcp.json")))
    sources += [ConfigSource("settings", str(p)) for p in project_files]
    if settings_file:
        sources.append(ConfigSource("settings", settings_file))
    return sources + cli


def _read(source: ConfigSource) -> Any:
    """The parsed JSON of a source, None when an optional file is absent. Raises _EntryError."""
    if source.is_inline:
        text = source.location
    else:
        path = Path(source.location).expanduser()
        if not path.exists() and source.kind != "cli":
            return None
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise _EntryError(f"cannot be read: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _EntryError(f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def load_mcp_config(sources: list[ConfigSource], env: Mapping[str, str] | None = None,
                    project_dir: str | None = None) -> McpConfig:
    """Read every source and merge the servers; never raises (problems are collected)."""
    env = dict(os.environ if env is None else env)
    if project_dir:
        # the same names hooks get, so `${CLAUDE_PROJECT_DIR:-.}` in a shared .mcp.json works
        env.setdefault("CLAUDE_PROJECT_DIR", project_dir)
        env.setdefault("VIGIL_PROJECT_DIR", project_dir)
    out = McpConfig()
    for source in sources:
        label = source.label
        if source.kind == "cli":
            out.cli_labels.add(label)
        try:
            data = _read(source)
        except _EntryError as exc:
            out.file_problems.append(ConfigProblem(label, str(exc)))
            continue
        if data is None:
            continue
        out.sources.append(label)
        if not isinstance(data, dict):
            out.file_problems.append(ConfigProblem(label, "must be a JSON object"))
            continue
        servers = data.get("mcpServers")
        if servers is None:
            if source.kind != "settings":
                out.file_problems.append(ConfigProblem(label, 'has no "mcpServers" object'))
            continue
        if not isinstance(servers, dict):
            out.file_problems.append(ConfigProblem(label, '"mcpServers" must be an object'))
            continue
        for name, entry in servers.items():
            try:
                config, unset = parse_entry(name, entry, label, env)
            except _EntryError as exc:
                out.servers.pop(name, None)
                out.invalid[name] = ConfigProblem(label, str(exc), name)
                continue
            out.invalid.pop(name, None)
            out.servers[name] = config
            out.unset = [p for p in out.unset if p.server != name]
            out.unset += [ConfigProblem(label, f"${{{var}}} is not set (left as written)", name) for var in unset]
    return out
