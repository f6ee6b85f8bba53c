"""What was approved in an agent's permission request, for the client calls that carry it out.

An ACP agent asks (`session/request_permission`) and then may do the work through Vigil: write
the file with `fs/write_text_file`, run the command in a `terminal/create`. Those pass Vigil's
policy again; what the user already approved in the request is not asked twice — but only when it
is exactly what was shown: the write's content byte for byte the text the dialog's diff ended in,
the terminal's command and environment exactly the approved ones. Anything else is a new
question. Each approval is used once and lasts until the turn ends.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from tui_app.runtime.files.state import file_key
from tui_app.runtime.permissions.decision import PermissionDecision, PermissionQuery

APPROVED_REASON = "approved in the agent's permission request for exactly this"


def write_key(path: str, content: str) -> tuple[str, str]:
    digest = hashlib.sha256(content.encode("utf-8", "surrogateescape")).hexdigest()
    return "write", f"{file_key(path)}\0{digest}"


def command_key(command: str, cwd: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    pairs = "\0".join(f"{k}={v}" for k, v in sorted((env or {}).items()))
    return "command", f"{command}\0{cwd}\0{pairs}"


def read_key(path: str) -> tuple[str, str]:
    return "read", file_key(path)


class Approvals:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[tuple[str, str]] = []

    def add(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._items.append(key)

    def take(self, key: tuple[str, str]) -> bool:
        with self._lock:
            if key in self._items:
                self._items.remove(key)
                return True
            return False

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


class ApprovedFirst:
    """The session's policy, with one difference: a call it would ask about is allowed when the
    user approved exactly it already (`key_of` names it). Deny rules, guards and the mode's
    denials still decide first, so a rule added since the approval still wins."""

    def __init__(self, policy: Any, approvals: Approvals, key_of: Any) -> None:
        self._policy = policy
        self._approvals = approvals
        self._key_of = key_of

    @property
    def mode(self) -> Any:
        return self._policy.mode

    @mode.setter
    def mode(self, value: Any) -> None:
        self._policy.mode = value

    def decide(self, query: PermissionQuery) -> PermissionDecision:
        decision = self._policy.decide(query)
        if decision.behavior == "ask":
            key = self._key_of(query)
            if key is not None and self._approvals.take(key):
                # the spellings stay: the write compares what it opens with what was decided
                return PermissionDecision("allow", "user", APPROVED_REASON, paths=decision.paths)
        return decision

    def __getattr__(self, name: str) -> Any:
        return getattr(self._policy, name)
