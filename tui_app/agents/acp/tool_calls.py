"""One ACP tool call as Vigil knows it, gathered across the agent's updates.

Agents report a call in pieces: a `tool_call` (often pending, with little in it), then
`tool_call_update`s that add the title, the locations, the raw input and the content, and finally
the status. What an update leaves out keeps its earlier value; some agents put a file's diff only
in an early update and none in the last, some never send a `kind`. So every field is merged, and
every diff ever shown for a path is kept.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from typing import Any

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
)

#: the name a call is shown under when the agent does not name its tool, by ACP kind
KIND_NAMES = {"read": "Read", "edit": "Edit", "delete": "Delete", "move": "Move", "search": "Search",
              "execute": "Bash", "think": "Think", "fetch": "WebFetch", "switch_mode": "SwitchMode"}
#: kinds that change files
EDIT_KINDS = frozenset({"edit", "delete", "move"})


@dataclass
class AgentDiff:
    """A diff block as the agent sent it: `old_text` None means a new file."""

    path: str
    old_text: str | None
    new_text: str


@dataclass
class AcpCall:
    call_id: str
    title: str = ""
    kind: str | None = None
    status: str | None = None
    raw_input: Any = None
    raw_output: Any = None
    locations: list[str] = field(default_factory=list)
    #: the content list of the latest update that carried one
    content: list[Any] = field(default_factory=list)
    #: every diff the agent sent, the latest per path, in the order the paths first came
    diffs: dict[str, AgentDiff] = field(default_factory=dict)
    terminals: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    #: files as they were before the call (bytes; None: no such file), for the diff of the result
    before: dict[str, bytes | None] = field(default_factory=dict)

    def merge(self, update: Any) -> None:
        """Fold in a ToolCallStart / ToolCallProgress / ToolCallUpdate."""
        if getattr(update, "title", None):
            self.title = update.title
        if getattr(update, "kind", None):
            self.kind = update.kind
        if getattr(update, "status", None):
            self.status = update.status
        if update.raw_input is not None:
            self.raw_input = update.raw_input
        if update.raw_output is not None:
            self.raw_output = update.raw_output
        if update.locations:
            for location in update.locations:
                if location.path and location.path not in self.locations:
                    self.locations.append(location.path)
        if (update.content is None and update.raw_output is not None
                and getattr(update, "status", None) in ("completed", "failed")):
            # the result is in the raw output: the text shown so far was the question (Codex's)
            self.content = [c for c in self.content if not isinstance(c, ContentToolCallContent)]
        if update.content is not None:
            self.content = list(update.content)
            for block in update.content:
                if isinstance(block, FileEditToolCallContent):
                    self.diffs[block.path] = AgentDiff(block.path, block.old_text, block.new_text)
                elif isinstance(block, TerminalToolCallContent) and block.terminal_id not in self.terminals:
                    self.terminals.append(block.terminal_id)
        if isinstance(update.field_meta, dict):
            _deep_merge(self.meta, update.field_meta)

    # ---- how Vigil names and shows it -------------------------------------------------------

    @property
    def tool_name(self) -> str:
        """The agent's own name for its tool when it says it (the Claude adapter does), else
        Vigil's name for the kind."""
        for key in ("claudeCode", "tool"):
            inner = self.meta.get(key)
            if isinstance(inner, dict) and isinstance(inner.get("toolName"), str) and inner["toolName"]:
                return inner["toolName"]
        return KIND_NAMES.get(self.kind or "", "Tool")

    @property
    def input(self) -> dict[str, Any]:
        return dict(self.raw_input) if isinstance(self.raw_input, dict) else {}

    @property
    def row_input(self) -> dict[str, Any]:
        """The input the table and the log show: the agent's raw input; when it sent none, what its
        other words say (the command, the paths, the title)."""
        data = self.input
        if data:
            return data
        view: dict[str, Any] = {}
        if self.kind == "execute" and self.command:
            view["command"] = self.command
        paths = self.paths
        if len(paths) == 1:
            view["file_path"] = paths[0]
        elif paths:
            view["file_paths"] = paths
        if self.title:
            view["description"] = self.title
        return view

    @property
    def changes_files(self) -> bool:
        return bool(self.diffs) or self.kind in EDIT_KINDS

    @property
    def paths(self) -> list[str]:
        """The files the call names: its diffs', then its locations', then a path in its input."""
        found = list(self.diffs)
        found += [p for p in self.locations if p not in found]
        data = self.input
        for key in ("file_path", "path", "filePath", "absolute_path"):
            value = data.get(key)
            if isinstance(value, str) and value and value not in found:
                found.append(value)
        return found

    @property
    def command(self) -> str | None:
        """The shell command an `execute` call runs: its raw input's command (with args), else its
        title — unwrapped from a shell's `-c` (Codex sends `["/bin/bash", "-lc", CMD]`), so that
        rules, the classifier, "always allow" and the dialog see CMD itself."""
        data = self.input
        command = data.get("command") if "command" in data else data.get("cmd")
        args = data.get("args")
        if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
            return unwrap_shell(command)
        if isinstance(command, str) and command.strip():
            if isinstance(args, list) and args and all(isinstance(a, str) for a in args):
                return unwrap_shell([command, *args])
            return unwrap_command(command)
        if self.kind == "execute" and self.title:
            return unwrap_command(self.title.strip("`"))
        return None

    @property
    def url(self) -> str | None:
        value = self.input.get("url")
        return value if isinstance(value, str) and value else None

    @property
    def target(self) -> str:
        """One line for the table: a path, a command, a url, or the agent's title."""
        command = self.command if self.kind == "execute" else None
        paths = self.paths
        return command or (paths[0] if paths else "") or self.url or self.title

    @property
    def exit_code(self) -> int | None:
        """A command's exit code where the agent reports it (Codex: `exit_code`; OpenCode:
        `metadata.exit`)."""
        output = self.raw_output if isinstance(self.raw_output, dict) else {}
        metadata = output.get("metadata") if isinstance(output.get("metadata"), dict) else {}
        for value in (output.get("exit_code"), output.get("exitCode"), metadata.get("exit")):
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    def text(self) -> str:
        """What the call produced, as text: its text content blocks, else its raw output."""
        parts = []
        for block in self.content:
            if isinstance(block, ContentToolCallContent):
                inner = block.content
                if isinstance(inner, TextContentBlock):
                    parts.append(inner.text)
                elif getattr(inner, "type", None):
                    parts.append(f"[{inner.type}]")
        if parts:
            return "\n".join(parts)
        output = self.raw_output
        if output is None:
            return ""
        if isinstance(output, str):
            return output
        if isinstance(output, dict):
            for key in ("aggregated_output", "formatted_output", "output", "stdout", "content", "text", "result"):
                if isinstance(output.get(key), str):
                    return output[key]
        try:
            return json.dumps(output, ensure_ascii=False, indent=2)
        except (TypeError, ValueError):
            return str(output)


#: shells whose `-c CMD` runs CMD and nothing else
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})


def unwrap_shell(argv: list[str]) -> str:
    """`[shell, -c|-lc|-ilc…, CMD]` → CMD; any other argv → it, joined as a shell would read it.
    Only the exact form unwraps: a further argument, an option other than l/i/c, or a shell Vigil
    does not know keeps the whole line (which Vigil's rules then do not match, so it is asked)."""
    found = shell_c(argv)
    return found if found is not None else shlex.join(argv)


def unwrap_command(command: str) -> str:
    """A command line that is itself `bash -lc 'CMD'` → CMD (else the line as it is)."""
    try:
        found = shell_c(shlex.split(command))
    except ValueError:
        return command
    return found if found is not None else command


def shell_c(argv: list[str]) -> str | None:
    """CMD of exactly `[shell, -c, CMD]` (the flag l, i and c letters only, c among them)."""
    if len(argv) != 3 or os.path.basename(argv[0]) not in SHELLS or not argv[2].strip():
        return None
    flag = argv[1]
    if flag[:1] != "-" or "c" not in flag or not set(flag[1:]) <= {"l", "i", "c"}:
        return None
    return argv[2]


def _deep_merge(into: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _deep_merge(into[key], value)
        else:
            into[key] = value


def is_absolute(path: str) -> bool:
    return os.path.isabs(path)
