"""The conversation sent to the model, as a projection of session events.

The live session and `--resume` use the same builder, so the messages the model gets after a
restart are the messages it would have got without one. Tool results are committed in the
model's order (the order of the tool_use blocks), never in the order they finished.

A builder folds one agent's events: the session's own (`agent_id` None) or one subagent's, so the
events of subagents running inside an Agent call never leak into the conversation of the agent
that called them. A `ConversationCompacted` event replaces everything before it with its summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tui_app.runtime.events import (
    AssistantText,
    AssistantThinking,
    ConversationCompacted,
    ToolCallError,
    ToolCallRequested,
    ToolCallResult,
    UserMessage,
)
from tui_app.runtime.messages import (
    Block,
    Message,
    MessageHistory,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

CONTINUATION = ("This session is being continued from a previous conversation that ran out of context. "
                "The conversation is summarized below:\n\n{summary}\n\nContinue from where it left off "
                "without asking the user any further questions: carry on with the last task you were asked "
                "to work on.")


def continuation_text(summary: str) -> str:
    """The first user message after a compaction."""
    return CONTINUATION.format(summary=summary.strip())


@dataclass
class ConversationBuilder:
    messages: list[Message] = field(default_factory=list)
    _assistant: dict[int, Block] = field(default_factory=dict)
    _call_order: list[str] = field(default_factory=list)
    _results: dict[str, ToolResultBlock] = field(default_factory=dict)
    #: whose events this builder folds (None: the session's own agent)
    agent_id: str | None = None
    #: seq of the last event folded in (the boundary a compaction records)
    last_seq: int = 0

    def feed(self, event: Any) -> None:
        if getattr(event, "agent_id", None) != self.agent_id:
            return
        handler = _HANDLERS.get(event.type)
        if handler is not None:
            handler(self, event)
            self.last_seq = max(self.last_seq, event.seq)

    def _compacted(self, event: ConversationCompacted) -> None:
        self._assistant, self._call_order, self._results = {}, [], {}
        self.messages = [Message(role="user", content=[TextBlock(text=continuation_text(event.summary))])] \
            if event.summary.strip() else []

    def _text(self, event: AssistantText) -> None:
        if event.text:
            self._assistant[event.index] = TextBlock(text=event.text)

    def _thinking(self, event: AssistantThinking) -> None:
        self._assistant[event.index] = ThinkingBlock(raw=event.raw)

    def _requested(self, event: ToolCallRequested) -> None:
        self._assistant[event.index] = ToolUseBlock(id=event.call_id or "", name=event.name,
                                                     input=event.input)
        self._call_order.append(event.call_id or "")

    def _outcome(self, event: ToolCallResult | ToolCallError) -> None:
        if event.call_id in self._call_order:
            self._results[event.call_id] = ToolResultBlock(
                tool_use_id=event.call_id, content=event.model_content, is_error=event.type == "ToolCallError")

    def _user(self, event: UserMessage) -> None:
        self._flush_all()
        self.messages.append(Message(role="user", content=[TextBlock(text=event.text)]))

    def _flush_all(self) -> None:
        self._flush_assistant()
        self._flush_results()

    def _flush_assistant(self) -> None:
        if self._assistant:
            blocks = [self._assistant[i] for i in sorted(self._assistant)]
            self.messages.append(Message(role="assistant", content=blocks))
            self._assistant = {}

    def _flush_results(self) -> None:
        if not self._call_order:
            return
        # a call with no recorded result (log cut short by a crash) still needs one: the model
        # API rejects a tool_use without its tool_result
        blocks: list[Block] = [
            self._results.get(cid) or ToolResultBlock(
                tool_use_id=cid, content="Tool result lost: the session ended before the call finished.",
                is_error=True)
            for cid in self._call_order
        ]
        self.messages.append(Message(role="user", content=blocks))
        self._call_order = []
        self._results = {}

    def history(self) -> Sequence[Message]:
        """The messages as the model would see them now, without copying what is settled."""
        if not self._assistant and not self._call_order:
            return MessageHistory(self.messages, len(self.messages))
        return self.snapshot()

    def snapshot(self) -> list[Message]:
        """The messages as the model would see them now (pending results flushed in a copy)."""
        if not self._assistant and not self._call_order:
            return list(self.messages)
        clone = ConversationBuilder(list(self.messages), dict(self._assistant), list(self._call_order),
                                    dict(self._results), self.agent_id)
        clone._flush_all()
        return clone.messages


_HANDLERS = {
    "AssistantText": ConversationBuilder._text,
    "AssistantThinking": ConversationBuilder._thinking,
    "ToolCallRequested": ConversationBuilder._requested,
    "ToolCallResult": ConversationBuilder._outcome,
    "ToolCallError": ConversationBuilder._outcome,
    "ModelStepEnded": lambda self, event: self._flush_assistant(),
    "ToolBatchComplete": lambda self, event: self._flush_results(),
    "UserMessage": ConversationBuilder._user,
    "ModelStepStarted": lambda self, event: self._flush_all(),
    "TurnEnded": lambda self, event: self._flush_all(),
    "ConversationCompacted": ConversationBuilder._compacted,
}


def rebuild_conversation(events: list[Any], agent_id: str | None = None) -> list[Message]:
    builder = ConversationBuilder(agent_id=agent_id)
    for event in events:
        builder.feed(event)
    return builder.snapshot()
