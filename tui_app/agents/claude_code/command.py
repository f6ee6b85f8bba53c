"""Finding the user's Claude Code, checking it is new enough, and the command line that runs it
under Vigil: stream-json both ways, every permission question over stdio, partial messages so
text streams into the chat.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

#: the oldest release the control protocol was checked against (docs/architecture.md §11)
MIN_VERSION = (2, 1, 197)
VERSION_TIMEOUT_S = 30.0
INSTALL_HINT = ("install it (npm install -g @anthropic-ai/claude-code) or point Vigil at it with "
                "--agent-command PATH")


class ClaudeCodeUnusable(Exception):
    """Claude Code is missing, too old, or does not run; the message is one line for the user."""


def find_claude(command: str | None = None) -> str:
    """The executable: `command` (a path, or a name on PATH), else `claude` on PATH."""
    wanted = os.path.expanduser(command) if command else "claude"
    if os.sep in wanted:
        if not os.path.isfile(wanted):
            raise ClaudeCodeUnusable(f"Claude Code was not found at {wanted}: {INSTALL_HINT}")
        if not os.access(wanted, os.X_OK):
            raise ClaudeCodeUnusable(f"{wanted} is not executable")
        return os.path.abspath(wanted)
    found = shutil.which(wanted)
    if found is None:
        raise ClaudeCodeUnusable(f"Claude Code (`{wanted}`) is not on PATH: {INSTALL_HINT}")
    return found


def parse_version(text: str) -> tuple[int, int, int] | None:
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def check_claude(command: str | None = None) -> tuple[str, str]:
    """(path, version) of a Claude Code that Vigil can drive, or ClaudeCodeUnusable."""
    path = find_claude(command)
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ClaudeCodeUnusable(f"{path} --version did not run: {exc}") from None
    version = parse_version(done.stdout)
    if done.returncode != 0 or version is None:
        said = " ".join((done.stderr or done.stdout).split())[:300]
        raise ClaudeCodeUnusable(f"{path} --version failed (exit {done.returncode})" + (f": {said}" if said else ""))
    text = ".".join(map(str, version))
    if version < MIN_VERSION:
        oldest = ".".join(map(str, MIN_VERSION))
        raise ClaudeCodeUnusable(f"Claude Code {text} at {path} is too old: Vigil needs {oldest} or newer "
                                 "(update with `claude update` or npm install -g @anthropic-ai/claude-code)")
    return path, text


def claude_argv(path: str, *, mode: str, model: str = "", resume: str | None = None,
                max_turns: int | None = None) -> list[str]:
    argv = [path, "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
            "--permission-prompt-tool", "stdio", "--include-partial-messages", "--permission-mode", mode]
    if model:
        argv += ["--model", model]
    if max_turns is not None:
        argv += ["--max-turns", str(max_turns)]
    if resume:
        argv += ["--resume", resume]
    return argv
