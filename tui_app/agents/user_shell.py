"""Shell mode: a prompt line that starts with `!` is a command the *user* runs, in their shell and
the session's cwd, not a tool call of the model (Claude Code's bash mode).

It runs like the Bash tool's foreground commands (its own process group, output streamed, a
big output kept as an artifact, everything stopped on Esc or exit), and shows as a Bash row
whose target starts with `!`, so the chat, the table and the Output tab show it as they show
any command. The model never proposed it, so no ToolCallRequested is emitted and the call never
enters the conversation as a tool_use; what enters is a user message in Claude Code's form,
`<bash-input>` then `<bash-stdout>` / `<bash-stderr>`, which the model reads with the next prompt.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shlex
import shutil
import time
from typing import Any

from tui_app.runtime.contract import ProgressSink, ToolFlags
from tui_app.runtime.events import ToolCallError, ToolCallProgress, ToolCallResult, ToolCallStarted, UserMessage
from tui_app.runtime.executor import TurnControl
from tui_app.tools.bash.output import OutputCollector
from tui_app.tools.bash.shell_run import ShellRun
from tui_app.tools.bash.tool import GRACE_S, display_of

USER_FLAGS = ToolFlags(side_effect_scope="system", needs_approval=False, risk="medium")
#: what the model gets of each stream (Bash's budget); the Output tab and the artifact keep all
CONTEXT_BUDGET = 30_000
SHELL_MARK = "!"


def is_shell_line(text: str) -> bool:
    return text.startswith(SHELL_MARK) and bool(text[1:].strip())


def shell_command(text: str) -> str:
    return text[1:].strip()


def user_shell_wrapper(command: str) -> str:
    """The command as the user's own shell runs it ($SHELL when it is not bash: zsh, fish …)."""
    shell = os.environ.get("SHELL", "")
    if not shell or os.path.basename(shell) in ("bash", "sh") or not shutil.which(shell):
        return command
    return f"exec {shlex.quote(shell)} -c {shlex.quote(command)}"


async def run_user_command(session: Any, command: str, control: TurnControl) -> int | None:
    """Run `command` for the user; returns its exit code (None when it could not start or was
    stopped). Every event goes through the session: the log, the screen and `--resume` see it.

    The command holds the session the way a turn does (the controller holds the session with
    `control` while it runs), so Esc stops it and closing the app stops it."""
    return await _run(session, command, control)


async def _run(session: Any, command: str, control: TurnControl) -> int | None:
    emit = session.emit
    call_id = f"shell_{secrets.token_hex(6)}"
    emit(ToolCallStarted(call_id=call_id, tool="Bash", input={"command": command}, target=f"{SHELL_MARK}{command}",
                         flags=USER_FLAGS))
    sink = ProgressSink(lambda **kw: emit(ToolCallProgress(call_id=call_id, **kw)))
    collector = OutputCollector(artifacts=session.services.get("artifacts"), call_id=call_id, progress=sink)
    began = time.monotonic()
    try:
        # the user's own command gets the user's whole environment (the model's commands do not)
        run = await ShellRun.start(user_shell_wrapper(command), session.cwd, dict(os.environ), collector.feed,
                                   GRACE_S)
    except OSError as exc:
        collector.finish()
        message = f"Could not start the shell in {session.cwd}: {exc.strerror or exc}"
        emit(ToolCallError(call_id=call_id, tool="Bash", model_content=message, phase="execute",
                           code="execution_failed", message=message))
        emit(UserMessage(text=_context(command, "", message), source="shell"))
        return None
    stopped = False
    try:
        stopped = await _exit_or_abort(run, control)
        if stopped:
            await run.stop(GRACE_S)
        else:
            await run.settle(GRACE_S)
    except BaseException:
        await run.stop(GRACE_S)  # the app is closing: nothing outlives it
        raise
    finally:
        run.release()
        got = collector.finish()
        sink.closed = True
    code = None if stopped else run.exit_code
    display = display_of(command, got, began, exit_code=code, interrupted=stopped)
    artifacts = [got.artifact] if got.artifact is not None else []
    if stopped:
        emit(ToolCallError(call_id=call_id, tool="Bash", model_content="Interrupted by the user", display=display,
                           phase="cancel", code="cancelled", message="interrupted", side_effects="unknown",
                           artifacts=artifacts))
    else:
        emit(ToolCallResult(call_id=call_id, tool="Bash", model_content=got.tail, display=display,
                            artifacts=artifacts, original_bytes=got.total_bytes))
    stderr = got.stderr + ("\n[interrupted by the user]" if stopped else "") + (
        f"\n[exit code {code}]" if code not in (0, None) else "")
    emit(UserMessage(text=_context(command, got.stdout, stderr), source="shell"))
    return code


async def _exit_or_abort(run: ShellRun, control: TurnControl) -> bool:
    """Wait for the command to exit or the user to stop it; True when stopped."""
    exited = asyncio.ensure_future(run.wait_exit(None))
    aborted = asyncio.ensure_future(control.aborted.wait())
    try:
        await asyncio.wait({exited, aborted}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (exited, aborted):
            task.cancel()
    return control.is_aborted and run.returncode is None


def _cut(text: str, budget: int) -> str:
    if len(text) <= budget:
        return text
    half = budget // 2
    return f"{text[:half]}\n[... {len(text) - budget} characters left out ...]\n{text[-half:]}"


def _context(command: str, stdout: str, stderr: str) -> str:
    """The user message the model reads with the next prompt (Claude Code's tags)."""
    return (f"<bash-input>{command}</bash-input>\n<bash-stdout>{_cut(stdout.rstrip(), CONTEXT_BUDGET)}</bash-stdout>"
            f"<bash-stderr>{_cut(stderr.strip(), CONTEXT_BUDGET // 3)}</bash-stderr>")
