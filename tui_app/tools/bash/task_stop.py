"""TaskStop (legacy name KillShell): stop a background task and every process it started."""

from __future__ import annotations

from pydantic import Field

from tui_app.runtime.contract import (
    PermissionSpec,
    RawResult,
    StrictInput,
    TimeoutPolicy,
    ToolContext,
    ToolFlags,
    ToolSpec,
)
from tui_app.runtime.display import BashOutputDisplay
from tui_app.tools.bash.task_output import find_task, tasks_of


class TaskStopInput(StrictInput):
    task_id: str | None = Field(default=None, description="The id of the background task to stop")
    shell_id: str | None = Field(default=None, description="Legacy name for task_id")

    @property
    def id(self) -> str:
        return self.task_id or self.shell_id or ""


async def check_input(args: TaskStopInput, ctx: ToolContext) -> None:
    find_task(ctx, args.id)


async def stop_task(args: TaskStopInput, ctx: ToolContext) -> RawResult:
    tasks = tasks_of(ctx)
    task = find_task(ctx, args.id)
    stopped = await tasks.stop(task)
    if stopped:
        text = f"Stopped background task {task.id} ({task.command}). Its output is in {task.path}"
    else:
        code = f", exit code {task.exit_code}" if task.exit_code is not None else ""
        text = f"Background task {task.id} had already ended ({task.status}{code}). Its output is in {task.path}"
    display = BashOutputDisplay(command=task.command, exit_code=task.exit_code, total_bytes=task.bytes,
                                interrupted=stopped, artifact_uri=task.uri, background_task_id=task.id)
    return RawResult(output={"task_id": task.id, "stopped": stopped, "status": task.status,
                             "exit_code": task.exit_code}, text=text, display=display)


TASK_STOP = ToolSpec(
    name="TaskStop",
    description="Stop a background task started with Bash(run_in_background), with every process it started.",
    handler=stop_task,
    input_model=TaskStopInput,
    aliases=("KillShell",),
    # it only ends processes this session started itself
    flags=ToolFlags(read_only=False, concurrency_safe=False, side_effect_scope="system", needs_approval=False,
                    risk="low"),
    permission=PermissionSpec(kind="other", reason="Stops a task this session started"),
    timeout=TimeoutPolicy(default_ms=30_000),
    validate_input=check_input,
)
