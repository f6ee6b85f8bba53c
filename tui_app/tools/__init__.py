"""Built-in tools. Each module declares one ToolSpec; `builtin_tools()` lists them in menu order."""

from __future__ import annotations

from tui_app.runtime.contract import ToolSpec


def builtin_tools() -> list[ToolSpec]:
    from tui_app.tools.bash import BASH
    from tui_app.tools.glob import GLOB
    from tui_app.tools.grep import GREP
    from tui_app.tools.read import READ
    from tui_app.tools.task_output import TASK_OUTPUT
    from tui_app.tools.task_stop import TASK_STOP

    return [READ, GLOB, GREP, BASH, TASK_OUTPUT, TASK_STOP]
