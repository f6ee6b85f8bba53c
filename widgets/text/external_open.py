"""The command that opens a file in the user's `$PAGER` or `$EDITOR`, at a line when it can."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path

DEFAULTS = {"pager": "less", "editor": "vi"}
_ENV = {"pager": ("PAGER",), "editor": ("VISUAL", "EDITOR")}
# programs known to take `+N` as "start at line N"
_PLUS_LINE = frozenset({"less", "more", "most", "vi", "vim", "nvim", "view", "nano", "emacs", "micro", "joe", "ne"})


def external_command(kind: str, path: str | os.PathLike[str], line: int | None = None,
                     env: Mapping[str, str] | None = None) -> list[str]:
    """argv for `kind` ("pager" or "editor") on `path`; `line` is 1-based."""
    env = os.environ if env is None else env
    value = next((env[name] for name in _ENV[kind] if env.get(name, "").strip()), DEFAULTS[kind])
    try:
        argv = shlex.split(value)
    except ValueError:
        argv = [value]
    if not argv:
        argv = [DEFAULTS[kind]]
    if line is not None and line > 0 and Path(argv[0]).name in _PLUS_LINE:
        argv.append(f"+{line}")
    return [*argv, os.fspath(path)]
