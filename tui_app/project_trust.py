"""Trust before code: what a project's own files would run — its `.mcp.json` servers, the MCP
servers and hooks of its settings files (`.claude/settings*.json`, `.vigil/settings*.json`) —
runs only once the user trusts the project (docs/architecture.md, the security boundary).

* The TUI asks once (what will run, Trust / Don't trust); the answer is remembered per project
  path *and* per hash of those files and of the hook scripts they name, in VIGIL_HOME/trust.json:
  a changed file asks again.
* Headless (`-p`, the Agent SDKs' stream-json, `vigil acp`) asks nobody: `--trust-project` (or
  `VIGIL_TRUST_PROJECT=1`) trusts it for the run, and so does an earlier "Trust" in the TUI for
  the same files. For MCP, Claude Code's `enableAllProjectMcpServers` and
  `enabledMcpjsonServers` count too — read only from the user's own settings (`~/.claude`,
  Vigil's user settings, `--settings`), never from the project's: a project cannot trust itself.
  `disabledMcpjsonServers` keeps a server off even in a trusted project.
* Untrusted: the servers are not started (status `needs-trust`), the hooks are not run, and the
  session says so in a Warning (`project_untrusted`) that names each command.

What the user's own settings run (`~/.claude/settings.json`, `--mcp-config`, `--settings`) needs
no trust: the user wrote it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tui_app.runtime.events import Warning

#: the project's own files that can make Vigil run something
PROJECT_FILES = (".mcp.json", ".claude/settings.json", ".claude/settings.local.json", ".vigil/settings.json",
                 ".vigil/settings.local.json")
#: the environment's spelling of `--trust-project` (for programs that start Vigil: CI, an editor)
TRUST_ENV = "VIGIL_TRUST_PROJECT"
TRUST_FILE = "trust.json"


@dataclass(frozen=True)
class Runnable:
    """One thing the project would run: a hook command or an MCP server."""

    kind: Literal["hook", "mcp"]
    #: the hook's event, or the server's name
    name: str
    #: the command line (or a server's URL)
    command: str
    source: str

    def line(self) -> str:
        what = f"{self.name} hook" if self.kind == "hook" else f'MCP server "{self.name}"'
        return f"{what}: {self.command}"


def project_files(project: str) -> list[str]:
    return [os.path.join(project, rel) for rel in PROJECT_FILES]


def fingerprint(project: str, scripts: Iterable[str] = ()) -> str:
    """A hash of the project's files that can run something, and of the hook scripts they name."""
    digest = hashlib.sha256()
    for path in [*project_files(project), *sorted(set(scripts))]:
        digest.update(os.path.relpath(path, project).encode("utf-8", "surrogateescape") + b"\0")
        try:
            with open(path, "rb") as handle:
                digest.update(hashlib.sha256(handle.read()).digest())
        except OSError:
            digest.update(b"-")
    return digest.hexdigest()


def truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


class TrustStore:
    """VIGIL_HOME/trust.json: {"projects": {"/abs/path": {"sha256": "…", "trusted_at": 1.0}}}."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def trusted(self, project: str, digest: str) -> bool:
        entry = (self._read().get("projects") or {}).get(project)
        return isinstance(entry, dict) and entry.get("sha256") == digest

    def remember(self, project: str, digest: str) -> None:
        data = self._read()
        projects = data.get("projects") if isinstance(data.get("projects"), dict) else {}
        projects[project] = {"sha256": digest, "trusted_at": time.time()}
        data["projects"] = projects
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".trust-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2)
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise


@dataclass
class ProjectTrust:
    """The session's answer to "may this project run its own code?" (a session service)."""

    project: str
    digest: str
    #: what would run; empty: nothing to trust, nothing asked
    runnables: list[Runnable]
    store: TrustStore
    #: how it is trusted ("remembered", "--trust-project" …), or "" while it is not
    trusted_by: str = ""
    #: MCP servers the user's settings enable though the project is not trusted
    enabled_servers: frozenset[str] = frozenset()
    #: MCP servers the user's settings keep off in any case
    disabled_servers: frozenset[str] = frozenset()
    #: called when trust is given (the hooks held back are let run)
    on_grant: list[Callable[[], None]] = field(default_factory=list)
    announced: bool = False

    @property
    def trusted(self) -> bool:
        return bool(self.trusted_by) or not self.runnables

    @property
    def needs_answer(self) -> bool:
        """A screen should ask: something would run and nothing trusts it yet."""
        return not self.trusted

    def server_allowed(self, name: str) -> bool:
        return name not in self.disabled_servers and (self.trusted or name in self.enabled_servers)

    def grant(self, remember: bool = True) -> None:
        self.trusted_by = "the user"
        if remember:
            self.store.remember(self.project, self.digest)
        for callback in self.on_grant:
            callback()

    def held(self) -> list[Runnable]:
        if self.trusted:
            return []
        return [r for r in self.runnables if r.kind == "hook" or not self.server_allowed(r.name)]

    async def astart(self, session: Any) -> None:
        """Said once at the session's start, before any server or hook would have run."""
        held = self.held()
        if self.announced or not held:
            return
        self.announced = True
        lines = "\n".join(f"  {r.line()}" for r in held)
        session.emit(Warning(code="project_untrusted", message=(
            f"This project is not trusted, so its own hooks and MCP servers were not started:\n{lines}\n"
            "Trust it in the TUI's dialog, or run with --trust-project."),
            detail={"project": self.project, "sha256": self.digest,
                    "hooks": [r.command for r in held if r.kind == "hook"],
                    "mcp_servers": [r.name for r in held if r.kind == "mcp"]}))


def user_mcp_choices(source_values: Iterable[tuple[str, dict[str, Any]]], project: str
                     ) -> tuple[bool, frozenset[str], frozenset[str]]:
    """(enableAllProjectMcpServers, enabledMcpjsonServers, disabledMcpjsonServers) from the
    settings files that are not the project's own (later files win for the flag)."""
    own = set(project_files(project))
    enable_all, enabled, disabled = False, set(), set()
    for source, values in source_values:
        if source in own:
            continue
        if isinstance(values.get("enableAllProjectMcpServers"), bool):
            enable_all = values["enableAllProjectMcpServers"]
        for key, into in (("enabledMcpjsonServers", enabled), ("disabledMcpjsonServers", disabled)):
            names = values.get(key)
            if isinstance(names, list):
                into.update(n for n in names if isinstance(n, str))
    return enable_all, frozenset(enabled), frozenset(disabled)


def decide_trust(project: str, runnables: list[Runnable], scripts: Iterable[str], *, flag: bool,
                 source_values: Iterable[tuple[str, dict[str, Any]]], home: Path) -> ProjectTrust:
    store = TrustStore(home / TRUST_FILE)
    digest = fingerprint(project, scripts)
    enable_all, enabled, disabled = user_mcp_choices(source_values, project)
    trust = ProjectTrust(project, digest, runnables, store, enabled_servers=enabled, disabled_servers=disabled)
    if flag:
        trust.trusted_by = "--trust-project"
    elif truthy(os.environ.get(TRUST_ENV)):
        trust.trusted_by = TRUST_ENV
    elif runnables and store.trusted(project, digest):
        trust.trusted_by = "remembered"
    elif enable_all and all(r.kind == "mcp" for r in runnables):
        trust.trusted_by = "enableAllProjectMcpServers"
    elif enable_all:
        trust.enabled_servers = frozenset(r.name for r in runnables if r.kind == "mcp")
    return trust
