"""Screen-facing projections of a tool result. Never sent to the model, never budgeted with it.

Each kind bounds itself (docs/architecture.md §6): a diff card keeps at most 8 hunks / 160 lines, a bash card
at most 150000 bytes; the full thing lives in the viewer or in an artifact.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Display(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)  # built on first use (start-up)


class DiffHunk(_Display):
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    #: unified-diff body lines, each starting with ' ', '-' or '+'
    lines: list[str]


class FileDiffDisplay(_Display):
    kind: Literal["file_diff"] = "file_diff"
    path: str
    operation: Literal["create", "update", "delete"] = "update"
    hunks: list[DiffHunk] = Field(default_factory=list)
    added: int = 0
    removed: int = 0
    #: hunks / lines the full diff has beyond what this card keeps
    omitted_hunks: int = 0
    omitted_lines: int = 0
    #: the texts the viewer diffs in full (absent when too large to carry)
    old_text: str | None = None
    new_text: str | None = None


class FileDiffsDisplay(_Display):
    """Several files one call changes (an ACP agent's multi-file edit), each with its own diff;
    the viewer navigates hunks across all of them."""

    kind: Literal["file_diffs"] = "file_diffs"
    files: list[FileDiffDisplay] = Field(default_factory=list)

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed for f in self.files)


class OutputSegment(_Display):
    stream: Literal["stdout", "stderr"]
    text: str


class BashOutputDisplay(_Display):
    kind: Literal["bash_output"] = "bash_output"
    command: str
    #: stdout and stderr in the order they arrived (text may carry SGR colour sequences, nothing else)
    segments: list[OutputSegment] = Field(default_factory=list)
    exit_code: int | None = None
    duration_ms: int = 0
    interrupted: bool = False
    timed_out: bool = False
    #: bytes the command printed, all of it
    total_bytes: int = 0
    truncated: bool = False
    #: bytes of output this card does not hold, and the segment index they were cut out before
    omitted_bytes: int = 0
    gap_at: int | None = None
    artifact_uri: str | None = None
    background_task_id: str | None = None


class TextDisplay(_Display):
    kind: Literal["text"] = "text"
    text: str
    title: str | None = None


class TodoItem(_Display):
    content: str
    status: Literal["pending", "in_progress", "completed"]
    active_form: str = ""


class TodoListDisplay(_Display):
    kind: Literal["todo_list"] = "todo_list"
    todos: list[TodoItem]


class McpDisplay(_Display):
    kind: Literal["mcp"] = "mcp"
    server: str
    tool: str
    #: content blocks as the server sent them (images replaced by a placeholder with size/type)
    blocks: list[dict[str, Any]] = Field(default_factory=list)
    structured_content: Any = None
    is_error: bool = False


class ErrorDisplay(_Display):
    kind: Literal["error"] = "error"
    phase: str
    code: str
    message: str


Display = Annotated[
    FileDiffDisplay | FileDiffsDisplay | BashOutputDisplay | TextDisplay | TodoListDisplay | McpDisplay
    | ErrorDisplay,
    Field(discriminator="kind"),
]
