"""AskUserQuestion: multiple-choice questions to the user, asked through the same broker as the
approvals (registered, then announced as `UserQuestionAsked`, answered thread-safely by the
screen). Headless there is nobody to ask, and the call says so instead of waiting forever."""

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
from tui_app.runtime.events import UserQuestionAnswered, UserQuestionAsked
from tui_app.runtime.permissions.broker import ApprovalBroker, QuestionRequest

DESCRIPTION = "\n".join([
    "Asks the user one to four multiple-choice questions and waits for the answers.",
    "",
    "- Use it to settle a preference, a requirement or a choice between approaches before acting on a guess.",
    "- Each question has a short header (a chip label, up to ~12 characters), two to four options with a "
    "label and a description, and multiSelect when several options may be chosen together.",
    "- The user may also answer in their own words instead of picking an option.",
    "- In a non-interactive (headless) session nobody can answer and the call fails at once.",
])

HEADLESS_MESSAGE = ("AskUserQuestion needs an interactive session; in headless mode nobody can answer. Make a "
                    "reasonable assumption, state it in your reply, and continue (or stop and ask in your final "
                    "message).")


class QuestionOption(StrictInput):
    label: str = Field(min_length=1, description="The option as the user will pick it (1-5 words)")
    description: str = Field(description="What choosing this option means")


class Question(StrictInput):
    question: str = Field(min_length=1, description="The complete question, ending with a question mark")
    header: str = Field(min_length=1, description="A very short label shown as a chip (max 12 characters)")
    options: list[QuestionOption] = Field(min_length=2, max_length=4, description="The choices (2-4)")
    multiSelect: bool = Field(default=False, description="Whether several options may be chosen")


class AskUserQuestionInput(StrictInput):
    questions: list[Question] = Field(min_length=1, max_length=4, description="Questions to ask (1-4)")


def broker_of(ctx: ToolContext) -> ApprovalBroker | None:
    broker = ctx.service("approval_broker")
    return broker if isinstance(broker, ApprovalBroker) and broker.interactive else None


async def check_questions(args: AskUserQuestionInput, ctx: ToolContext) -> None:
    texts = [q.question for q in args.questions]
    if len(set(texts)) != len(texts):
        raise ToolFailure("Each question must be different: the answers are keyed by the question text.")
    for q in args.questions:
        labels = [o.label for o in q.options]
        if len(set(labels)) != len(labels):
            raise ToolFailure(f"The options of \"{q.question}\" must have different labels.")
    if broker_of(ctx) is None:
        raise ToolFailure(HEADLESS_MESSAGE, code="no_interactive_client", retryable=False)


def answers_text(answers: dict[str, str]) -> str:
    pairs = ", ".join(f'"{question}"="{answer}"' for question, answer in answers.items())
    return f"User has answered your questions: {pairs}. You can now continue with the user's answers in mind."


async def ask_user_question(args: AskUserQuestionInput, ctx: ToolContext) -> RawResult:
    broker = broker_of(ctx)
    if broker is None:  # the session lost its client between the check and now
        raise ToolFailure(HEADLESS_MESSAGE, code="no_interactive_client", retryable=False)
    questions: list[dict[str, Any]] = [q.model_dump() for q in args.questions]
    request = QuestionRequest(request_id=broker.new_request_id(), call_id=ctx.call_id, questions=questions)
    emit = ctx.emit or (lambda _event: None)

    def announce() -> None:
        emit(UserQuestionAsked(call_id=ctx.call_id, request_id=request.request_id, questions=questions))

    try:
        reply = await broker.ask_user(request, announce)
    except asyncio.CancelledError:  # the dialog must close by itself
        emit(UserQuestionAnswered(call_id=ctx.call_id, request_id=request.request_id, outcome="cancelled"))
        raise
    if reply.answers is None:
        emit(UserQuestionAnswered(call_id=ctx.call_id, request_id=request.request_id, outcome="declined",
                                  client=reply.client))
        raise ToolFailure("The user declined to answer the questions. Do not guess: wait for the user to say how "
                          "to proceed.", code="user_denied", retryable=False)
    answers = {q["question"]: reply.answers.get(q["question"], "(no answer)") for q in questions}
    answers.update({k: v for k, v in reply.answers.items() if k not in answers})
    emit(UserQuestionAnswered(call_id=ctx.call_id, request_id=request.request_id, answers=answers, client=reply.client))
    text = answers_text(answers)
    return RawResult(output={"questions": questions, "answers": answers}, text=text,
                     display=TextDisplay(title="Answers", text="\n".join(f"{q} → {a}" for q, a in answers.items())))


ASK_USER_QUESTION = ToolSpec(
    name="AskUserQuestion",
    description=DESCRIPTION,
    handler=ask_user_question,
    input_model=AskUserQuestionInput,
    flags=ToolFlags(read_only=True, concurrency_safe=False, side_effect_scope="user_interaction",
                    needs_approval=False, requires_user_interaction=True, risk="low"),
    permission=PermissionSpec(kind="interaction", reason="asks the user"),
    timeout=TimeoutPolicy(kind="none"),
    validate_input=check_questions,
    cancellation_message="The user interrupted before answering the questions.",
)
