"""Edit (exact string replacement) and MultiEdit (several, applied together or not at all).

MultiEdit is a legacy name with its own input shape, `{file_path, edits: [...]}`, so it is its
own spec rather than an alias of Edit: a call named MultiEdit validates against its own schema.
It is hidden from the model's menu (`provider_visible=False`) but accepted in calls, and it is
an "edit" for permission rules, like Edit.
"""

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
    ToolFailure,
    ToolFlags,
    ToolSpec,
)
from tui_app.runtime.files.state import absolute_path, stale
from tui_app.runtime.results import budgets
from tui_app.tools.file_edits import (
    Current,
    Replacement,
    count_replacements,
    creates_file,
    decode,
    diff_preview,
    file_access,
    file_state,
    patch_json,
    read_current,
    replace_exactly,
    resolve_file_path,
    result_of,
    updated_text,
    write_file,
)
from tui_app.tools.opened_check import opened_check

DESCRIPTION = "\n".join([
    "Performs exact string replacements in a file.",
    "",
    "- The file must have been read in full with the Read tool in this conversation, and must not have "
    "changed since; otherwise the call fails and nothing is written.",
    "- old_string must match the file's text exactly (indentation included; leave out the line-number prefix "
    "that Read shows) and must occur exactly once, unless replace_all is true. Include enough surrounding "
    "lines to make it unique.",
    "- replace_all replaces every occurrence (useful for renaming).",
    "- An empty old_string creates a file that does not exist yet (new_string becomes its content).",
    "- The file_path should be absolute; a relative path is taken from the working directory.",
])

MULTI_DESCRIPTION = ("Applies several exact string replacements to one file, in order, each to the result of the "
                     "one before; either all of them apply or none does. Same rules as Edit for each entry.")

FLAGS = ToolFlags(read_only=False, concurrency_safe=False, side_effect_scope="workspace", needs_approval=True,
                  risk="medium")
PERMISSION = PermissionSpec(kind="edit", rule_key="file_path", reason="edits a file")


class EditInput(StrictInput):
    file_path: str = Field(description="The absolute path to the file to modify")
    old_string: str = Field(description="The text to replace")
    new_string: str = Field(description="The text to replace it with (must be different from old_string)")
    replace_all: bool = Field(default=False, description="Replace all occurrences of old_string (default false)")


class EditOperation(StrictInput):
    old_string: str = Field(description="The text to replace")
    new_string: str = Field(description="The text to replace it with")
    replace_all: bool = Field(default=False, description="Replace all occurrences of old_string (default false)")


class MultiEditInput(StrictInput):
    file_path: str = Field(description="The absolute path to the file to modify")
    edits: list[EditOperation] = Field(min_length=1, description="Edits to apply in order, all or none")


def replacements(data: EditInput | MultiEditInput | dict[str, Any]) -> list[Replacement]:
    if isinstance(data, dict):
        data = MultiEditInput.model_validate(data) if "edits" in data else EditInput.model_validate(data)
    if isinstance(data, MultiEditInput):
        return [Replacement(e.old_string, e.new_string, e.replace_all) for e in data.edits]
    return [Replacement(data.old_string, data.new_string, data.replace_all)]


async def check_edit(args: EditInput | MultiEditInput, ctx: ToolContext) -> None:
    """Everything that would make the edit fail, before any hook or dialog."""
    edits = replacements(args)
    path = absolute_path(args.file_path, ctx.cwd)
    for index, edit in enumerate(edits):
        if edit.old_string == edit.new_string:
            where = f"Edit {index + 1} of {len(edits)}: " if len(edits) > 1 else ""
            raise ToolFailure(f"{where}No changes to make: old_string and new_string are exactly the same.")
    access, fs, opened = file_access(ctx), file_state(ctx), opened_check(ctx)

    def check() -> None:
        # one thread call that returns nothing: the file's bytes and texts are gone when it ends
        # (a thread pool's worker holds its call's arguments and result until it next runs, which
        # on a busy machine can be during the write: one more copy of the file)
        current = read_current(path, access, opened)
        if current.data is None:
            if creates_file(edits):
                replace_exactly("", edits)
                return
            if fs.baseline(path) is not None:
                raise stale(path, "deleted")
            raise ToolFailure(f"File does not exist: {path}. To create it, use Write (or Edit with an empty "
                              f"old_string).")
        fs.check(path, current.data)
        replace_exactly(decode(current.data), edits)

    await asyncio.to_thread(check)


async def resolve_edit(data: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return resolve_file_path(data, ctx)


async def preview_edit(data: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
    path = data["file_path"]
    current = await asyncio.to_thread(read_current, path, file_access(ctx), opened_check(ctx))
    new_text = await asyncio.to_thread(replace_exactly, decode(current.data), replacements(data))
    return await diff_preview(ctx, "Edit", path, current, new_text)


async def edit(args: EditInput | MultiEditInput, ctx: ToolContext) -> RawResult:
    edits = replacements(args)
    places = 0

    def transform(current: Current) -> tuple[str, str]:
        nonlocal places
        old_text = decode(current.data)
        new_text, places = count_replacements(old_text, edits)
        return old_text, new_text

    written = await write_file(ctx, args.file_path, transform, create_ok=creates_file(edits))
    if written.operation == "create":
        text = f"File created successfully at: {written.path}"
    else:
        text = updated_text(written, f" ({places} replacements)" if places > 1 else "")
    if isinstance(args, MultiEditInput):
        output: dict[str, Any] = {
            "filePath": written.path, "edits": [e.model_dump() for e in args.edits],
            "originalFileContents": written.old_text, "structuredPatch": patch_json(written.patch)}
    else:
        output = {"filePath": written.path, "oldString": args.old_string, "newString": args.new_string,
                  "originalFile": written.old_text, "structuredPatch": patch_json(written.patch),
                  "userModified": False, "replaceAll": args.replace_all}
    return result_of(written, text, output)


_COMMON: dict[str, Any] = dict(
    handler=edit, flags=FLAGS, permission=PERMISSION, validate_input=check_edit, resolve_input=resolve_edit,
    prepare_approval=preview_edit, budget=budgets.WRITE_EDIT,
    cancellation_message=("The user interrupted the edit. Writes are atomic: the file holds either the old or "
                          "the new content; read it to see which."),
)

EDIT = ToolSpec(name="Edit", description=DESCRIPTION, input_model=EditInput, **_COMMON)
MULTI_EDIT = ToolSpec(name="MultiEdit", description=MULTI_DESCRIPTION, input_model=MultiEditInput,
                      provider_visible=False, **_COMMON)
