"""ExitPlanMode: in plan mode, the model presents its plan (Markdown) and asks to start working.

The user answers in a dialog (through the approval broker, announced as PlanApprovalAsked): approve
and let edits run (acceptEdits), approve and keep asking (default), or keep planning, with feedback
that reaches the model. Headless nobody can answer: the call ends the turn and the plan is the
turn's result. Outside plan mode there is nothing to exit, and the model is told so.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import Field

from tui_app.runtime.contract import (
    PermissionSpec,
    RawResult,
    StrictInput,
    TimeoutPolicy,
    ToolContext,
    ToolFailure,
    ToolFlags,
    ToolSpec,
)
from tui_app.runtime.display import TextDisplay
from tui_app.runtime.events import PlanApprovalAsked, UserQuestionAnswered
from tui_app.runtime.permissions.broker import ApprovalBroker, QuestionRequest

DESCRIPTION = """\
Use this tool in plan mode, when you have finished planning an implementation and want to start on it: \
it shows your plan to the user, who approves it (and the session leaves plan mode) or asks you to keep \
planning, with feedback.

- Only for tasks that change code; after pure research, just answer.
- The plan is Markdown: concise, concrete steps, the files to change and how to check the result.
- Do not use it to ask whether the plan is fine in words; this tool is how you ask."""

#: the user's choices in the dialog: the mode to continue in, or keep planning
DECISIONS = ("acceptEdits", "default", "keep")
APPROVED = ("The user approved your plan; the permission mode is now {mode}. Carry the plan out now "
            "(start with the todo list if it helps).")
HEADLESS = ("The plan was recorded. This session is headless: nobody can approve it, so the turn ends here "
            "with the plan as its result.")


class ExitPlanModeInput(StrictInput):
    plan: str = Field(min_length=1, description="The plan to show the user, in Markdown")


def _switch(ctx: ToolContext) -> Any:
    return ctx.service("permission_mode")


def _interactive_broker(ctx: ToolContext) -> ApprovalBroker | None:
    broker = ctx.service("approval_broker")
    return broker if isinstance(broker, ApprovalBroker) and broker.interactive else None


async def check_plan_mode(args: ExitPlanModeInput, ctx: ToolContext) -> None:
    switch = _switch(ctx)
    mode = switch.mode if switch is not None else None
    if mode != "plan":
        raise ToolFailure(f"The session is not in plan mode (it is in {mode or 'an unknown'} mode): there is no plan "
                          "to approve. Go ahead with the task.", code="precondition_failed", retryable=False)


async def exit_plan_mode(args: ExitPlanModeInput, ctx: ToolContext) -> RawResult:
    display = TextDisplay(title="Plan", text=args.plan)
    broker = _interactive_broker(ctx)
    if broker is None:
        return RawResult(output={"plan": args.plan, "decision": None}, text=HEADLESS, display=display, stop_turn=True)
    emit = ctx.emit or (lambda _event: None)
    request = QuestionRequest(request_id=broker.new_request_id(), call_id=ctx.call_id,
                              questions=[{"plan": args.plan}])

    def announce() -> None:
        emit(PlanApprovalAsked(call_id=ctx.call_id, request_id=request.request_id, plan=args.plan))

    try:
        reply = await broker.ask_user(request, announce)
    except asyncio.CancelledError:
        emit(UserQuestionAnswered(call_id=ctx.call_id, request_id=request.request_id, outcome="cancelled"))
        raise
    answers = reply.answers or {}
    decision = answers.get("decision") if answers.get("decision") in DECISIONS else "keep"
    feedback = (answers.get("feedback") or "").strip()
    emit(UserQuestionAnswered(call_id=ctx.call_id, request_id=request.request_id,
                              outcome="answered" if reply.answers is not None else "declined", client=reply.client,
                              answers={"decision": decision, **({"feedback": feedback} if feedback else {})}))
    if decision == "keep":
        said = f" The user said: {feedback}" if feedback else " Wait for the user to say what to change."
        raise ToolFailure(f"The user did not approve the plan and wants you to keep planning (the session stays in "
                          f"plan mode).{said}", code="user_denied", retryable=False, display=display)
    _switch(ctx).set_mode(decision)
    text = APPROVED.format(mode=decision)
    if feedback:
        text += f" The user added: {feedback}"
    return RawResult(output={"plan": args.plan, "decision": decision}, text=text, display=display)


EXIT_PLAN_MODE = ToolSpec(
    name="ExitPlanMode",
    description=DESCRIPTION,
    handler=exit_plan_mode,
    input_model=ExitPlanModeInput,
    flags=ToolFlags(read_only=True, concurrency_safe=False, side_effect_scope="user_interaction",
                    needs_approval=False, requires_user_interaction=True, risk="low"),
    permission=PermissionSpec(kind="interaction", reason="asks the user to approve the plan"),
    timeout=TimeoutPolicy(kind="none"),
    validate_input=check_plan_mode,
    target_of=lambda data: (str(data.get("plan") or "").strip().splitlines() or [""])[0][:80],
    cancellation_message="The user interrupted before answering the plan.",
)
