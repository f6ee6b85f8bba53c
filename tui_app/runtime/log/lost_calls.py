"""What a session's log owes after its process died mid-turn (kill -9 of the host, a crash): the
closing events a resumed session records first, so the log reads as a finished story again.

* a request that waited for a person is expired: PermissionResolved deny, decided_by "expired"
  (never an allow; the model hears that nobody answered, not that the user refused);
* a call that had started gets a `result_lost` error (its effect is unknown);
* a call that never started gets a `not_run` error;
* an open turn ends `interrupted`.
"""

from __future__ import annotations

from typing import Any

from tui_app.runtime.events import PermissionResolved, ToolCallError, TurnEnded, UserQuestionAnswered

EXPIRED_REASON = "the process that asked ended before anyone answered: the request expired"
LOST_MESSAGE = (
    "Tool result lost: Vigil's process ended while this call ran, so its effect is unknown. "
    "Check the state before trying it again."
)
NOT_RUN_MESSAGE = "Not run: Vigil's process ended before this call started (nobody had answered its approval)."


def closing_events(events: list[Any]) -> list[Any]:
    """The events that close what `events` (a session's log, in order) left open."""
    asked: dict[str, Any] = {}
    questions: dict[str, Any] = {}
    calls: dict[str, Any] = {}
    started: set[str] = set()
    open_turn: str | None = None
    for event in events:
        kind = event.type
        if kind == "TurnStarted":
            open_turn = event.turn_id
        elif kind in ("TurnEnded", "SessionEnded") and event.agent_id is None:
            open_turn = None
            asked.clear()
            questions.clear()
            calls.clear()
        elif kind == "PermissionRequested":
            asked[event.request_id] = event
        elif kind == "PermissionResolved":
            asked.pop(event.request_id, None)
        elif kind in ("UserQuestionAsked", "PlanApprovalAsked"):
            questions[event.request_id] = event
        elif kind == "UserQuestionAnswered":
            questions.pop(event.request_id, None)
        elif kind == "ToolCallRequested":
            calls[event.call_id] = event
        elif kind == "ToolCallStarted":
            started.add(event.call_id)
        elif kind in ("ToolCallResult", "ToolCallError"):
            calls.pop(event.call_id, None)
    out: list[Any] = []
    for request in asked.values():
        out.append(
            PermissionResolved(
                request_id=request.request_id,
                decision="deny",
                decided_by="expired",
                reason=EXPIRED_REASON,
                turn_id=request.turn_id,
                call_id=request.call_id,
                agent_id=request.agent_id,
            )
        )
    for question in questions.values():
        out.append(
            UserQuestionAnswered(
                request_id=question.request_id,
                outcome="cancelled",
                turn_id=question.turn_id,
                call_id=question.call_id,
                agent_id=question.agent_id,
            )
        )
    for call_id, call in calls.items():
        ran = call_id in started
        message = LOST_MESSAGE if ran else NOT_RUN_MESSAGE
        out.append(
            ToolCallError(
                turn_id=call.turn_id,
                call_id=call_id,
                agent_id=call.agent_id,
                tool=call.name,
                phase="execute" if ran else "cancel",
                code="result_lost" if ran else "not_run",
                message=message,
                model_content=message,
                side_effects="unknown" if ran else "none",
            )
        )
    if open_turn is not None:
        out.append(
            TurnEnded(
                turn_id=open_turn,
                reason="interrupted",
                message="Vigil's process ended during this turn; the session was resumed.",
            )
        )
    return out
