"""What an ACP agent's edit would do, worked out by Vigil against the files on disk.

An agent's `diff` block says `oldText` → `newText` for a path. Agents mean different things by it:
the whole file (the protocol's intent, Gemini CLI), or only the replaced fragment (the Claude
adapter sends Edit's old_string/new_string). Vigil reads the file itself and applies the block:
the whole file when `oldText` is the file, the fragment when it occurs once (every occurrence when
the call says replace_all), a new file when `oldText` is absent. The dialog shows the diff of the
file on disk against that result — never the agent's word for it. When the block cannot be applied
(its old text is not in the file, or is there twice), the agent's own diff is shown and the dialog
says so; nothing is made up.

Blocking (reads files): the driver calls it in a worker thread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from tui_app.agents.acp.tool_calls import AcpCall, AgentDiff
from tui_app.runtime.contract import ApprovalPreview
from tui_app.runtime.display import FileDiffDisplay, FileDiffsDisplay
from tui_app.runtime.files.diffing import display_safe, file_diff_display, structured_patch, unified_diff_text

#: files bigger than this are not read for a preview (the agent's own diff is shown)
MAX_READ_BYTES = 8 * 1024 * 1024
#: at most this many files are previewed in one dialog
MAX_FILES = 50

Operation = Literal["create", "update", "delete"]


@dataclass
class FileChange:
    path: str
    #: the file now (None: there is no such file, or it could not be read)
    current: bytes | None
    #: the whole text the file will have if the call runs as shown (None: Vigil cannot tell)
    proposed: str | None
    operation: Operation
    display: FileDiffDisplay
    #: why the shown diff is the agent's and not Vigil's (empty when it is Vigil's)
    note: str = ""


def read_file(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_READ_BYTES:
                return None
            return handle.read()
    except OSError:
        return None


def decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "surrogateescape")


def agent_diffs(call: AcpCall) -> list[AgentDiff]:
    """The call's diff blocks; without any, the change its raw input describes (Claude Code's
    Write `{file_path, content}` and Edit `{file_path, old_string, new_string}` shapes)."""
    if call.diffs:
        return list(call.diffs.values())
    data = call.input
    path = data.get("file_path") or data.get("path")
    if not isinstance(path, str) or not path:
        return []
    if isinstance(data.get("content"), str):
        return [AgentDiff(path, None, data["content"])]
    if isinstance(data.get("old_string"), str) and isinstance(data.get("new_string"), str):
        return [AgentDiff(path, data["old_string"], data["new_string"])]
    return []


def change_of(diff: AgentDiff, replace_all: bool = False) -> FileChange:
    current = read_file(diff.path)
    text = decode(current) if current is not None else None
    old, new = diff.old_text, diff.new_text
    proposed: str | None = None
    note = ""
    if old is None:
        proposed = new
    elif text is None:
        if old == "":
            proposed = new
        else:
            note = f"{diff.path} does not exist, but the agent edits text in it: its own diff is shown"
    elif old == text:
        proposed = new
    elif not old:
        note = f"the agent writes into {diff.path} with an empty old text, but the file has content"
    else:
        count = text.count(old)
        if count == 1 or (count > 1 and replace_all):
            proposed = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        else:
            where = "is not in the file on disk" if count == 0 else f"is in the file {count} times"
            note = f"the text the agent replaces in {diff.path} {where}: its own diff is shown"
    if proposed is None:
        operation: Operation = "update"
        display = file_diff_display(diff.path, old or "", new, operation)
    else:
        operation = "create" if current is None else "update"
        display = file_diff_display(diff.path, text or "", proposed, operation,
                                    structured_patch(display_safe(text or ""), display_safe(proposed)))
    return FileChange(diff.path, current, proposed, operation, display, note)


def deletion_of(path: str) -> FileChange:
    current = read_file(path)
    text = decode(current)
    return FileChange(path, current, "" if current is not None else None, "delete",
                      file_diff_display(path, text, "", "delete"),
                      "" if current is not None else f"{path} does not exist (or cannot be read)")


def changes_of(call: AcpCall) -> list[FileChange]:
    replace_all = bool(call.input.get("replace_all"))
    changes = [change_of(d, replace_all) for d in agent_diffs(call)[:MAX_FILES]]
    if call.kind == "delete" and not changes:
        changes = [deletion_of(p) for p in call.paths[:MAX_FILES]]
    return changes


def preview_of(call: AcpCall, changes: list[FileChange], label: str) -> ApprovalPreview | None:
    if not changes:
        return None
    notes = notes_of(changes)
    shown = {c.path for c in changes}
    missing = [p for p in call.paths if p not in shown]
    body = "\n".join(display_safe(unified_diff_text(c.path, structured_patch(c.display.old_text or "",
                                                                              c.display.new_text or ""),
                                                    c.operation)) for c in changes)
    if notes or missing:
        said = [f"Note: {n}." for n in notes]
        if missing:
            said.append(f"Note: {label} also names {', '.join(missing)} without saying what changes there.")
        body = "\n".join(said) + "\n" + body
    display: FileDiffDisplay | FileDiffsDisplay = (
        changes[0].display if len(changes) == 1 else FileDiffsDisplay(files=[c.display for c in changes]))
    added = sum(c.display.added for c in changes)
    removed = sum(c.display.removed for c in changes)
    what = changes[0].path if len(changes) == 1 else f"{len(changes)} files"
    verb = "Delete" if all(c.operation == "delete" for c in changes) else "Edit"
    return ApprovalPreview(summary=f"{verb} {what} (+{added} -{removed})", kind="diff", body=body,
                           display=display, risk="medium")


def notes_of(changes: list[FileChange]) -> list[str]:
    return [c.note for c in changes if c.note]
