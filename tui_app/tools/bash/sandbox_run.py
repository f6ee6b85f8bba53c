"""The Bash tool's side of the sandbox: whether this call is wrapped, setting it up, and what its
result says when the sandbox is why it failed.

The permission stage decided whether the call runs sandboxed (`ctx.sandboxed`); that decision is
final here: a call decided sandboxed never runs without the sandbox (if bubblewrap cannot start,
the call fails). With no decision (a session whose policy knows no sandbox) the service decides.
"""

from __future__ import annotations

from typing import Any

from tui_app.runtime.contract import ToolContext, ToolFailure
from tui_app.runtime.permissions.network_ask import network_asker
from tui_app.tools.bash.sandbox import Launch, prepare

#: what commands print when the sandbox stopped them
SANDBOX_SYMPTOMS = ("Read-only file system", "Permission denied", "Operation not permitted",
                    "Could not resolve host", "Temporary failure in name resolution", "Network is unreachable",
                    "Name or service not known", "blocked the connection", "No such file or directory")

__all__ = ["Launch", "sandbox_launch", "sandbox_note"]


async def sandbox_launch(args: Any, ctx: ToolContext, env: dict[str, str]) -> Launch | None:
    policy = ctx.service("sandbox")
    if policy is None:
        return None
    data = {"command": args.command, "dangerouslyDisableSandbox": args.dangerouslyDisableSandbox}
    sandboxed = ctx.sandboxed if ctx.sandboxed is not None else policy.runs_sandboxed(data)
    if not sandboxed:
        if policy.required and not policy.active:
            raise ToolFailure("The sandbox is required (sandbox.failIfUnavailable) but cannot run here: "
                              f"{policy.unavailable_reason or 'bubblewrap is not available'}. The command was not run.")
        return None
    ask = network_asker(ctx.service("approval_broker"), ctx.emit, call_id=ctx.call_id, tool=ctx.tool_name,
                        command=args.command, remember=getattr(policy, "remember", None))
    try:
        return await prepare(policy, ctx.cwd, env, args.command, ask=ask)
    except OSError as exc:
        raise ToolFailure(f"The sandbox could not be set up, so the command was not run: {exc}") from None


def sandbox_note(launch: Launch, got: Any, failed: bool) -> str:
    """A sentence for the model when the sandbox probably stopped the command."""
    notes = []
    if launch.blocked_hosts:
        notes.append(f"The sandbox blocked network access to {', '.join(launch.blocked_hosts)} (not in "
                     "sandbox.network.allowedDomains, and not allowed when asked).")
    output = f"{got.head}\n{got.tail}\n{got.stderr}"
    if got.stderr.lstrip().startswith("bwrap:"):
        notes.append("The sandbox itself could not be set up (the bwrap error is above).")
    elif failed and not notes and any(symptom in output for symptom in SANDBOX_SYMPTOMS):
        writable = ", ".join(launch.layout.writable) or "none"
        notes.append(f"This command ran in Vigil's sandbox: only {writable} and a private /tmp are writable, "
                     "settings, hooks, .mcp.json and .git/hooks are read-only, files Read deny rules cover are "
                     "hidden, and the network goes through a proxy. The error above may come from the sandbox, "
                     "not from the command.")
    if not notes:
        return ""
    if launch.unsandboxed_allowed:
        notes.append("If the command really needs more, run it again with dangerouslyDisableSandbox: true "
                     "(the user will be asked).")
    else:
        notes.append("Settings do not let commands run outside the sandbox (allowUnsandboxedCommands: false).")
    return "\n[" + " ".join(notes) + "]"
