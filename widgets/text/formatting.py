"""Small formatters shared by the widgets (durations, sizes, paths, hashes)."""

from __future__ import annotations

import os


def fmt_duration(ms: float | None) -> str:
    if ms is None:
        return ""
    if ms < 1000:
        return f"{int(ms)}ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, seconds = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return ""
    if n < 1024:
        return f"{n} B"
    size = float(n)
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024 or unit == "GB":
            return f"{size:.1f} {unit}"
    return f"{n} B"  # pragma: no cover - loop always returns


def short_hash(sha256: str, length: int = 12) -> str:
    return sha256[:length]


def tilde(path: str) -> str:
    """`/home/me/proj` → `~/proj`: shorter, and what a user types."""
    home = os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def looks_like_path(text: str) -> bool:
    return text.startswith(("/", "~", "./")) and " " not in text


def short_path(path: str, cwd: str | None) -> str:
    """A path as the user thinks of it: relative to the project when inside it, else with `~`."""
    if cwd and os.path.isabs(path):
        root = cwd.rstrip(os.sep) + os.sep
        if path.startswith(root):
            return path[len(root):]
    return tilde(path)
