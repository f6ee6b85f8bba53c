"""Desktop notifications: when an approval, a question or a plan waits for the user and the
terminal is not focused (Textual's AppFocus / AppBlur) or the user has been idle, Vigil says so
outside the terminal too: OSC 9 or OSC 777 where the terminal shows them as notifications, and
`notify-send` where it is installed, besides the bell the dialogs ring.

Claude Code's Notification hook fires as Claude Code fires it: `permission_prompt` when a call
asks (the approval stage does that), `idle_prompt` when the prompt has waited for the user for a
minute after a turn. Settings turn the desktop part off: `"desktopNotifications": false`, or
Claude Code's `"preferredNotifChannel": "notifications_disabled"`.

What goes into a notification is a short sentence Vigil writes (a tool's name, never its input),
cleaned of control characters: a notification is not a way to send escape sequences anywhere.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tui_app.runtime.commands import Notify
from tui_app.runtime.events import PermissionRequested, PlanApprovalAsked, TurnEnded, TurnStarted, UserQuestionAsked

#: the user counts as away after this long without a key or a click (seconds)
IDLE_S = 60.0
#: Claude Code's idle_prompt: the prompt has waited this long after a turn
IDLE_PROMPT_S = 60.0
TITLE = "Vigil"
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f;]")


def enabled_in(settings: dict[str, Any]) -> bool:
    if settings.get("desktopNotifications") is False:
        return False
    return settings.get("preferredNotifChannel") != "notifications_disabled"


def osc_sequences(title: str, body: str, env: dict[str, str] | None = None) -> list[str]:
    """The escape sequences this terminal shows as a desktop notification (none when it shows
    none of them). Inside tmux they are wrapped to pass through to the outer terminal."""
    env = os.environ if env is None else env
    title, body = _UNSAFE.sub(" ", title), _UNSAFE.sub(" ", body)
    program = env.get("TERM_PROGRAM", "").lower()
    term = env.get("TERM", "").lower()
    sequences = []
    if program in ("iterm.app", "wezterm") or env.get("WT_SESSION"):
        sequences.append(f"\x1b]9;{title}: {body}\x07")  # iTerm2's notification, also WezTerm's, Windows Terminal's
    if program == "ghostty" or term.startswith(("foot", "rxvt")) or env.get("VTE_VERSION"):
        sequences.append(f"\x1b]777;notify;{title};{body}\x07")  # urxvt's notify, also foot's, Ghostty's
    if "kitty" in term:
        sequences.append(f"\x1b]99;;{title}: {body}\x1b\\")  # kitty's own notification protocol
    if env.get("TMUX"):
        sequences = [f"\x1bPtmux;{s.replace(chr(27), chr(27) * 2)}\x1b\\" for s in sequences]
    return sequences


@dataclass
class Notifier:
    """Owned by the app: `observe` each batch, `saw_input` on each key or click."""

    write: Callable[[str], None]
    is_focused: Callable[[], bool]
    enabled: bool = True
    idle_s: float = IDLE_S
    clock: Callable[[], float] = time.monotonic
    notify_send: str | None = field(default_factory=lambda: shutil.which("notify-send"))
    env: dict[str, str] | None = None
    last_input: float = field(default=0.0)
    #: what was sent (title, body, how): for the screen's log and the tests
    sent: list[tuple[str, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.last_input = self.clock()

    def saw_input(self) -> None:
        self.last_input = self.clock()

    @property
    def away(self) -> bool:
        return not self.is_focused() or self.clock() - self.last_input >= self.idle_s

    def observe(self, events: Iterable[Any]) -> None:
        for event in events:
            if isinstance(event, PermissionRequested) and event.interactive:
                self.waiting(f"Permission needed to use {event.tool}")
            elif isinstance(event, UserQuestionAsked):
                self.waiting("The agent asks you a question")
            elif isinstance(event, PlanApprovalAsked):
                self.waiting("The agent's plan waits for your approval")

    def waiting(self, body: str) -> bool:
        """Something waits for the user: tell the desktop when the user is not looking."""
        if not self.enabled or not self.away:
            return False
        self.send(TITLE, body)
        return True

    def send(self, title: str, body: str) -> None:
        for sequence in osc_sequences(title, body, self.env):
            self.write(sequence)
            self.sent.append((title, body, "osc"))
        if self.notify_send:
            try:
                subprocess.Popen([self.notify_send, "--app-name", TITLE, title, _UNSAFE.sub(" ", body)],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True)
                self.sent.append((title, body, "notify-send"))
            except OSError:
                self.notify_send = None  # gone since start-up: stop trying


@dataclass
class IdlePrompt:
    """Claude Code's `idle_prompt`: after a turn, the prompt waited IDLE_PROMPT_S for the user;
    fired once per wait."""

    fire: Callable[[], None]
    after_s: float = IDLE_PROMPT_S
    clock: Callable[[], float] = time.monotonic
    _since: float | None = None

    def observe(self, events: Iterable[Any]) -> None:
        for event in events:
            if isinstance(event, TurnStarted):
                self._since = None
            elif isinstance(event, TurnEnded) and event.agent_id is None:
                self._since = self.clock()

    def saw_input(self) -> None:
        if self._since is not None:
            self._since = self.clock()

    def tick(self) -> bool:
        if self._since is not None and self.clock() - self._since >= self.after_s:
            self._since = None
            self.fire()
            return True
        return False


def attach_notifications(app: Any) -> None:
    """Give the app its notifier and its idle-prompt watch (settings decide whether the desktop
    is told — the app learns them from the session's facts; the Notification hook fires either
    way, as in Claude Code)."""
    enabled = True

    def write(sequence: str) -> None:
        driver = getattr(app, "_driver", None)
        if driver is not None and not app.is_headless:
            driver.write(sequence)

    app.notifier = Notifier(write=write, is_focused=lambda: bool(app.app_focus), enabled=enabled)

    def idle() -> None:
        app.notifier.waiting("Vigil is waiting for your input")
        controls = getattr(app, "controls", None)
        if controls is not None and not getattr(app, "closed", False):
            controls.send(Notify(message="Vigil is waiting for your input", title=TITLE, kind="idle_prompt"))

    app.idle_prompt = IdlePrompt(fire=idle)
