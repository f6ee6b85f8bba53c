"""Hooks an Agent SDK registers in `initialize`, run by asking the SDK (`hook_callback`).

    "hooks": {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 30,
                              "onFailure": "block"}]}

Each callback becomes one more handler of the session's hooks, beside the command hooks from
settings: it matches the same way, gets the same input (Claude Code's keys), and its answer is the
same JSON a command hook prints, read by the same code. So deny > ask > allow, rewrites, context
and `continue: false` work the same whoever answers. A callback that fails or times out decides
nothing, unless its matcher says `onFailure: "block"` (or a value Vigil does not know: Claude Code
reads those as block), and then it blocks as a hook's exit 2 would.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from tui_app.headless.control_protocol import ControlChannel, ControlError
from tui_app.runtime.hooks.command import CommandHooks
from tui_app.runtime.hooks.config import (
    DEFAULT_TIMEOUT_S,
    HOOK_EVENTS,
    HookConfig,
    HookHandler,
    MatcherGroup,
    compile_matcher,
)
from tui_app.runtime.hooks.process import ProcessResult


@dataclass(frozen=True)
class CallbackHandler(HookHandler):
    callback_id: str = ""
    on_failure: str = "continue"


class SdkHooks(CommandHooks):
    """The session's command hooks plus the SDK's callbacks."""

    channel: ControlChannel | None = None

    async def _execute(self, event: str, handler: HookHandler, data: bytes) -> ProcessResult:
        if not isinstance(handler, CallbackHandler) or self.channel is None:
            return await super()._execute(event, handler, data)
        payload = json.loads(data)
        began = time.perf_counter()
        try:
            answer = await self.channel.request(
                {"subtype": "hook_callback", "callback_id": handler.callback_id, "input": payload,
                 "tool_use_id": payload.get("tool_use_id")}, timeout_s=handler.timeout_s)
        except ControlError as exc:
            took = int((time.perf_counter() - began) * 1000)
            if handler.on_failure != "continue":
                return ProcessResult("exited", 2, "", f"hook callback {handler.callback_id} failed: {exc}", took)
            return ProcessResult("exited", 1, "", f"hook callback {handler.callback_id} failed: {exc}", took)
        took = int((time.perf_counter() - began) * 1000)
        if answer.get("async") is True:
            answer = {}  # an async hook answers later, if at all: it decides nothing now
        return ProcessResult("exited", 0, json.dumps(answer), "", took)


def sdk_hook_groups(spec: Any) -> list[MatcherGroup]:
    """The `hooks` of an initialize request as matcher groups of callback handlers. Events Vigil
    does not emit are ignored, as in settings."""
    groups: list[MatcherGroup] = []
    if not isinstance(spec, dict):
        return groups
    for event, entries in spec.items():
        if event not in HOOK_EVENTS or not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            matcher = entry.get("matcher") if isinstance(entry.get("matcher"), str) else None
            try:
                test = compile_matcher(matcher)
            except Exception:
                continue  # an SDK matcher that is not a valid expression matches nothing
            timeout = entry.get("timeout")
            timeout_s = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else DEFAULT_TIMEOUT_S
            on_failure = entry.get("onFailure") if isinstance(entry.get("onFailure"), str) else "continue"
            handlers = tuple(
                CallbackHandler(command=f"sdk-callback:{cid}", timeout_s=timeout_s, source="SDK (initialize)",
                                callback_id=cid, on_failure=on_failure)
                for cid in entry.get("hookCallbackIds") or [] if isinstance(cid, str))
            if handlers:
                groups.append(MatcherGroup(event, matcher, handlers, test))
    return groups


def install_sdk_hooks(session: Any, channel: ControlChannel, spec: Any) -> int:
    """Add the SDK's callbacks to the session's hooks; returns how many were registered."""
    groups = sdk_hook_groups(spec)
    if not groups:
        return 0
    current = session.hooks
    config = HookConfig()
    if isinstance(current, CommandHooks):
        config.extend([g for groups_of in current.config.groups.values() for g in groups_of])
    config.extend(groups)

    def aliases_of(name: str) -> tuple[str, ...]:
        spec = session.registry.resolve(name)
        return spec.aliases if spec is not None else ()

    hooks = SdkHooks(config, project_dir=getattr(current, "project_dir", session.cwd),
                     cwd=getattr(current, "cwd", session.cwd), emit=getattr(current, "emit", session.emit),
                     aliases_of=getattr(current, "aliases_of", aliases_of))
    if isinstance(current, CommandHooks):
        hooks.effort = current.effort
    hooks.channel = channel
    session.hooks = hooks
    return sum(len(g.handlers) for g in groups)
