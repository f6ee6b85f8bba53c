"""Memory files: the user's and the project's standing instructions, read into the system prompt
the way Claude Code reads them (docs/architecture.md §9.6).

    ~/.claude/CLAUDE.md, ~/.claude/AGENTS.md                          the user's, for every project
    CLAUDE.md, .claude/CLAUDE.md, AGENTS.md, CLAUDE.local.md          in the repository root and each
                                                                      directory down to the cwd

A line may import another file with `@path` (relative to the importing file, `~` for the home
directory), at most five hops deep; an import of a file already on the chain is a cycle and is
refused, and `@` inside code spans and code blocks is text, not an import. Each file is read once.

What ends up in the system prompt is sent to the provider, so a memory file obeys what a Read
would (docs/architecture.md, the security boundary): a file a Read deny rule covers is skipped,
and the project's files and everything they import must really be (symlinks resolved: each file
is opened once and its descriptor's real path is what is checked) inside the working
directories or the repository. Only the user's own files, and what they import, may come from
elsewhere. A skipped file is said in MemoryLoaded (`skipped`) and as a warning, never dropped
silently.
A `#` line typed in the prompt box appends a note to one of these files (`note_targets`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_app.runtime.events import MemoryLoaded
from tui_app.runtime.files.opened import OpenedFile
from tui_app.runtime.permissions.working_dirs import inside

#: (path as given, its real path, scope) → why the file must not go into the prompt, or None
Guard = Callable[[str, str, str], "str | None"]

MAX_IMPORT_DEPTH = 5
#: a file bigger than this is cut (a stray log named AGENTS.md must not fill the context)
MAX_FILE_CHARS = 40_000
#: names read in each project directory, in this order (and whether they are the personal kind)
PROJECT_NAMES = (("CLAUDE.md", "project"), (".claude/CLAUDE.md", "project"), ("AGENTS.md", "project"),
                 ("CLAUDE.local.md", "local"))
USER_NAMES = ("CLAUDE.md", "AGENTS.md")
SCOPE_WORDS = {
    "user": "the user's own instructions for every project",
    "project": "the project's instructions, checked into the codebase",
    "local": "the user's own instructions for this project, not checked in",
}
HEADER = ("# Memory files\n"
          "The user's and the project's standing instructions follow. Follow them: where they differ from "
          "the defaults above, they win.")

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,}).*?^\1\2[`~]*[ \t]*$", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_IMPORT = re.compile(r"(?<![\w@`])@((?:~|\.{1,2})?/?[A-Za-z0-9_.\-][A-Za-z0-9_.\-/~]*)")


@dataclass(frozen=True)
class MemoryFile:
    path: str
    scope: str
    text: str
    imported_from: str | None = None
    truncated: bool = False


@dataclass
class Memory:
    files: list[MemoryFile] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: {path, reason, imported_from} of each file left out of the prompt (rules, working directories)
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def prompt_section(self) -> str:
        """What goes at the end of the system prompt ("" when there are no memory files)."""
        if not self.files:
            return ""
        parts = [HEADER]
        for item in self.files:
            origin = f", imported by {item.imported_from}" if item.imported_from else ""
            parts.append(f"Contents of {item.path} ({SCOPE_WORDS[item.scope]}{origin}):\n\n{item.text.strip()}")
        return "\n\n".join(parts)

    def event(self) -> MemoryLoaded:
        return MemoryLoaded(files=[{"path": f.path, "scope": f.scope, "bytes": len(f.text.encode("utf-8")),
                                    "imported_from": f.imported_from, "truncated": f.truncated} for f in self.files],
                            problems=list(self.problems), skipped=[dict(s) for s in self.skipped])


def repository_root(cwd: str | Path) -> Path | None:
    path = Path(cwd).resolve()
    for candidate in (path, *path.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def project_directories(cwd: str | Path) -> list[Path]:
    """The repository root and every directory from it down to the cwd (just the cwd outside a
    repository: a memory file in some parent of an unrelated directory is not this project's)."""
    here = Path(cwd).resolve()
    root = repository_root(here)
    if root is None:
        return [here]
    chain = [here, *here.parents]
    return list(reversed(chain[: chain.index(root) + 1]))


def imports_in(text: str) -> list[str]:
    """The `@path` imports of a memory file, outside code blocks and code spans, in order."""
    text = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    text = _SPAN.sub(" ", text)
    found: list[str] = []
    for match in _IMPORT.finditer(text):
        target = match.group(1).rstrip(".,;:)")
        if target and target not in found:
            found.append(target)
    return found


def _looks_like_a_path(target: str) -> bool:
    return "/" in target or "." in target.lstrip(".")


class _Loader:
    def __init__(self, home: Path, roots: tuple[str, ...], guard: Guard | None) -> None:
        self.home = home
        self.roots = roots
        self.guard = guard
        self.memory = Memory()
        self.seen: set[str] = set()

    def refusal(self, path: Path, real: str, scope: str) -> str | None:
        if self.guard is not None:
            reason = self.guard(str(path), real, scope)
            if reason:
                return reason
        if scope != "user" and not inside(real, self.roots):
            return f"it is really {real}, outside the working directories and the repository"
        return None

    def skip(self, path: Path, reason: str, imported_from: str | None) -> None:
        self.memory.skipped.append({"path": str(path), "reason": reason, "imported_from": imported_from})
        self.memory.problems.append(f"{path}: left out of the prompt: {reason}")

    def read(self, path: Path, scope: str, chain: tuple[str, ...] = (), imported_from: str | None = None) -> None:
        try:
            with OpenedFile(str(path)) as opened:
                real = opened.who.real or os.path.realpath(path)
                if real in chain:
                    self.memory.problems.append(f"{imported_from}: the import of {path} was refused: it would "
                                                f"import itself again (a cycle)")
                    return
                if real in self.seen:
                    return
                reason = self.refusal(path, real, scope)
                if reason is not None:
                    self.skip(path, reason, imported_from)
                    return
                if not opened.who.regular:
                    raise IsADirectoryError(21, "not a regular file")
                with opened.read_handle() as handle:
                    text = handle.read().decode("utf-8", errors="replace")
        except FileNotFoundError:
            if imported_from is not None:
                self.memory.problems.append(f"{imported_from}: the import {path} does not exist")
            return
        except OSError as exc:
            self.memory.problems.append(f"{path}: cannot be read: {exc.strerror or exc}")
            return
        self.seen.add(real)
        truncated = len(text) > MAX_FILE_CHARS
        if truncated:
            text = text[:MAX_FILE_CHARS] + f"\n[… cut: the file has {len(text):,} characters]"
            self.memory.problems.append(f"{path}: longer than {MAX_FILE_CHARS:,} characters; the rest was left out")
        self.memory.files.append(MemoryFile(str(path), scope, text, imported_from, truncated))
        chain = (*chain, real)
        for target in imports_in(text):
            home_relative = target == "~" or target.startswith("~/")
            imported = Path(str(self.home) + target[1:]) if home_relative else path.parent / target
            if not imported.is_file():
                if _looks_like_a_path(target) and not imported.exists():
                    self.memory.problems.append(f"{path}: the import @{target} does not exist")
                continue  # `@someone` is a mention, not a file
            if len(chain) > MAX_IMPORT_DEPTH:
                self.memory.problems.append(f"{path}: the import @{target} was left out: imports go at most "
                                            f"{MAX_IMPORT_DEPTH} levels deep")
                continue
            self.read(imported, scope, chain, str(path))


def load_memory(cwd: str | Path, home: str | Path | None = None, *, include_user: bool = True,
                guard: Guard | None = None, roots: tuple[str, ...] = ()) -> Memory:
    """`roots`: the working directories (the cwd and the repository are always among them);
    `guard`: the session's Read rules (see `policy_guard`)."""
    home_dir = Path(home) if home is not None else Path(os.path.expanduser("~"))
    directories = project_directories(cwd)
    places = (*roots, str(directories[0]), str(Path(cwd).resolve()))
    loader = _Loader(home_dir, tuple(dict.fromkeys(os.path.realpath(p) for p in places)), guard)
    if include_user:
        for name in USER_NAMES:
            loader.read(home_dir / ".claude" / name, "user")
    for directory in directories:
        for name, scope in PROJECT_NAMES:
            path = directory / name
            if path.is_file():
                loader.read(path, scope)
    return loader.memory


def policy_guard(policy: Any) -> tuple[Guard | None, tuple[str, ...]]:
    """The session policy's Read deny rules as a memory guard, and its working directories."""
    dirs = getattr(policy, "dirs", None)
    roots: tuple[str, ...] = tuple(dirs.roots) if dirs is not None else ()
    read_denial = getattr(policy, "read_denial", None)
    if read_denial is None:
        return None, roots

    def guard(given: str, real: str, scope: str) -> str | None:
        denied = read_denial("Read")
        if denied is not None and (denied(given) or denied(real)):
            return "a Read deny rule covers it"
        return None

    return guard, roots


# ---- notes from the prompt box (`# always use uv`) -------------------------------------------------

def is_memory_note(text: str) -> bool:
    """A prompt of one line that starts with `#` is a note for a memory file."""
    stripped = text.strip()
    return stripped.startswith("#") and "\n" not in stripped and bool(stripped.lstrip("#").strip())


def note_text(text: str) -> str:
    return text.strip().lstrip("#").strip()


def note_targets(cwd: str | Path, home: str | Path | None = None) -> list[tuple[str, Path]]:
    """Where a note can go: the project's memory file (AGENTS.md when that is the one the project
    has), its personal file, the user's file."""
    project = Path(cwd)
    home_dir = Path(home) if home is not None else Path(os.path.expanduser("~"))
    shared = project / "CLAUDE.md"
    if not shared.exists() and (project / "AGENTS.md").exists():
        shared = project / "AGENTS.md"
    return [
        ("Project memory (checked in)", shared),
        ("Project memory, just for you (not checked in)", project / "CLAUDE.local.md"),
        ("Your memory for every project", home_dir / ".claude" / "CLAUDE.md"),
    ]


def append_note(path: str | Path, note: str) -> Path:
    """Append `- note` as a line of its own; the file and its directory are created if needed."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    existing = target.read_text(encoding="utf-8", errors="replace") if target.exists() else ""
    prefix = "" if not existing or existing.endswith("\n") else "\n"
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(f"{prefix}- {note.strip()}\n")
    return target


@dataclass
class MemoryService:
    """The session's memory files and the system prompt built with them; reloaded after a note."""

    cwd: str
    base_prompt: str
    home: str | None = None
    memory: Memory = field(default_factory=Memory)
    #: the session's policy: its Read deny rules and working directories hold for memory files
    policy: Any = None

    def reload(self) -> Memory:
        guard, roots = policy_guard(self.policy)
        self.memory = load_memory(self.cwd, self.home, guard=guard, roots=roots)
        return self.memory

    def system_prompt(self) -> str:
        section = self.memory.prompt_section()
        return f"{self.base_prompt}\n\n{section}" if section else self.base_prompt

    def summary(self) -> list[dict[str, Any]]:
        return self.memory.event().files
