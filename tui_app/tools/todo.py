"""TodoWrite: the session's todo list. The model sends the whole list each time; the screen shows
it from the `TodoUpdated` event (the log keeps every version, so a resumed session has it too)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tui_app.runtime.contract import PermissionSpec, RawResult, StrictInput, ToolContext, ToolFlags, ToolSpec
from tui_app.runtime.display import TodoItem, TodoListDisplay
from tui_app.runtime.events import TodoUpdated

DESCRIPTION = "\n".join([
    "Creates and updates the todo list for this session, to plan and track multi-step work; the user sees it.",
    "",
    "- Send the whole list every time (it replaces the previous one).",
    "- Each item: content (imperative, e.g. \"Run the tests\"), activeForm (present continuous, shown while "
    "it runs, e.g. \"Running the tests\") and status: pending, in_progress or completed.",
    "- Keep exactly one item in_progress while working; mark an item completed as soon as it is done.",
    "- Skip it for a single trivial step.",
])

RESULT_TEXT = ("Todos have been modified successfully. Ensure that you continue to use the todo list to track "
               "your progress. Please proceed with the current tasks if applicable")


class TodoEntry(StrictInput):
    content: str = Field(min_length=1, description="What to do, in the imperative")
    status: Literal["pending", "in_progress", "completed"]
    activeForm: str = Field(min_length=1, description="The same, in the present continuous (shown while in progress)")


class TodoWriteInput(StrictInput):
    todos: list[TodoEntry] = Field(description="The updated todo list")


class TodoList:
    """The session service "todos": the list as the model last wrote it."""

    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []


async def todo_write(args: TodoWriteInput, ctx: ToolContext) -> RawResult:
    todos = [entry.model_dump() for entry in args.todos]
    store: TodoList | None = ctx.service("todos")
    old = store.items if store is not None else []
    if store is not None:
        store.items = todos
    if ctx.emit is not None:
        ctx.emit(TodoUpdated(call_id=ctx.call_id, todos=todos))
    display = TodoListDisplay(todos=[TodoItem(content=t["content"], status=t["status"],  # type: ignore[arg-type]
                                              active_form=t["activeForm"]) for t in todos])
    return RawResult(output={"oldTodos": old, "newTodos": todos}, text=RESULT_TEXT, display=display)


TODO_WRITE = ToolSpec(
    name="TodoWrite",
    description=DESCRIPTION,
    handler=todo_write,
    input_model=TodoWriteInput,
    # read-only for the workspace, but it changes the session: not "effectively read-only"
    flags=ToolFlags(read_only=True, concurrency_safe=False, side_effect_scope="session", needs_approval=False,
                    risk="low"),
    permission=PermissionSpec(kind="other", reason="updates the session's todo list"),
)
