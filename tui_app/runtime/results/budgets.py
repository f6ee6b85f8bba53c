"""The result budgets of docs/architecture.md §6, in one table every tool refers to.

Bytes to the model (UTF-8), what happens over the budget, and which end the preview keeps. The
numbers come from the reference executor; a tool picks its row instead of writing its own.
"""

from __future__ import annotations

from tui_app.runtime.contract import ResultBudget


def _row(limit: int, over: str, end: str = "head") -> ResultBudget:
    return ResultBudget(max_model_bytes=limit, max_inline_bytes=limit, over_budget=over,  # type: ignore[arg-type]
                        preview_end=end)  # type: ignore[arg-type]


DEFAULT = _row(100_000, "truncate")
#: a failing command prints its error last
BASH = _row(30_000, "artifact", "tail")
READ = _row(262_144, "truncate")
WRITE_EDIT = _row(100_000, "truncate")
WEB_FETCH = _row(100_000, "artifact")
GLOB = _row(100_000, "artifact")
GREP = _row(20_000, "artifact")
MCP = _row(50_000, "truncate")
#: ReadArtifact pages through an artifact; a page over this is cut, never persisted again
READ_ARTIFACT = _row(100_000, "truncate")

#: tool name → budget, for the tests and the docs; a ToolSpec names its row directly
BY_TOOL: dict[str, ResultBudget] = {
    "Bash": BASH, "Read": READ, "Write": WRITE_EDIT, "Edit": WRITE_EDIT, "WebFetch": WEB_FETCH,
    "Glob": GLOB, "Grep": GREP, "ReadArtifact": READ_ARTIFACT,
}
