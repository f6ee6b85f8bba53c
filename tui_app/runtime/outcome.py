"""Outcomes: the runtime's result of one call, and the words the model gets for a failure.

An Outcome *is* its event (ToolCallResult or ToolCallError): the log, the screen and the model's
tool_result are all projections of that one record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from tui_app.runtime.display import Display
from tui_app.runtime.events import ErrorPhase, ToolCallError, ToolCallResult

Outcome = ToolCallResult | ToolCallError

TURN_STOP_MESSAGE = "Tool cancelled because a previous tool result requested a turn stop."
ABORTED_BEFORE_DISPATCH_MESSAGE = "Tool call aborted before it started: the user interrupted the turn."
MAX_CAUSE_DEPTH = 12
MAX_ERROR_CHARS = 500

_WS = re.compile(r"\s+")


def tool_use_error(message: str) -> str:
    return f"<tool_use_error>{message}</tool_use_error>"


def _is_wrapper(exc: BaseException) -> bool:
    """A layer that only wraps another error (no words of its own, or a one-member group)."""
    if isinstance(exc, BaseExceptionGroup):
        return True
    return not str(exc).strip()


def project_exception(exc: BaseException) -> str:
    """The model-facing message of an unexpected error: follow the cause chain (at most 12
    deep), take the first message that is not a wrapper's, collapse whitespace, cut at 500."""
    current: BaseException | None = exc
    chosen: BaseException = exc
    for _ in range(MAX_CAUSE_DEPTH):
        if current is None:
            break
        if isinstance(current, BaseExceptionGroup) and current.exceptions:
            current = current.exceptions[0]
            continue
        if not _is_wrapper(current):
            chosen = current
            break
        current = current.__cause__ or current.__context__
    text = str(chosen).strip() or type(chosen).__name__
    if isinstance(chosen, KeyError):  # str(KeyError('x')) is just "'x'"
        text = f"KeyError: {text}"
    text = _WS.sub(" ", text)
    if len(text) > MAX_ERROR_CHARS:
        text = text[: MAX_ERROR_CHARS - 1] + "…"
    return text


@dataclass
class CallEnded(Exception):
    phase: ErrorPhase
    code: str
    message: str
    model_text: str | None = None
    side_effects: Literal["none", "unknown", "applied"] = "none"
    retryable: bool = False
    display: Display | None = None
    stop_turn: bool = False
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.message)
