"""Built-in tools. Each module declares one ToolSpec; `builtin_tools()` lists them in menu order.
May import the runtime; never providers, agents, MCP or the app."""

from __future__ import annotations

from tui_app.runtime.contract import ToolSpec


def builtin_tools() -> list[ToolSpec]:
    from tui_app.tools.agent import AGENT
    from tui_app.tools.ask_user import ASK_USER_QUESTION
    from tui_app.tools.bash.task_output import TASK_OUTPUT
    from tui_app.tools.bash.task_stop import TASK_STOP
    from tui_app.tools.bash.tool import BASH
    from tui_app.tools.edit import EDIT, MULTI_EDIT
    from tui_app.tools.exit_plan_mode import EXIT_PLAN_MODE
    from tui_app.tools.glob import GLOB
    from tui_app.tools.grep.tool import GREP
    from tui_app.tools.read import READ
    from tui_app.tools.read_artifact import READ_ARTIFACT
    from tui_app.tools.todo import TODO_WRITE
    from tui_app.tools.web_fetch import WEB_FETCH
    from tui_app.tools.write import WRITE

    return [READ, GLOB, GREP, WRITE, EDIT, BASH, WEB_FETCH, TODO_WRITE, ASK_USER_QUESTION, READ_ARTIFACT,
            TASK_OUTPUT, TASK_STOP, MULTI_EDIT, EXIT_PLAN_MODE, AGENT]
