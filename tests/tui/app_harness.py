"""Running the whole app under pilot: a real session (scripted model, real tools, real files and
processes) on its own thread, driven by keys the way a user drives it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.tui.helpers import wait_until
from tui_app.app.screens.approval import ApprovalScreen
from tui_app.app.vigil_app import VigilApp
from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime.session import Session

CALC = "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return add(x, x)\n"


def make_session(tmp_path: Path, monkeypatch: Any, steps: list[dict[str, Any]], *, mode: str | None = None,
                 files: dict[str, str] | None = None, chunk_delay_ms: int = 0) -> Session:
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    for name, text in (files if files is not None else {"calc.py": CALC}).items():
        (project / name).write_text(text, encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": steps, "chunk_delay_ms": chunk_delay_ms}), encoding="utf-8")
    return build_session(SessionOptions(cwd=str(project), script=str(script), interactive=True,
                                        permission_mode=mode))  # type: ignore[arg-type]


class AppUnderTest(VigilApp):
    """The real app; counts bells and records every batch the screen was given."""

    def __init__(self, session: Session | None, **options: Any) -> None:
        options.setdefault("key_guard_s", 0.0)
        options.setdefault("freeze_gc", False)
        options["handle_signals"] = False  # the test's loop is not the process's
        super().__init__(session, **options)
        #: the live session, for the test's eyes only (the app itself talks to it through its port)
        self.session = session
        self.bells = 0
        self.seen: list[Any] = []
        self.batch_sizes: list[int] = []

    def bell(self) -> None:
        self.bells += 1

    async def _pump(self) -> None:
        if self.runner is None:
            return
        original = self.main.apply

        async def recorded(events: Any) -> Any:
            self.seen.extend(events)
            self.batch_sizes.append(len(events))
            return await original(events)

        self.main.apply = recorded  # type: ignore[method-assign]
        try:
            await super()._pump()
        finally:
            self.main.apply = original  # type: ignore[method-assign]

    # ---- what a test looks at -----------------------------------------------------------------

    def states(self) -> dict[str, str]:
        return {row.call_id: row.state for row in self.main.table.rows.rows}

    def notifications(self) -> list[str]:
        return [n.message for n in self._notifications]

    def events_of(self, kind: str) -> list[Any]:
        return [e for e in self.seen if e.type == kind]

    @property
    def dialog(self) -> ApprovalScreen | None:
        return self.screen if isinstance(self.screen, ApprovalScreen) else None


async def type_prompt(pilot: Any, text: str) -> None:
    await pilot.press(*[("space" if c == " " else c) for c in text])
    await pilot.press("enter")


async def started(pilot: Any) -> None:
    await wait_until(pilot, lambda: pilot.app.ready and pilot.app.main.session_id, "the session to start")
