"""Claude Code's structured tool results (`tool_use_result`) as Vigil's displays, and its words
about how a call was decided (`tool_result_meta`) in Vigil's.

Shapes seen with 2.1.332: Bash `{stdout, stderr, interrupted, …}`; Edit `{filePath, oldString,
newString, originalFile, structuredPatch, …}`; Write `{type, filePath, content, structuredPatch,
originalFile}`; Read `{type: "text", file: {filePath, content, …}}`; a refusal is a string
(`"Error: …"`). Anything else is shown by its model text alone.
"""

from __future__ import annotations

import re
from typing import Any

from tui_app.runtime.display import DiffHunk, Display, TextDisplay
from tui_app.runtime.files.diffing import apply_hunks, file_diff_display, structured_patch
from tui_app.runtime.results.displays import bash_output_display

_EXIT_CODE = re.compile(r"^Exit code (\d+)", re.MULTILINE)
#: how Claude Code says it decided by itself (permission_decision.reason_type / source)
DECISION_WORDS = {
    "mode": "its permission mode",
    "rule": "a rule in its settings",
    "subcommandResults": "it judged the command safe",
    "hook": "one of its own hooks",
    "config": "its settings",
    "classifier": "its safety classifier",
}


def display_of(name: str, data: Any, result: Any, model_text: str, is_error: bool) -> Display | None:
    if name == "Bash" and is_error and isinstance(result, str) and _exit_code(model_text) is not None:
        # a failed command comes back as words: "Exit code 3" and its output
        command = data.get("command", "") if isinstance(data, dict) else ""
        output = model_text.split("\n", 1)[1] if "\n" in model_text else ""
        return bash_output_display(str(command), output, exit_code=_exit_code(model_text))
    if not isinstance(result, dict):
        return None
    if {"stdout", "stderr"} <= result.keys():
        command = data.get("command", "") if isinstance(data, dict) else ""
        exit_code = _exit_code(model_text) if is_error else 0
        return bash_output_display(str(command), str(result.get("stdout") or ""), str(result.get("stderr") or ""),
                                   exit_code=exit_code, interrupted=bool(result.get("interrupted")))
    path = result.get("filePath")
    if isinstance(path, str) and ("structuredPatch" in result or "originalFile" in result):
        return _file_diff(path, result)
    file = result.get("file")
    if result.get("type") == "text" and isinstance(file, dict) and isinstance(file.get("content"), str):
        return TextDisplay(text=file["content"], title=str(file.get("filePath") or ""))
    return None


def _file_diff(path: str, result: dict[str, Any]) -> Display | None:
    original = result.get("originalFile")
    old = original if isinstance(original, str) else ""
    if isinstance(result.get("content"), str):  # Write: the whole new content
        new = result["content"]
    else:
        try:
            hunks = [DiffHunk(old_start=h["oldStart"], old_lines=h["oldLines"], new_start=h["newStart"],
                              new_lines=h["newLines"], lines=list(h["lines"]))
                     for h in result.get("structuredPatch") or []]
            new = apply_hunks(old, hunks)
        except (KeyError, TypeError, ValueError):
            # the patch does not apply to the text it came with (a last line without a newline):
            # the replacement itself says what changed
            before, after = result.get("oldString"), result.get("newString")
            if not (isinstance(before, str) and isinstance(after, str) and before in old):
                return None
            new = old.replace(before, after) if result.get("replaceAll") else old.replace(before, after, 1)
    operation = "create" if original is None or result.get("type") == "create" else "update"
    return file_diff_display(path, old, new, operation, structured_patch(old, new))


def _exit_code(text: str) -> int | None:
    match = _EXIT_CODE.search(text)
    return int(match[1]) if match else None


def meta_of(call_id: str, line: dict[str, Any]) -> dict[str, Any]:
    for meta in line.get("tool_result_meta") or ():
        if isinstance(meta, dict) and meta.get("id") == call_id:
            return meta
    return {}


def decision_words(meta: dict[str, Any], label: str, verb: str) -> str:
    """'allowed by Claude Code (its permission mode)'."""
    decision = meta.get("permission_decision") if isinstance(meta.get("permission_decision"), dict) else {}
    why = DECISION_WORDS.get(str(decision.get("reason_type") or decision.get("source") or ""))
    return f"{verb} by {label}" + (f" ({why})" if why else "")


def refused_by_agent(meta: dict[str, Any]) -> bool:
    decision = meta.get("permission_decision")
    return isinstance(decision, dict) and decision.get("decision") == "reject"
