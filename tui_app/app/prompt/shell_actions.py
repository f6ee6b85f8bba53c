"""Shell mode in the prompt box: a line that starts with `!` runs in the user's shell (not by the
model) when sent (the session decides that, like any prompt's meaning); while such a line is typed
the box says so (its border and title change)."""

from __future__ import annotations

from widgets.prompt_input import PromptInput

SHELL_TITLE = "! shell: runs in your shell, its output goes to the next prompt"


class ShellModeMarker:
    """A completer that takes no key: it only marks the box while a `!` line is typed."""

    def __init__(self, prompt: PromptInput) -> None:
        self.prompt = prompt

    def update(self) -> None:
        shell = self.prompt.text.startswith("!")
        if shell != self.prompt.has_class("-shell"):
            self.prompt.set_class(shell, "-shell")
            self.prompt.border_title = SHELL_TITLE if shell else None

    def handle_key(self, key: str) -> bool:
        return False
