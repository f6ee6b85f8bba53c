"""What an ACP tool call did, as a Vigil display for its row's detail tabs.

An edit is shown as the diff of each file from before the call (read when the call first named
it) to the file on disk now; the agent's own diff only where Vigil has no before. A call that
embeds one of Vigil's terminals shows that terminal's output; a command's text output is shown
as bash output; anything else as text.
"""

from __future__ import annotations

from typing import Any

from tui_app.agents.acp.previews import MAX_FILES, decode, read_file
from tui_app.agents.acp.tool_calls import AcpCall
from tui_app.runtime.display import (
    BashOutputDisplay,
    Display,
    FileDiffDisplay,
    FileDiffsDisplay,
    OutputSegment,
    TextDisplay,
)
from tui_app.runtime.files.diffing import file_diff_display


def snapshot(call: AcpCall) -> None:
    """Remember the files a file-changing call names, as they are before it runs."""
    if not call.changes_files:
        return
    for path in call.paths[:MAX_FILES]:
        if path not in call.before:
            call.before[path] = read_file(path)


def file_displays(call: AcpCall) -> list[FileDiffDisplay]:
    found = []
    for path in call.paths[:MAX_FILES]:
        after = read_file(path)
        if path in call.before:
            before = call.before[path]
            if before is None and after is None:
                continue
            operation = "create" if before is None else "delete" if after is None else "update"
            display = file_diff_display(path, decode(before), decode(after), operation)  # type: ignore[arg-type]
        elif path in call.diffs:
            diff = call.diffs[path]
            display = file_diff_display(path, diff.old_text or "", diff.new_text,
                                        "create" if diff.old_text is None else "update")
        else:
            continue
        if display.added or display.removed or display.operation != "update":
            found.append(display)
    return found


def result_display(call: AcpCall, terminal_display: Any = None) -> Display | None:
    """`terminal_display(terminal_id)` gives the display of one of Vigil's terminals."""
    if call.terminals and terminal_display is not None:
        shown = terminal_display(call.terminals[-1])
        if shown is not None:
            return shown
    if call.changes_files:
        files = file_displays(call)
        if len(files) == 1:
            return files[0]
        if files:
            return FileDiffsDisplay(files=files)
    text = call.text()
    if call.kind == "execute":
        text = unfenced(text)
        command = call.command or call.title
        return BashOutputDisplay(command=command, segments=[OutputSegment(stream="stdout", text=text)] if text else [],
                                 total_bytes=len(text.encode("utf-8", "replace")), exit_code=call.exit_code)
    if text:
        return TextDisplay(text=text, title=call.target or None)
    return None


def unfenced(text: str) -> str:
    """A command's output as agents send it for a chat: inside a Markdown fence (the Claude adapter
    writes ```console … ```); the output view shows the output itself."""
    lines = text.strip("\n").split("\n")
    if len(lines) >= 2 and lines[0].startswith("```") and lines[-1].strip() == "```":
        return "\n".join(lines[1:-1]) + "\n"
    return text
