"""The chat's one line for a user message that is not the prompt itself: context a hook added,
a file an `@` mention attached. A `!` command's context has its own row (the Bash row the user
ran), so it gets no line here."""

from __future__ import annotations

import re
from typing import Any

#: the first line of an attachment (tui_app/agents/mentions.py writes it)
_ATTACHED = re.compile(r"The user mentioned @(.*) in the prompt above\.")


def user_message_note(event: Any) -> str | None:
    source = getattr(event, "source", "user")
    if source == "attachment":
        match = _ATTACHED.search(event.text)
        return f"attached @{match.group(1) if match else event.text.split(chr(10), 1)[0]}"
    if source == "shell":
        return None
    return f"{'hook' if source == 'hook' else 'stop hook'} added: {event.text}"
