"""Snapshots of the prompt's new modes and the settings screen (update deliberately with
`--snapshot-update`, then look at the SVGs): the `@` picker open over a project, a `!` command's
row with the box in shell mode, and the settings screen with its files and the notification switch."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from tests.tui.helpers import wait_until
from tests.tui.session_data import T0
from tests.tui.test_snapshots import IdleControls
from tui_app.app.screens.main import MainScreen
from tui_app.app.screens.settings_editor import SettingsScreen
from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime.contract import ToolFlags
from tui_app.runtime.display import BashOutputDisplay, OutputSegment
from tui_app.runtime.events import SessionStarted, ToolCallProgress, ToolCallResult, ToolCallStarted, UserMessage
from widgets.mention_menu import MentionMenu

PROJECT_FILES = ("calc/stats.py", "calc/__init__.py", "tests/test_stats.py", "tests/test_catalogue.py",
                 "README.md", "docs/statistics.md", "setup.cfg")


def make_project(root: Path) -> Path:
    for name in PROJECT_FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    return root


class PromptApp(App[None]):
    def __init__(self, root: Path, events: list | None = None) -> None:
        super().__init__()
        self.events = events or []
        self.main = MainScreen(IdleControls(), cwd=str(root), cwd_label="~/proj", table_clock=lambda: T0 + 9.0)

    async def on_mount(self) -> None:
        await self.push_screen(self.main)
        await self.main.apply([SessionStarted(session_id="20250101-120000-abc123", ts=T0, cwd=self.main.cwd,
                                              provider="anthropic", model="claude-sonnet-4-5",
                                              permission_mode="default"), *self.events])


def test_mention_picker_snapshot(snap_compare, tmp_path):
    async def typed(pilot):
        pilot.app.main.prompt.cursor_blink = False  # a blinking cursor would make the picture depend on timing
        await pilot.press("e", "x", "p", "l", "a", "i", "n", "space", "@", "s", "t")
        menu = pilot.app.main.query_one(MentionMenu)
        await wait_until(pilot, lambda: menu.shown and menu.paths[:1] == ["calc/stats.py"], "the picker")
        await pilot.pause(0.2)

    assert snap_compare(PromptApp(make_project(tmp_path)), terminal_size=(120, 30), run_before=typed)


def shell_events(root: str) -> list:
    command = "git status --short"
    out = " M calc/stats.py\n?? notes.md\n"
    return [
        ToolCallStarted(call_id="shell_1", ts=T0 + 1, tool="Bash", input={"command": command},
                        target=f"!{command}", flags=ToolFlags(side_effect_scope="system", needs_approval=False)),
        ToolCallProgress(call_id="shell_1", ts=T0 + 1.1, kind="output", stream="stdout", text=out),
        ToolCallResult(call_id="shell_1", ts=T0 + 1.2, tool="Bash", model_content=out,
                       display=BashOutputDisplay(command=command, exit_code=0, duration_ms=41, total_bytes=len(out),
                                                 segments=[OutputSegment(stream="stdout", text=out)])),
        UserMessage(ts=T0 + 1.2, source="shell",
                    text=f"<bash-input>{command}</bash-input>\n<bash-stdout>{out}</bash-stdout><bash-stderr></bash-stderr>"),
    ]


def test_shell_mode_snapshot(snap_compare, tmp_path):
    async def typed(pilot):
        pilot.app.main.prompt.cursor_blink = False
        await pilot.press("!", "l", "s", "space", "-", "l", "a")
        await pilot.pause(0.2)

    app = PromptApp(make_project(tmp_path), shell_events(str(tmp_path)))
    assert snap_compare(app, terminal_size=(120, 30), run_before=typed)


class SettingsApp(App[None]):
    def __init__(self, session) -> None:
        super().__init__()
        self.session = session
        controls = IdleControls()
        controls.known = session.controller.facts()  # type: ignore[assignment]
        self.main = MainScreen(controls, cwd=session.cwd, cwd_label="~/proj", table_clock=lambda: T0 + 9.0)

    async def on_mount(self) -> None:
        await self.push_screen(self.main)
        await self.push_screen(SettingsScreen(self.main, self.main.controls.known))


def test_settings_screen_snapshot(snap_compare, tmp_path, monkeypatch):
    home = tmp_path / "home"
    project = home / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.local.json").write_text(
        '{"permissions": {"allow": ["Bash(npm test:*)", "Read(./docs/**)"], "deny": ["Read(./.env)"]}}')
    (project / ".claude" / "settings.json").write_text(
        '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]},'
        ' "sandbox": {"enabled": true}, "desktopNotifications": false}')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vigil"))
    session = build_session(SessionOptions(cwd=str(project), provider="scripted", interactive=True,
                                           allowed_tools=["Grep"]))

    async def shown(pilot):
        await pilot.pause(0.3)

    assert snap_compare(SettingsApp(session), terminal_size=(130, 40), run_before=shown)
