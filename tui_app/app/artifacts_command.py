"""`vigil artifacts [SESSION | FILE] [--follow]`: browse a session's persisted outputs.

With no argument, the newest session. A SESSION may be its id or an unambiguous prefix of it; a
path to an existing file opens that file alone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tui_app.runtime.log.paths import sessions_dir
from tui_app.runtime.results.sanitize import neutralize


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"vigil artifacts: {neutralize(message)}\n")
        raise SystemExit(2)


def _sessions(root: Path) -> list[Path]:
    try:
        return [entry for entry in root.iterdir() if entry.is_dir()]
    except OSError:
        return []


def _activity(session: Path) -> float:
    """When a session was last written to: its log, else its directory."""
    for candidate in (session / "events.jsonl", session):
        try:
            return candidate.stat().st_mtime
        except OSError:
            continue
    return 0.0


def find_session(reference: str | None, root: Path) -> Path:
    """The session directory for an id, an id prefix, or None (the newest). Raises LookupError
    with a message for the user."""
    sessions = _sessions(root)
    if not sessions:
        raise LookupError(f"no sessions in {root}")
    if reference is None:
        return max(sessions, key=_activity)
    exact = [s for s in sessions if s.name == reference]
    if exact:
        return exact[0]
    matches = [s for s in sessions if s.name.startswith(reference)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise LookupError(f"{reference!r} matches {len(matches)} sessions; give more of the id")
    raise LookupError(f"no session {reference!r} in {root}")


def main(argv: Sequence[str]) -> int:
    parser = _Parser(prog="vigil artifacts", description="Browse the persisted outputs of a session.")
    parser.add_argument("target", nargs="?", metavar="SESSION|FILE", help="session id (default: newest) or a file")
    parser.add_argument("--follow", action="store_true", help="stay at the end of a growing file")
    args = parser.parse_args(list(argv))

    from tui_app.app.screens.artifacts import ArtifactBrowserApp

    if args.target is not None and Path(args.target).is_file():
        ArtifactBrowserApp(path=args.target, follow=args.follow).run()
        return 0
    try:
        session = find_session(args.target, sessions_dir())
    except LookupError as exc:
        sys.stderr.write(f"vigil artifacts: {neutralize(str(exc))}\n")
        return 1 if args.target is None else 2
    ArtifactBrowserApp(session_id=session.name, directory=session / "artifacts", follow=args.follow).run()
    return 0
