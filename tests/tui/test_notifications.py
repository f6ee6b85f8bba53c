"""Notifications: an approval that waits while the terminal is unfocused (or the user is idle)
reaches the desktop (OSC 9 / 777 where the terminal shows them, notify-send where installed)
besides the bell; settings turn it off; the Notification hook fires as in Claude Code
(permission_prompt when a call asks, idle_prompt when the prompt has waited after a turn)."""

from __future__ import annotations

import json
import os
import stat

from textual import events

from tests.tui.app_harness import AppUnderTest, started, type_prompt, wait_until
from tests.tui.test_agent_flows import CALC, agent_session, turn_over
from tui_app.app.notifier import enabled_in, osc_sequences

EDIT = {"id": "e1", "name": "Edit", "input": {"file_path": "calc.py", "old_string": "a + b", "new_string": "b + a"}}
READ = {"id": "r1", "name": "Read", "input": {"file_path": "calc.py"}}
HOOK = {"hooks": {"Notification": [{"hooks": [{"type": "command",
                                               "command": "cat >> \"$CLAUDE_PROJECT_DIR/../notified.jsonl\"; "
                                                          "echo >> \"$CLAUDE_PROJECT_DIR/../notified.jsonl\""}]}]}}


def test_the_sequences_fit_the_terminal():
    assert osc_sequences("Vigil", "Permission needed", {"TERM_PROGRAM": "iTerm.app"}) == \
        ["\x1b]9;Vigil: Permission needed\x07"]
    assert osc_sequences("Vigil", "x", {"TERM_PROGRAM": "ghostty"}) == ["\x1b]777;notify;Vigil;x\x07"]
    assert osc_sequences("Vigil", "x", {"TERM": "xterm-kitty"}) == ["\x1b]99;;Vigil: x\x1b\\"]
    assert osc_sequences("Vigil", "x", {"TERM": "xterm-256color"}) == []  # a terminal that shows none: nothing
    wrapped = osc_sequences("Vigil", "x", {"TERM_PROGRAM": "WezTerm", "TMUX": "/tmp/tmux-0/default,1,0"})
    assert wrapped[0].startswith("\x1bPtmux;\x1b\x1b]9;") and wrapped[0].endswith("\x1b\\")
    # nothing the text holds can end the sequence early or start another
    assert osc_sequences("Vigil", "a\x07\x1b]0;pwned\x07;b", {"TERM_PROGRAM": "iTerm.app"}) == \
        ["\x1b]9;Vigil: a  ]0 pwned  b\x07"]


def test_settings_turn_it_off():
    assert enabled_in({}) and enabled_in({"preferredNotifChannel": "iterm2"})
    assert not enabled_in({"desktopNotifications": False})
    assert not enabled_in({"preferredNotifChannel": "notifications_disabled"})


def fake_notify_send(tmp_path, monkeypatch):
    """A real notify-send stand-in on PATH: it records its arguments (there is no desktop here)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "notify-send"
    log = tmp_path / "notify-send.log"
    script.write_text(f"#!/bin/sh\nprintf '%s|' \"$@\" >> {log}\necho >> {log}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TERM_PROGRAM", "WezTerm")
    monkeypatch.delenv("TMUX", raising=False)
    return log


async def test_an_approval_waiting_while_unfocused_reaches_the_desktop_and_the_hook(tmp_path, monkeypatch):
    log = fake_notify_send(tmp_path, monkeypatch)
    files = {"calc.py": CALC, ".claude/settings.json": json.dumps(HOOK)}
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, [{"tool_calls": [READ]}, {"tool_calls": [EDIT]},
                                                             {"text": "done"}], files=files))
    async with app.run_test(size=(140, 40)) as pilot:
        await started(pilot)
        app.post_message(events.AppBlur())  # the user sent the prompt and went to another window
        await wait_until(pilot, lambda: not app.app_focus, "the blur")
        assert app.controls.submit("swap it")
        await wait_until(pilot, lambda: app.dialog is not None, "the approval dialog")
        await wait_until(pilot, lambda: log.exists() and log.read_text(), "notify-send")
        assert log.read_text() == "--app-name|Vigil|Vigil|Permission needed to use Edit|\n"
        assert ("Vigil", "Permission needed to use Edit", "osc") in app.notifier.sent
        notified = tmp_path / "notified.jsonl"
        await wait_until(pilot, lambda: notified.exists() and notified.read_text().strip(), "the Notification hook")
        payload = json.loads(notified.read_text().splitlines()[0])
        assert payload["hook_event_name"] == "Notification" and payload["notification_type"] == "permission_prompt"
        assert payload["message"] == "Vigil needs your permission to use Edit"
        app.post_message(events.AppFocus())
        await pilot.pause(0.4)
        await pilot.press("y")
        await turn_over(pilot, app)


async def test_in_front_of_the_screen_only_the_bell(tmp_path, monkeypatch):
    log = fake_notify_send(tmp_path, monkeypatch)
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, [{"tool_calls": [READ]}, {"tool_calls": [EDIT]},
                                                             {"text": "done"}]))
    async with app.run_test(size=(140, 40)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "swap it")
        await wait_until(pilot, lambda: app.dialog is not None and app.bells >= 1, "the approval dialog and its bell")
        assert app.notifier.sent == [] and not log.exists()
        app.notifier.enabled = False  # the settings screen's switch, or the settings file's
        app.post_message(events.AppBlur())
        await pilot.pause()
        assert not app.notifier.waiting("Permission needed to use Edit") and not log.exists()


async def test_the_idle_prompt_hook_fires_once_after_a_turn(tmp_path, monkeypatch):
    files = {"calc.py": CALC, ".claude/settings.json": json.dumps(HOOK)}
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, [{"text": "done"}], files=files))
    app.idle_prompt.after_s = 0.5
    async with app.run_test(size=(140, 40)) as pilot:
        await started(pilot)
        await type_prompt(pilot, "hello")
        await turn_over(pilot, app)
        notified = tmp_path / "notified.jsonl"
        await wait_until(pilot, lambda: notified.exists() and notified.read_text().strip(), "the idle_prompt hook")
        [line] = [json.loads(x) for x in notified.read_text().splitlines() if x.strip()]
        assert line["notification_type"] == "idle_prompt" and line["message"] == "Vigil is waiting for your input"
        assert not app.idle_prompt.tick()  # once per wait
