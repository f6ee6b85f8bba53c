"""The base of the dialogs that answer a request of the agent (approval, question, plan): the key
guard they share, and closing exactly once.

Accidental answers are the complaint users have about peers: keys pressed in the first
`key_guard_s` after a dialog opens (or after it changes step, `arm`) answer nothing, and a
character typed meanwhile is handed back to the prompt box it was meant for (`forward_keys`), so
a half-typed prompt loses nothing. A dialog is dismissed once: by the user's answer (`finish`) or
because someone else decided (`close_from_outside`, which says so).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from textual import events
from textual.screen import ModalScreen

from widgets.text.untrusted import one_line

KEY_GUARD_S = 0.3
ResultT = TypeVar("ResultT")


class GuardedModal(ModalScreen[ResultT]):
    #: the notification's title when the dialog is closed from outside
    CLOSED_TITLE = "Dialog closed"

    def __init__(
        self,
        *,
        key_guard_s: float = KEY_GUARD_S,
        ring_bell: bool = True,
        clock: Callable[[], float] = time.monotonic,
        forward_keys: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__()
        self.key_guard_s = key_guard_s
        self.ring_bell = ring_bell
        self.clock = clock
        #: where characters typed during the key guard go (the prompt box they were meant for)
        self.forward_keys = forward_keys
        self._armed_at = clock() + key_guard_s
        self._done = False

    @property
    def armed(self) -> bool:
        return self.clock() >= self._armed_at

    @property
    def done(self) -> bool:
        return self._done

    def arm(self) -> None:
        """The guard starts again (the dialog opened, or moved to a new step)."""
        self._armed_at = self.clock() + self.key_guard_s

    def opened(self) -> None:
        """Called from a dialog's on_mount: the guard starts and the bell rings."""
        self.arm()
        if self.ring_bell:
            self.app.bell()

    def guards(self, event: events.Key) -> bool:
        """Whether the guard applies to this key (a dialog where the user types text says no)."""
        return True

    def on_key(self, event: events.Key) -> None:
        if self.armed or not self.guards(event):
            return
        event.stop()
        event.prevent_default()
        if self.forward_keys is not None and event.is_printable and event.character:
            self.forward_keys(event.character)

    def finish(self, result: ResultT) -> None:
        """Dismiss with `result`, once."""
        if not self._done:
            self._done = True
            self.answered(result)
            self.dismiss(result)

    def answered(self, result: ResultT) -> None:
        """Told the result just before the dialog is dismissed (a hook for the approval dialog)."""

    def closed_result(self, reason: str) -> ResultT:
        """What the dialog returns when someone else decided."""
        return None  # type: ignore[return-value]

    def close_from_outside(self, reason: str) -> None:
        """Someone else decided (a hook, an interrupt): close and say so."""
        if self._done:
            return
        self.app.notify(one_line(reason, 300) or "Decided elsewhere", title=self.CLOSED_TITLE, markup=False)
        self.finish(self.closed_result(reason))
