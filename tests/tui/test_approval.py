"""The approval dialog: plain words, the whole preview, keyboard answers, and no accidents."""

from __future__ import annotations

import re

from textual.app import App, ComposeResult
from textual.widgets import Input

from tests.tui.helpers import screen_lines, screen_text
from tests.tui.session_data import CWD, bash_request, edit_request
from tui_app.app.screens.approval import ApprovalResult, ApprovalScreen
from tui_app.runtime.events import PermissionRequested
from tui_app.runtime.permissions.broker import ApprovalAnswer
from widgets.diff.view import DiffView
from widgets.text.text_view import TextView

LONG_COMMAND = "npm test -- " + " ".join(f"--opt{i}=v{i}" for i in range(600)) + " && echo THE-END"


class FakeClock:
    """Time that only moves when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class DialogApp(App[None]):
    """A prompt box with the dialog pushed over it, the way the main screen will do it."""

    def __init__(self, request: PermissionRequested, guard: float = 0.0, **options) -> None:
        super().__init__()
        self.request = request
        self.guard = guard
        self.options = options
        self.results: list[ApprovalResult] = []
        self.bells = 0

    def compose(self) -> ComposeResult:
        yield Input(id="prompt")

    def bell(self) -> None:
        self.bells += 1

    def open_dialog(self) -> ApprovalScreen:
        screen = ApprovalScreen(self.request, key_guard_s=self.guard, cwd=CWD, **self.options)
        self.push_screen(screen, self.results.append)
        return screen


async def opened(app: DialogApp, pilot) -> ApprovalScreen:
    screen = app.open_dialog()
    await pilot.pause()
    return screen


async def test_it_says_what_will_happen_why_and_shows_the_diff():
    app = DialogApp(edit_request(), position=1, total=3)
    async with app.run_test(size=(110, 36)) as pilot:
        await opened(app, pilot)
        text = screen_text(app)
        assert "Approve Edit?   1 of 3" in text
        assert "Edit calc/stats.py: 4 lines added, 2 lines removed" in text
        assert "The permission mode asks before this call: file edits ask in default mode" in text
        assert "risk medium · touches workspace · input sha256 9c1f3ab2e4d5" in text
        assert isinstance(app.screen.query_one("#approval-preview"), DiffView)
        assert "+     return (ordered[middle - 1] + ordered[middle]) / 2" in text
        assert app.bells == 1


async def test_y_allows_once_and_echoes_the_hash():
    app = DialogApp(edit_request())
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(app, pilot)
        await pilot.press("y")
        assert app.results == [ApprovalResult("perm-1", "allow", "9c1f3ab2e4d5f60718293a4b5c6d7e8f")]
        assert app.results[0].to_answer() == ApprovalAnswer("allow", "user", input_sha256=app.request.input_sha256)


async def test_n_and_escape_deny():
    for key in ("n", "escape"):
        app = DialogApp(edit_request())
        async with app.run_test(size=(100, 30)) as pilot:
            await opened(app, pilot)
            await pilot.press(key)
            assert [r.decision for r in app.results] == ["deny"]
            assert not isinstance(app.screen, ApprovalScreen)


async def test_always_allow_shows_the_exact_rule_then_needs_a_second_a():
    app = DialogApp(bash_request("npm test"))
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(app, pilot)
        await pilot.press("a")
        assert app.results == []
        text = screen_text(app)
        assert "Always allow: 1 rule will be saved to .vigil/settings.local.json" in text
        assert "    Bash(npm test:*)" in text
        await pilot.press("y")  # not an answer in this step
        assert app.results == []
        await pilot.press("a")
        result = app.results[0]
        assert (result.decision, result.always, result.rules) == ("allow", True, ("Bash(npm test:*)",))
        assert result.to_answer().rules == ("Bash(npm test:*)",) and result.to_answer().always


async def test_escape_backs_out_of_always_allow():
    app = DialogApp(bash_request("npm test"))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("a", "escape")
        assert screen.step == "choose" and app.results == []
        assert "will be saved" not in screen_text(app)
        await pilot.press("escape")
        assert [r.decision for r in app.results] == ["deny"]


async def test_no_rule_to_save_means_always_allow_does_nothing():
    request = bash_request("npm test").model_copy(update={"suggested_rules": []})
    app = DialogApp(request)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("a", "a")
        assert screen.step == "choose" and app.results == []


async def test_deny_with_feedback_returns_the_text():
    app = DialogApp(edit_request())
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(app, pilot)
        await pilot.press("f")
        await pilot.press(*"use statistics.median, yes")
        await pilot.press("enter")
        assert [(r.decision, r.feedback) for r in app.results] == [("deny", "use statistics.median, yes")]
        assert app.results[0].to_answer().feedback == "use statistics.median, yes"


async def test_escape_leaves_the_feedback_box_without_answering():
    app = DialogApp(edit_request())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("f", "n", "o", "escape")
        assert screen.step == "choose" and app.results == []
        await pilot.press("n")
        assert [(r.decision, r.feedback) for r in app.results] == [("deny", None)]


def test_the_guard_is_300_ms_unless_told_otherwise():
    assert ApprovalScreen(edit_request()).key_guard_s == 0.3


async def test_keys_in_the_first_300_ms_are_ignored():
    clock = FakeClock()
    app = DialogApp(edit_request(), guard=0.3, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(app, pilot)
        clock.advance(0.29)
        await pilot.press("y", "a", "n", "escape", "f")
        assert app.results == [] and screen.step == "choose"
        assert isinstance(app.screen, ApprovalScreen)
        clock.advance(0.02)
        await pilot.press("n")
        assert [r.decision for r in app.results] == ["deny"]


async def test_the_real_clock_guard_ignores_an_immediate_key():
    # a guard far longer than opening the dialog takes on a loaded machine: the key surely lands in it
    app = DialogApp(edit_request(), guard=60)
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(app, pilot)
        await pilot.press("y")
        assert app.results == []


async def test_each_step_has_its_own_guard_so_a_double_tap_cannot_save_a_rule():
    clock = FakeClock()
    app = DialogApp(bash_request("npm test"), guard=0.3, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(app, pilot)
        clock.advance(0.5)
        await pilot.press("a", "a")
        assert screen.step == "confirm_always" and app.results == []
        clock.advance(0.5)
        await pilot.press("a")
        assert app.results[0].always


async def test_typing_in_the_prompt_never_lands_in_the_dialog_nor_is_lost():
    clock = FakeClock()
    app = DialogApp(edit_request(), guard=0.3, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"fix the")
        prompt = app.query_one("#prompt", Input)
        assert prompt.value == "fix the"
        await opened(app, pilot)
        await pilot.press(*" bug yes")  # the user keeps typing, unaware the dialog opened
        await pilot.pause()
        assert app.results == []
        clock.advance(0.3)
        await pilot.press("escape")
        assert [r.decision for r in app.results] == ["deny"]
        assert prompt.value == "fix the"


async def test_a_5000_character_command_is_readable_to_the_end():
    app = DialogApp(bash_request(LONG_COMMAND))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(app, pilot)
        preview = screen.query_one("#approval-preview", TextView)
        assert preview.plain == LONG_COMMAND
        seen = []
        for _ in range(40):
            seen.extend(line for line in screen_lines(app) if "│" in line)
            await pilot.press("pagedown")
            await pilot.pause(0.05)
        shown = "".join(line.split("│")[1][3:].rstrip() for line in dict.fromkeys(seen) if line.count("│") >= 2)
        assert "THE-END" in shown
        # scrolled to the end: the border says the last row is shown and nothing more is below
        position = re.fullmatch(r"rows (\d+)–(\d+) of (\d+)", str(preview.border_subtitle))
        assert position is not None and position[2] == position[3], preview.border_subtitle
        assert "Run `npm test -- --opt0=v0" in screen_text(app)


async def test_the_queue_label_follows_new_requests():
    app = DialogApp(edit_request(), position=1, total=1)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(app, pilot)
        assert "1 of" not in screen_lines(app)[3]
        screen.set_queue(1, 4)
        await pilot.pause()
        assert "Approve Edit?   1 of 4" in screen_text(app)


async def test_closed_from_outside_says_why_and_returns_no_answer():
    app = DialogApp(edit_request())
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        screen = await opened(app, pilot)
        screen.close_from_outside("Allowed by PermissionRequest hook [bold]x[/]")
        await pilot.pause(0.3)
        assert not isinstance(app.screen, ApprovalScreen)
        result = app.results[0]
        assert result.decision == "closed" and result.to_answer() is None
        assert result.closed_reason == "Allowed by PermissionRequest hook [bold]x[/]"
        assert "Allowed by PermissionRequest hook [bold]x[/]" in screen_text(app)
        screen.close_from_outside("twice")  # a late second close is harmless
        assert len(app.results) == 1


async def test_json_preview_for_a_tool_without_its_own_preview():
    request = PermissionRequested(call_id="c", request_id="r9", tool="mcp__gh__create_issue",
                                  input={"title": "Bug", "body": "It breaks"}, input_sha256="f" * 64,
                                  summary="mcp__gh__create_issue", preview_kind="json",
                                  preview='{\n  "title": "Bug",\n  "body": "It breaks"\n}')
    app = DialogApp(request)
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(app, pilot)
        text = screen_text(app)
        assert '"body": "It breaks"' in text and "Approve mcp__gh__create_issue?" in text


async def test_the_dialog_is_as_tall_as_a_short_preview_and_a_long_one_scrolls_inside_it():
    app = DialogApp(edit_request())
    async with app.run_test(size=(110, 48)) as pilot:
        screen = await opened(app, pilot)
        await pilot.pause()
        dialog, preview = screen.query_one("#approval-dialog"), screen.query_one("#approval-preview")
        assert screen.has_class("-fits") and dialog.outer_size.height < int(48 * 0.9)
        assert preview.size.height == preview.virtual_size.height and not preview.border_subtitle
        assert "+     return (ordered[middle - 1] + ordered[middle]) / 2" in screen_text(app)

        await pilot.resize_terminal(110, 16)  # too small now: the preview scrolls, the keys stay in view
        await pilot.pause(0.1)
        await pilot.pause()
        assert not screen.has_class("-fits") and dialog.outer_size.height == int(16 * 0.9)
        assert "↓ more below" in str(preview.border_subtitle)
        assert "y allow once" in screen_text(app)

    app = DialogApp(bash_request(LONG_COMMAND))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(app, pilot)
        await pilot.pause()
        assert not screen.has_class("-fits") and screen.query_one("#approval-dialog").outer_size.height == 27
