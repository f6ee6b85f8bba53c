"""Sessions of the built-in agent for tests: a private HOME and VIGIL_HOME, a project, a script,
and the session built the way the CLI builds it (real tools, real files, real processes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime.session import Session


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.project = root / "project"
        self.vigil_home = root / "vigil-home"
        for path in (self.home, self.project):
            path.mkdir(parents=True, exist_ok=True)

    def write(self, relative: str, text: str, *, under: Path | None = None) -> Path:
        path = (under or self.project) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def script(self, steps: list[dict[str, Any]], **extra: Any) -> Path:
        path = self.root / "script.json"
        path.write_text(json.dumps({"steps": steps, **extra}), encoding="utf-8")
        return path

    def session(self, steps: list[dict[str, Any]], *, settings: dict[str, Any] | None = None,
                resume: str | None = None, **options: Any) -> Session:
        script = self.script(steps, **options.pop("script_extra", {}))
        settings_file = None
        if settings is not None:
            settings_file = str(self.root / "settings.json")
            Path(settings_file).write_text(json.dumps(settings), encoding="utf-8")
        return build_session(SessionOptions(cwd=str(self.project), script=str(script), settings_file=settings_file,
                                            resume=resume, **options))


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = Workspace(tmp_path)
    monkeypatch.setenv("HOME", str(space.home))
    monkeypatch.setenv("VIGIL_HOME", str(space.vigil_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(space.home / ".config"))
    return space


def of(events: list[Any], kind: str, **fields: Any) -> list[Any]:
    return [e for e in events if e.type == kind and all(getattr(e, k, None) == v for k, v in fields.items())]


async def run(session: Session, prompt: str = "go") -> tuple[Any, list[Any]]:
    """One turn from start to close; the turn's result and every event."""
    events: list[Any] = []
    session.subscribe(events.append)
    await session.start()
    try:
        turn = await session.run_turn(prompt)
    finally:
        await session.close()
    return turn, [e for e in events if not e.ephemeral]
