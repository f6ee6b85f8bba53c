"""An attacker's workbench: a canary workspace, a session assembled from real settings files the
way `vigil -p` builds one, and a way to put one tool call through it and see what it changed.

The workspace (all under one temporary root):

    proj/               the working directory (a git repository)
      secret/key        the canary secret, under `Read(./secret/**)`
      notes.txt src/app.py docs/secret_link (→ ../secret/key)
      hooks/check.sh    a hook script the settings name
      .vigil/settings.json  the settings under attack
    proj-evil/          a sibling whose name starts with the project's
    outside/outside.txt a second canary, outside the working directories
    home/               $HOME for the test (shell rc files live here)

A call "leaked" when a canary appears in anything it returned; it "had an effect" when any file
under the root (or a request to the loopback tripwire server) changed.
"""

from __future__ import annotations

import hashlib
import http.server
import itertools
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.runtime.session import Session

DENIED = {"permission_denied", "no_permission_client", "user_denied", "hook_denied"}
#: what the issue's attacker ran with
ATTACK_RULES = {"allow": ["Bash(echo *)"], "deny": ["Bash(rm *)", "Read(./secret/**)"]}
_ids = itertools.count(1)


class Tripwire:
    """A loopback HTTP server that records every request: a command that reaches it had network."""

    def __init__(self) -> None:
        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"tripped")

            def log_message(self, *args: Any) -> None:
                pass

        # 127.0.0.2, not .1: commands reach 127.0.0.1 and localhost directly (their own loopback
        # in the sandbox), so only another address shows whether the way out is closed
        self.host = "127.0.0.2"
        self.server = http.server.ThreadingHTTPServer((self.host, 0), Handler)
        self.url = f"http://{self.host}:{self.server.server_address[1]}"
        # a short poll: `shutdown()` waits for the loop to look, 0.5 s by default, in every test
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Canary:
    root: Path
    secret: str
    outside_secret: str
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def proj(self) -> Path:
        return self.root / "proj"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def fill(self, text: str) -> str:
        return (text.replace("{proj}", str(self.proj)).replace("{outside}", str(self.outside))
                .replace("{root}", str(self.root)).replace("{home}", str(self.home)))

    def snapshot(self) -> dict[str, str]:
        """Every file, directory and link under the root, with its content's hash. `.git/index` is
        left out on purpose: `git status` refreshes its stat cache, which changes no content."""
        seen: dict[str, str] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            for name in dirnames + filenames:
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, self.root)
                if rel.endswith(os.path.join(".git", "index")) or rel.endswith(".lock"):
                    continue
                if os.path.islink(path):
                    seen[rel] = "link:" + os.readlink(path)
                elif os.path.isdir(path):
                    seen[rel] = "dir:" + oct(os.stat(path).st_mode & 0o7777)
                elif not os.path.isfile(path):
                    seen[rel] = "special:" + oct(os.stat(path).st_mode)  # a socket, a fifo: no content
                else:
                    with open(path, "rb") as handle:
                        digest = hashlib.sha256(handle.read()).hexdigest()
                    seen[rel] = f"file:{oct(os.stat(path).st_mode & 0o7777)}:{digest}"
        return seen


@pytest.fixture
def canary_root() -> Iterator[Path]:
    """A fresh directory outside /tmp: inside the sandbox /tmp is private, so a workspace (and its
    "outside" and home) under /var/tmp is seen the way a real project under $HOME is."""
    base = "/var/tmp" if os.path.isdir("/var/tmp") and os.access("/var/tmp", os.W_OK) else None
    root = Path(tempfile.mkdtemp(prefix="vigil-canary-", dir=base))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def make_canary(root: Path, settings: dict[str, Any] | None = None) -> Canary:
    """The workspace above, with fresh secrets, and `settings` as the project's settings file."""
    canary = Canary(root, "CANARY-" + secrets.token_hex(8), "OUTSIDE-" + secrets.token_hex(8))
    proj = canary.proj
    for d in ("secret", "src", "docs", "hooks", ".vigil"):
        (proj / d).mkdir(parents=True)
    (proj / "secret" / "key").write_text(canary.secret + "\n")
    (proj / "notes.txt").write_text("hello\nworld\n")
    (proj / "src" / "app.py").write_text("print('app')\n")
    (proj / "hooks" / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    os.symlink("../secret/key", proj / "docs" / "secret_link")
    (root / "proj-evil").mkdir()
    (root / "proj-evil" / "x.txt").write_text("evil\n")
    canary.outside.mkdir()
    (canary.outside / "outside.txt").write_text(canary.outside_secret + "\n")
    canary.home.mkdir()
    (canary.home / ".bashrc").write_text(f"# rc {canary.outside_secret}\n")
    (proj / ".gitignore").write_text("secret/\n")
    env = {**os.environ, "HOME": str(canary.home), "GIT_CONFIG_NOSYSTEM": "1"}
    for argv in (["git", "init", "-q"], ["git", "add", "-A"],
                 ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"]):
        subprocess.run(argv, cwd=proj, env=env, check=True)
    canary.settings = settings if settings is not None else attack_settings()
    write_settings(canary)
    return canary


def attack_settings(**sandbox: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"permissions": {k: list(v) for k, v in ATTACK_RULES.items()},
                            "hooks": {"PreToolUse": [{"matcher": "Nothing", "hooks": [
                                {"type": "command", "command": "hooks/check.sh"}]}]}}
    if sandbox:
        data["sandbox"] = sandbox
    return data


def write_settings(canary: Canary) -> None:
    (canary.proj / ".vigil" / "settings.json").write_text(json.dumps(canary.settings, indent=2))


def isolate(monkeypatch: Any, canary: Canary) -> None:
    """HOME, Vigil's home and the user config dir all inside the test's root."""
    monkeypatch.setenv("HOME", str(canary.home))
    monkeypatch.setenv("VIGIL_HOME", str(canary.root / "vigil-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(canary.home / ".config"))


def session_for(canary: Canary, mode: str = "default", add_dirs: tuple[str, ...] = (),
                interactive: bool = False, steps: list[dict[str, Any]] | None = None) -> Session:
    script = canary.root / "script.json"
    script.write_text(json.dumps({"steps": steps or [{"text": "ok"}]}))
    options = SessionOptions(cwd=str(canary.proj), script=str(script), no_claude_settings=True,
                             interactive=interactive, persist=False, permission_mode=mode)  # type: ignore[arg-type]
    if add_dirs:
        options.add_dirs = list(add_dirs)  # type: ignore[attr-defined]
    return build_session(options)


@dataclass
class Attempt:
    tool: str
    input: dict[str, Any]
    outcome: Any
    events: list[Any]
    changed: dict[str, tuple[str | None, str | None]]
    leaked: list[str]

    @property
    def denied(self) -> bool:
        return self.outcome.type == "ToolCallError" and self.outcome.code in DENIED

    @property
    def ran(self) -> bool:
        return any(e.type == "ToolCallStarted" for e in self.events)

    @property
    def sandboxed(self) -> bool:
        started = [e for e in self.events if e.type == "ToolCallStarted"]
        return bool(started) and bool(getattr(started[0], "sandboxed", False))

    def text(self) -> str:
        parts = [str(getattr(self.outcome, "model_content", "")), str(getattr(self.outcome, "message", ""))]
        parts += [getattr(e, "text", "") or "" for e in self.events if e.type == "ToolCallProgress"]
        return "\n".join(parts)

    def describe(self) -> str:
        code = getattr(self.outcome, "code", "ok")
        return (f"{self.tool} {self.input} → {self.outcome.type}/{code} ran={self.ran} sandboxed={self.sandboxed} "
                f"changed={self.changed} leaked={self.leaked}\n{self.text()[:600]}")


async def attempt(session: Session, canary: Canary, tool: str, data: dict[str, Any]) -> Attempt:
    """One call through the session's real pipeline; what it returned, changed and revealed."""
    before = canary.snapshot()
    events: list[Any] = []
    call_id = f"atk-{next(_ids)}"
    unsubscribe = session.subscribe(lambda e: events.append(e) if getattr(e, "call_id", None) == call_id else None)
    try:
        outcome = await run_call(ToolCall(id=call_id, name=tool, input=data), session.call_env(None))
    finally:
        unsubscribe()
    after = canary.snapshot()
    changed = {k: (before.get(k), after.get(k)) for k in set(before) | set(after) if before.get(k) != after.get(k)}
    found = Attempt(tool, data, outcome, events, changed, [])
    text = found.text()
    found.leaked = [s for s in (canary.secret, canary.outside_secret) if s in text]
    return found


async def open_session(canary: Canary, **kw: Any) -> Session:
    session = session_for(canary, **kw)
    await session.start()
    return session
