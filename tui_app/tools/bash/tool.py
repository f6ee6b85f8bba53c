"""Bash: run a command in the workspace, its output streamed live and kept whole; or start it in
the background and return at once.

Each call is a fresh `bash -c` in the workspace root (a `cd` inside a command does not carry over),
in its own session and process group with stdin closed. A timeout, an interrupt, or Vigil exiting
ends the whole group: TERM, then KILL after the grace. Output of any size goes to an artifact as it
arrives; the model sees it inline when it fits in 30000 bytes, else the persisted-output envelope
with the *tail* as preview (a failure shows the head too), and always the exit code of a failure.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import Field

from tui_app.runtime.contract import (
    ApprovalPreview,
    PermissionSpec,
    RawResult,
    StrictInput,
    TimeoutPolicy,
    ToolContext,
    ToolFailure,
    ToolFlags,
    ToolSpec,
    ToolTimedOut,
)
from tui_app.runtime.display import BashOutputDisplay
from tui_app.runtime.permissions.bash.git_guard import run_env
from tui_app.runtime.permissions.sandbox_secrets import scrub_env
from tui_app.runtime.results import budgets
from tui_app.runtime.results.serialize import cut_head_bytes, cut_tail_bytes, persisted_envelope, preview_head, utf8_len
from tui_app.runtime.timeouts import env_ms
from tui_app.tools.bash.exit_codes import is_failure
from tui_app.tools.bash.output import MODEL_BUDGET, Collected, OutputCollector
from tui_app.tools.bash.sandbox_run import Launch, sandbox_launch, sandbox_note
from tui_app.tools.bash.shell_run import ShellRun

GRACE_MS = 6000
GRACE_S = GRACE_MS / 1000
DEFAULT_TIMEOUT_MS = env_ms("BASH_DEFAULT_TIMEOUT_MS", 120_000)
MAX_TIMEOUT_MS = env_ms("BASH_MAX_TIMEOUT_MS", 600_000)
#: how much of the head a failure's persisted text shows
FAILURE_HEAD_CHARS = 1000

BASE_FLAGS = ToolFlags(read_only=False, concurrency_safe=False, side_effect_scope="system",
                       needs_approval=True, risk="high")

DESCRIPTION = f"""Run a shell command with bash in the workspace root and return its output.

- Every call starts in the workspace root; `cd` inside a command does not carry over to the next.
- stdin is closed: interactive commands (editors, pagers, prompts) cannot be used.
- Timeout: {DEFAULT_TIMEOUT_MS} ms by default; set `timeout` (ms, at most {MAX_TIMEOUT_MS}) for longer
  commands. On timeout the command and every process it started are stopped.
- Output over {MODEL_BUDGET} bytes is saved whole to a file; you get its path and the end of it.
- A non-zero exit status is reported as an error with `Exit code N` (exit 1 of grep, rg, find,
  diff, test, git diff and git grep is an answer, not an error).
- `run_in_background: true` starts a long-running command (a server, a watcher) and returns its id
  at once; read its new output with TaskOutput and stop it with TaskStop. Do not append `&`.
- Commands usually run in a sandbox: only the working directories and /tmp are writable, files
  that permission rules deny are hidden, and the network goes through a proxy that lets allowed
  hosts through (and asks the user about new ones). If a command fails because of the sandbox,
  the result says so; only then set `dangerouslyDisableSandbox: true` to run it outside — the user
  is always asked.
- Prefer the Read, Glob and Grep tools over cat, find and grep for looking at files."""


class BashInput(StrictInput):
    command: str = Field(description="The command to run")
    timeout: float | None = Field(default=None, gt=0,
                                  description=f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS})")
    description: str | None = Field(default=None,
                                    description="What this command does, in 5-10 words (shown to the user)")
    run_in_background: bool = Field(default=False,
                                    description="Run in the background; read its output later with TaskOutput")
    dangerouslyDisableSandbox: bool = Field(  # Claude Code's field name
        default=False, description="Run outside the sandbox (the user is always asked); only after a "
                                   "command failed because of the sandbox")


# ---- flags and approval ---------------------------------------------------------------------------

@cache
def _classifier() -> Callable[[str], ToolFlags] | None:
    """The read-only classifier, when the permissions module that provides it is present."""
    try:
        module = importlib.import_module("tui_app.runtime.permissions.bash.readonly")
    except ImportError:
        return None
    return getattr(module, "bash_flags", None)


def bash_flags_for(data: dict[str, Any]) -> ToolFlags:
    """Flags for this command: read-only commands are concurrency-safe and need no approval; a
    command the classifier cannot vouch for (or any failure to classify) is treated as a writer."""
    command = data.get("command")
    classify = _classifier()
    if classify is None or not isinstance(command, str):
        return BASE_FLAGS
    try:
        flags = classify(command)
    except Exception:
        return BASE_FLAGS
    return flags if isinstance(flags, ToolFlags) else BASE_FLAGS


def one_line(command: str, limit: int = 200) -> str:
    first = command.strip().splitlines()[0] if command.strip() else ""
    if len(first) > limit or first != command.strip():
        return first[:limit] + " …"
    return first


async def approval_preview(data: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
    command = data["command"]
    where = " (in the background)" if data.get("run_in_background") else ""
    sandbox = ctx.service("sandbox")
    if sandbox is not None and sandbox.runs_sandboxed(data):
        where += ", in the sandbox"
    elif sandbox is not None:
        where += ", OUTSIDE the sandbox"
    return ApprovalPreview(summary=f"Run `{one_line(command)}` in {ctx.cwd}{where}", kind="command",
                           body=command, risk=bash_flags_for(data).risk if sandbox is None or
                           sandbox.runs_sandboxed(data) else "high")


async def check_input(args: BashInput, ctx: ToolContext) -> None:
    if not args.command.strip():
        raise ToolFailure("The command is empty.")
    if "\x00" in args.command:
        raise ToolFailure("The command contains a NUL byte, which cannot be passed to a shell.")


# ---- results --------------------------------------------------------------------------------------

@dataclass
class BashFacts:
    exit_code: int
    failed: bool
    collected: Collected
    note: str = ""


@dataclass
class BashRawResult(RawResult):
    """A RawResult that remembers what the persisted text is built from."""

    facts: BashFacts | None = None


def shell_env(ctx: ToolContext | None = None) -> dict[str, str]:
    """The user's environment without what looks like a secret (provider keys, tokens, cloud
    credentials: `sandbox_secrets`), sandboxed or not, but for what `sandbox.env.keep` names.
    Nothing of Vigil's own is added to it."""
    sandbox = ctx.service("sandbox") if ctx is not None else None
    keep = getattr(getattr(sandbox, "settings", None), "env_keep", ())
    return scrub_env(os.environ, keep)


def command_env(command: str, ctx: ToolContext | None = None) -> dict[str, str]:
    """The environment one command runs with: a command the classifier calls read-only (the only
    kind that runs without asking when there is no rule for it) runs git with the programs its
    configuration names switched off (see docs/architecture.md, the git guard)."""
    env = shell_env(ctx)
    return run_env(env) if bash_flags_for({"command": command}).read_only else env


def display_of(command: str, got: Collected, began: float, *, exit_code: int | None = None,
               timed_out: bool = False, interrupted: bool = False) -> BashOutputDisplay:
    return BashOutputDisplay(
        command=command, segments=got.segments, exit_code=exit_code,
        duration_ms=int((time.monotonic() - began) * 1000), interrupted=interrupted, timed_out=timed_out,
        total_bytes=got.total_bytes, truncated=got.truncated or got.total_bytes > MODEL_BUDGET,
        artifact_uri=got.artifact.uri if got.artifact is not None else None,
    )


def stray_note(strays: set[int]) -> str:
    if not strays:
        return ""
    return (f"\n[Vigil stopped {len(strays)} background process(es) that were still attached to this command's "
            "output. Use run_in_background for processes that should keep running.]")


def model_body(got: Collected, exit_line: str, note: str) -> str:
    """The model's text. Over budget with an artifact: head … tail (the envelope is made later, by
    `format_persisted`). Over budget with no artifact: cut here, keeping the exit code and the tail."""
    if got.complete_text is not None and (got.artifact is not None or utf8_len(got.complete_text) <= MODEL_BUDGET):
        return exit_line + got.complete_text + note
    if got.artifact is not None:
        return f"{exit_line}{got.head}\n\n[... {got.omitted_bytes} bytes omitted ...]\n\n{got.tail}{note}"
    why = f"; it could not be saved: {got.artifact_error}" if got.artifact_error else ""
    head = cut_head_bytes(got.head, 2000)
    marker = f"\n\n[... output cut: {got.total_bytes} bytes in all{why} ...]\n\n"
    room = MODEL_BUDGET - utf8_len(exit_line) - utf8_len(head) - utf8_len(marker) - utf8_len(note) - 16
    return exit_line + head + marker + cut_tail_bytes(got.tail, max(0, room)) + note


def format_persisted(raw: RawResult, text: str, path: str) -> str:
    facts = raw.facts if isinstance(raw, BashRawResult) else None
    if facts is None:
        return persisted_envelope(text, path, "tail")
    got = facts.collected
    lines = []
    if facts.failed:
        lines.append(f"Exit code {facts.exit_code}")
        head, more = preview_head(got.head, FAILURE_HEAD_CHARS)
        if head:
            lines += ["Output began with:", head + ("\n..." if more else ""), ""]
    lines.append(persisted_envelope(got.tail.rstrip("\n"), path, "tail", original_bytes=got.total_bytes))
    return "\n".join(lines) + facts.note


def result_of(command: str, got: Collected, exit_code: int, began: float, strays: set[int],
              launch: Launch | None = None) -> RawResult:
    failed = is_failure(command, exit_code)
    note = stray_note(strays) + (sandbox_note(launch, got, failed) if launch is not None else "")
    exit_line = f"Exit code {exit_code}\n" if failed else ""
    display = display_of(command, got, began, exit_code=exit_code)
    output = {"stdout": got.stdout, "stderr": got.stderr, "interrupted": False, "exit_code": exit_code}
    text = model_body(got, exit_line, note)
    return BashRawResult(
        output=output, text=text.rstrip("\n") if failed else text,
        display=display, is_error=failed, error_code="execution_failed",
        # a failed artifact travels as its error, so the runtime warns on every output format
        artifact=got.artifact or (OSError(got.artifact_error) if got.artifact_error else None),
        facts=BashFacts(exit_code, failed, got, note),
    )


# ---- running --------------------------------------------------------------------------------------

def _pause_deadline(ctx: ToolContext) -> None:
    """The runtime's watchdog must not fire while we are still cleaning up after our own timeout."""
    deadline = ctx.service("deadline")
    if deadline is not None and hasattr(deadline, "pause"):
        deadline.pause()


async def run_foreground(args: BashInput, ctx: ToolContext) -> RawResult:
    launch = await sandbox_launch(args, ctx, command_env(args.command, ctx))
    try:
        return await _run_foreground(args, ctx, launch)
    finally:
        if launch is not None:
            await launch.close()


async def _run_foreground(args: BashInput, ctx: ToolContext, launch: Launch | None) -> RawResult:
    collector = OutputCollector(artifacts=ctx.service("artifacts"), call_id=ctx.call_id, progress=ctx.progress)
    began = time.monotonic()
    try:
        env = launch.env if launch else command_env(args.command, ctx)
        run = await ShellRun.start(args.command, ctx.cwd, env, collector.feed, GRACE_S,
                                   wrap=launch.wrap if launch else None)
    except OSError as exc:
        collector.finish()
        raise ToolFailure(f"Could not start bash in {ctx.cwd}: {exc.strerror or exc}") from None
    limit_ms = ctx.timeout_ms
    timed_out = False
    strays: set[int] = set()
    try:
        if await run.wait_exit(limit_ms / 1000 if limit_ms else None):
            strays = await run.settle(GRACE_S)
        else:
            timed_out = True
            _pause_deadline(ctx)
            await run.stop(GRACE_S)
    except BaseException:
        await run.stop(GRACE_S)  # interrupted by the user (or broken): nothing outlives the call
        raise
    finally:
        run.release()
        got = collector.finish()
    if timed_out:
        raise ToolTimedOut(limit_ms or 0, partial=display_of(args.command, got, began, timed_out=True))
    exit_code = run.exit_code
    return result_of(args.command, got, exit_code if exit_code is not None else -1, began, strays, launch)


async def start_background(args: BashInput, ctx: ToolContext) -> RawResult:
    tasks = ctx.service("background_tasks")
    if tasks is None:
        raise ToolFailure("Background tasks are not available in this session.")
    launch = await sandbox_launch(args, ctx, command_env(args.command, ctx))
    try:
        task = await tasks.start(args.command, ctx.cwd, call_id=ctx.call_id, artifacts=ctx.service("artifacts"),
                                 env=launch.env if launch else command_env(args.command, ctx),
                                 wrap=launch.wrap if launch else None,
                                 on_end=launch.close if launch else None)
    except OSError as exc:
        if launch is not None:
            await launch.close()
        raise ToolFailure(f"Could not start bash in {ctx.cwd}: {exc.strerror or exc}") from None
    text = (f"Command running in background with ID: {task.id}\n"
            f"Its output is being written to: {task.path}\n"
            f"Read new output with TaskOutput (task_id \"{task.id}\"); stop it with TaskStop.")
    display = BashOutputDisplay(command=args.command, background_task_id=task.id, artifact_uri=task.uri)
    output = {"stdout": "", "stderr": "", "interrupted": False, "exit_code": None, "backgroundTaskId": task.id}
    return RawResult(output=output, text=text, display=display)


async def run_bash(args: BashInput, ctx: ToolContext) -> RawResult:
    if args.run_in_background:
        return await start_background(args, ctx)
    return await run_foreground(args, ctx)


BASH = ToolSpec(
    name="Bash",
    description=DESCRIPTION,
    handler=run_bash,
    input_model=BashInput,
    flags=BASE_FLAGS,
    permission=PermissionSpec(
        kind="bash", rule_key="command",
        reason="Bash runs processes that may change the workspace, git, the network or the system"),
    budget=budgets.BASH,
    timeout=TimeoutPolicy(default_ms=DEFAULT_TIMEOUT_MS, max_ms=MAX_TIMEOUT_MS, allow_call_override=True,
                          cleanup_grace_ms=GRACE_MS),
    cancellation_message="The user interrupted this command; it and every process it started were stopped.",
    validate_input=check_input,
    prepare_approval=approval_preview,
    flags_for=bash_flags_for,
    format_persisted=format_persisted,
)
