"""TaskOutput (legacy name BashOutput): the new output of a background task, and its status.

By default it waits for the task to finish (up to `timeout`, 30 s) the way Claude Code's
TaskOutput does; `block: false` — or a legacy BashOutput call with `bash_id` — reads at once.
Each read returns what was written since the previous one, at most 30000 bytes (the latest); the
rest is in the task's artifact, whose path is given.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pydantic import Field

from tui_app.runtime.contract import (
    PermissionSpec,
    RawResult,
    ResultBudget,
    StrictInput,
    TimeoutPolicy,
    ToolContext,
    ToolFailure,
    ToolFlags,
    ToolSpec,
)
from tui_app.runtime.display import BashOutputDisplay, OutputSegment
from tui_app.runtime.results.sanitize import neutralize
from tui_app.tools.bash.tasks import BackgroundTask, BackgroundTasks

DEFAULT_WAIT_MS = 30_000
MAX_WAIT_MS = 600_000
READ_BYTES = 30_000


class TaskOutputInput(StrictInput):
    task_id: str | None = Field(default=None, description="The id of the background task (from Bash)")
    bash_id: str | None = Field(default=None, description="Legacy name for task_id")
    block: bool | None = Field(default=None, description="Wait for the task to finish first (default: true)")
    timeout: float | None = Field(default=None, gt=0,
                                  description=f"How long to wait when blocking, in ms (default {DEFAULT_WAIT_MS})")
    filter: str | None = Field(default=None, description=(
        "Optional regular expression: only new output lines that match are returned. The other lines are "
        "passed over and not returned by later reads (the task's full output stays in its file)."))

    @property
    def id(self) -> str:
        return self.task_id or self.bash_id or ""

    @property
    def blocking(self) -> bool:
        if self.block is not None:
            return self.block
        return self.task_id is not None  # BashOutput(bash_id) never waited

    @property
    def wait_ms(self) -> float:
        return min(self.timeout or DEFAULT_WAIT_MS, MAX_WAIT_MS)


def tasks_of(ctx: ToolContext) -> BackgroundTasks:
    tasks = ctx.service("background_tasks")
    if tasks is None:
        raise ToolFailure("Background tasks are not available in this session.")
    return tasks


def find_task(ctx: ToolContext, task_id: str) -> BackgroundTask:
    if not task_id:
        raise ToolFailure("Give the task_id of a background task.")
    task = tasks_of(ctx).get(task_id)
    if task is None:
        known = ", ".join(t.id for t in tasks_of(ctx).list()) or "none"
        raise ToolFailure(f"No background task with id {task_id} (tasks: {known}).")
    return task


def compiled_filter(args: TaskOutputInput) -> re.Pattern[str] | None:
    if args.filter is None:
        return None
    try:
        return re.compile(args.filter)
    except re.error as exc:
        raise ToolFailure(f"Invalid filter regular expression {args.filter!r}: {exc}") from None


async def check_input(args: TaskOutputInput, ctx: ToolContext) -> None:
    find_task(ctx, args.id)
    compiled_filter(args)


def status_text(task: BackgroundTask, status: str, exit_code: int | None, text: str, skipped: int) -> str:
    lines = [f"<task_id>{task.id}</task_id>", f"<status>{status}</status>"]
    if exit_code is not None:
        lines.append(f"<exit_code>{exit_code}</exit_code>")
    if skipped:
        lines.append(f"[{skipped} earlier bytes of new output skipped; the whole output is in {task.path}]")
    if task.write_error:
        lines.append(f"[the output could not be saved completely: {task.write_error}]")
    lines.append(f"<output>\n{text.rstrip(chr(10))}\n</output>" if text else "<output>(no new output)</output>")
    return "\n".join(lines)


async def read_task_output(args: TaskOutputInput, ctx: ToolContext) -> RawResult:
    tasks = tasks_of(ctx)
    task = find_task(ctx, args.id)
    if args.blocking:
        await tasks.wait(task, args.wait_ms / 1000)
    pattern = compiled_filter(args)
    if pattern is None:
        new = tasks.read_new(task, READ_BYTES)
    else:  # every new line is scanned: not on the event loop
        new = await asyncio.to_thread(tasks.read_new_matching, task, pattern, READ_BYTES)
    display = BashOutputDisplay(
        command=task.command, segments=[OutputSegment(stream="stdout", text=neutralize(new.text, keep_sgr=True))]
        if new.text else [], exit_code=new.exit_code, total_bytes=task.bytes, truncated=new.skipped > 0,
        artifact_uri=task.uri, background_task_id=task.id, interrupted=new.status == "killed",
    )
    output: dict[str, Any] = {"task_id": task.id, "status": new.status, "exit_code": new.exit_code,
                              "output": new.text, "skipped_bytes": new.skipped}
    return RawResult(output=output, text=status_text(task, new.status, new.exit_code, new.text, new.skipped),
                     display=display)


TASK_OUTPUT = ToolSpec(
    name="TaskOutput",
    description=("Read the new output of a background task started with Bash(run_in_background), and its "
                 "status. Waits for the task to finish first unless `block` is false (up to `timeout` ms)."),
    handler=read_task_output,
    input_model=TaskOutputInput,
    aliases=("BashOutput",),
    # reading moves the task's read position (session state), but touches nothing outside
    flags=ToolFlags(read_only=True, concurrency_safe=True, side_effect_scope="session", needs_approval=False,
                    risk="low"),
    permission=PermissionSpec(kind="other", reason="Reads the output of a task this session started"),
    budget=ResultBudget(max_model_bytes=40_000, max_inline_bytes=40_000, over_budget="truncate",
                        preview_end="tail"),
    timeout=TimeoutPolicy(default_ms=DEFAULT_WAIT_MS + 10_000, max_ms=MAX_WAIT_MS + 10_000),
    timeout_for=lambda data: min(float(data.get("timeout") or DEFAULT_WAIT_MS), MAX_WAIT_MS) + 10_000,
    validate_input=check_input,
)
