"""Plain words for an approval request: what will happen, and why Vigil is asking. No Textual.

The sentence is built from the resolved input and the preview the tool prepared, so it names
exactly what will run ("Run `npm test` in ~/proj", "Edit src/sum.ts: 1 line replaced").
"""

from __future__ import annotations

import os
from typing import Any

from tui_app.runtime.display import FileDiffDisplay, FileDiffsDisplay
from tui_app.runtime.events import PermissionRequested
from widgets.diff.model import describe_change
from widgets.text.formatting import plural, short_hash, tilde
from widgets.text.untrusted import one_line

COMMAND_IN_SENTENCE = 80
VERBS = {"create": "Create", "update": "Edit", "delete": "Delete"}
#: where "always allow" writes (docs/architecture.md §9.1)
LOCAL_SETTINGS = ".vigil/settings.local.json"


def relative(path: str, cwd: str | None) -> str:
    if cwd and os.path.isabs(path):
        try:
            rel = os.path.relpath(path, cwd)
        except ValueError:
            return tilde(path)
        if not rel.startswith(".."):
            return rel
    return tilde(path)


#: how the sentence about a command ends: where it will run
SANDBOX_WORDS = {True: ", in the sandbox", False: ", OUTSIDE the sandbox (it can change anything you can)"}


def describe_action(request: PermissionRequested, cwd: str | None = None) -> str:
    data: dict[str, Any] = request.input if isinstance(request.input, dict) else {}
    display = request.preview_display
    if isinstance(display, FileDiffDisplay):
        verb = VERBS.get(display.operation, "Edit")
        if request.tool == "Write" and display.operation == "update":
            verb = "Overwrite"
        change = describe_change(display.added, display.removed, display.operation)
        return f"{verb} {one_line(relative(display.path, cwd))}: {change}"
    if isinstance(display, FileDiffsDisplay) and display.files:
        names = ", ".join(one_line(relative(f.path, cwd), 60) for f in display.files[:4])
        more = f" and {len(display.files) - 4} more" if len(display.files) > 4 else ""
        return (f"Change {plural(len(display.files), 'file')}: {names}{more} "
                f"(+{display.added} −{display.removed})")
    command = data.get("command")
    if isinstance(command, str):
        lines = command.strip("\n").split("\n")
        shown = one_line(lines[0], COMMAND_IN_SENTENCE)
        more = f" (+{plural(len(lines) - 1, 'more line')})" if len(lines) > 1 else ""
        host = data.get("network_host")
        if isinstance(host, str):
            return f"Let `{shown}`{more} connect to {one_line(host, 200)} from the sandbox"
        where = f" in {tilde(cwd)}" if cwd else ""
        return f"Run `{shown}`{more}{where}{SANDBOX_WORDS.get(request.sandboxed, '')}"
    url = data.get("url")
    if isinstance(url, str):
        return f"Fetch {one_line(url, 200)}"
    for key in ("file_path", "notebook_path", "path"):
        if isinstance(data.get(key), str):
            return f"{one_line(request.tool)} {one_line(relative(data[key], cwd))}"
    return one_line(request.summary or f"Use {request.tool}", 200)


def describe_reason(request: PermissionRequested) -> str:
    reason = one_line(request.reason, 300)
    if request.decided_by == "agent" and reason:
        return reason  # an external agent's own question says who asks ("Claude Code asks: …")
    who = {
        "rule": "A permission rule asks before this call",
        "mode": "The permission mode asks before this call",
        "hook": "A PreToolUse hook asked for approval",
        "tool": "This tool always asks",
        "guard": "A safety guard asks before this call",
    }.get(request.decided_by, f"Asked by {request.decided_by}")
    return f"{who}: {reason}" if reason else who


def describe_facts(request: PermissionRequested) -> str:
    sandbox = {True: "sandboxed · ", False: "NOT sandboxed · "}.get(request.sandboxed, "") \
        if request.sandboxed is not None else ""
    return (f"{sandbox}risk {request.risk} · touches {request.side_effect_scope} · "
            f"input sha256 {short_hash(request.input_sha256)}")


def describe_always(rules: list[str]) -> str:
    saved = "\n".join(f"    {one_line(rule)}" for rule in rules)
    return (f"Always allow: {plural(len(rules), 'rule')} will be saved to {LOCAL_SETTINGS}\n{saved}\n"
            "Press a again to save and allow, Esc to go back.")
