"""Agent (alias Task): hands a task to a subagent and returns its final answer (docs/architecture.md §9.6).

The subagent itself is the session's "subagents" service (the built-in agent's, injected by the
composition root): this module only declares the call. An Agent call changes nothing by itself —
each call its subagent makes is checked, asked and run on its own — so it counts as read-only and
several Agent calls in one response run at the same time.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from tui_app.runtime.contract import (
    PermissionSpec,
    RawResult,
    ResultBudget,
    StrictInput,
    TimeoutPolicy,
    ToolContext,
    ToolFailure,
    ToolFlags,
    ToolSpec,
)
from tui_app.runtime.display import TextDisplay

DESCRIPTION = """\
Starts a subagent: another instance of the agent that works on one task on its own, with its own \
context, and answers with one final message. Use it for open-ended searches across the code base, \
for independent pieces of work, and to keep long explorations out of your own context.

- Give a short description (3-5 words) and a complete prompt: the subagent sees nothing of this \
conversation, so say exactly what to do and what to report back.
- Several Agent calls in one response run at the same time: start independent subagents together.
- The subagent's answer is for you, not the user: tell the user what matters from it.
- Its tool calls are checked and approved like yours; it cannot ask the user questions.

Available subagent types (subagent_type):
{types}"""

#: the subagent's answer to the caller (its whole transcript is kept as an artifact)
AGENT_BUDGET = ResultBudget(max_model_bytes=50_000, max_inline_bytes=50_000, over_budget="truncate",
                            preview_end="head")


class AgentInput(StrictInput):
    description: str = Field(min_length=1, description="A short (3-5 word) description of the task")
    prompt: str = Field(min_length=1, description="The task for the subagent, complete and self-contained")
    subagent_type: str = Field(default="general-purpose", description="The type of subagent to use")


def runner_of(ctx: ToolContext) -> Any:
    runner = ctx.service("subagents")
    if runner is None:
        raise ToolFailure("Subagents are not available here (a subagent cannot start subagents of its own).",
                          code="precondition_failed", retryable=False)
    return runner


async def check_agent(args: AgentInput, ctx: ToolContext) -> None:
    runner_of(ctx).check(args.subagent_type)


def result_text(outcome: Any) -> str:
    answer = outcome.text.strip() or "(The subagent finished without a final message.)"
    if outcome.transcript_path:
        answer += (f"\n\n(The subagent's whole transcript, {outcome.calls} tool calls: {outcome.transcript_path} "
                   "— read it with ReadArtifact only if the answer above is not enough.)")
    return answer


async def run_agent(args: AgentInput, ctx: ToolContext) -> RawResult:
    outcome = await runner_of(ctx).run(ctx, args.description, args.prompt, args.subagent_type)
    display = TextDisplay(title=f"{outcome.agent_type} subagent {outcome.agent_id}: {args.description}",
                          text=outcome.text or "(no final message)")
    output = {"agent_id": outcome.agent_id, "subagent_type": outcome.agent_type, "result": outcome.text,
              "reason": outcome.reason, "steps": outcome.steps, "tool_calls": outcome.calls,
              "transcript": outcome.transcript_path}
    if outcome.reason in ("error", "max_turns"):
        problem = outcome.error or outcome.reason
        text = f"The subagent stopped before it finished: {problem}"
        if outcome.text.strip():
            text += f"\n\nIts last message:\n{outcome.text.strip()}"
        raise ToolFailure(text, display=display, side_effects="unknown")
    return RawResult(output=output, text=result_text(outcome), display=display)


def agent_tool(types_menu: str) -> ToolSpec:
    """The Agent tool, its description listing the subagent types of this session."""
    return ToolSpec(
        name="Agent",
        aliases=("Task",),
        description=DESCRIPTION.format(types=types_menu),
        handler=run_agent,
        input_model=AgentInput,
        flags=ToolFlags(read_only=True, concurrency_safe=True, side_effect_scope="none", needs_approval=False,
                        risk="low"),
        permission=PermissionSpec(kind="other", reason="starts a subagent; its own calls are checked one by one"),
        budget=AGENT_BUDGET,
        timeout=TimeoutPolicy(kind="none"),
        validate_input=check_agent,
        target_of=lambda data: str(data.get("description") or ""),
        cancellation_message="The user interrupted the subagent before it finished.",
    )


#: as registered with the built-in tools; a session lists its own subagent types instead
AGENT = agent_tool("- general-purpose: every tool, for multi-step tasks\n- Explore: reads and searches only")
