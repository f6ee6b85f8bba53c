"""Write: create a file, or replace one the model has read in full."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import Field

from tui_app.runtime.contract import (
    ApprovalPreview,
    PermissionSpec,
    RawResult,
    StrictInput,
    ToolContext,
    ToolFlags,
    ToolSpec,
)
from tui_app.runtime.files.state import absolute_path
from tui_app.runtime.results import budgets
from tui_app.tools.file_edits import (
    Current,
    decode,
    diff_preview,
    file_access,
    file_state,
    patch_json,
    read_current,
    resolve_file_path,
    result_of,
    updated_text,
    write_file,
)
from tui_app.tools.opened_check import opened_check

DESCRIPTION = "\n".join([
    "Writes a file to the local filesystem, creating parent directories as needed.",
    "",
    "- Overwrites the file if it exists. An existing file must have been read in full with the Read tool in "
    "this conversation first, and must not have changed since; otherwise the call fails and nothing is written.",
    "- Prefer Edit for changing part of an existing file: it sends only the change.",
    "- The file_path should be absolute; a relative path is taken from the working directory.",
])


class WriteInput(StrictInput):
    file_path: str = Field(description="The absolute path to the file to write (must be absolute, not relative)")
    content: str = Field(description="The content to write to the file")


async def check_write(args: WriteInput, ctx: ToolContext) -> None:
    path = absolute_path(args.file_path, ctx.cwd)
    current = await asyncio.to_thread(read_current, path, file_access(ctx), opened_check(ctx))
    if current.data is not None:
        file_state(ctx).check(path, current.data)


async def resolve_write(data: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return resolve_file_path(data, ctx)


async def preview_write(data: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
    path = data["file_path"]
    current = await asyncio.to_thread(read_current, path, file_access(ctx), opened_check(ctx))
    return await diff_preview(ctx, "Create" if current.data is None else "Write", path, current, data["content"])


async def write(args: WriteInput, ctx: ToolContext) -> RawResult:
    def transform(current: Current) -> tuple[str, str]:
        return decode(current.data), args.content

    written = await write_file(ctx, args.file_path, transform, create_ok=True)
    text = f"File created successfully at: {written.path}" if written.operation == "create" else updated_text(written)
    output = {"type": written.operation, "filePath": written.path, "content": args.content,
              "structuredPatch": patch_json(written.patch),
              "originalFile": written.old_text if written.operation == "update" else None}
    return result_of(written, text, output)


WRITE = ToolSpec(
    name="Write",
    description=DESCRIPTION,
    handler=write,
    input_model=WriteInput,
    flags=ToolFlags(read_only=False, concurrency_safe=False, side_effect_scope="workspace", needs_approval=True,
                    risk="medium"),
    permission=PermissionSpec(kind="edit", rule_key="file_path", reason="writes a file"),
    budget=budgets.WRITE_EDIT,
    validate_input=check_write,
    resolve_input=resolve_write,
    prepare_approval=preview_write,
    cancellation_message=("The user interrupted the write. Writes are atomic: the file holds either the old or "
                          "the new content; read it to see which."),
)
