"""The conversation sent to the model, as a projection of session events.

The live session and `--resume` use the same builder, so the messages the model gets after a
restart are the messages it would have got without one. Tool results are committed in the
model's order (the order of the tool_use blocks), never in the order they finished.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from tui_app.runtime.events import (
    AssistantText,
    AssistantThinking,
    ToolCallError,
    ToolCallRequested,
    ToolCallResult,
    UserMessage,
)
from tui_app.runtime.messages import Block, Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock


class MessageHistory(Sequence[Message]):
    """The first `length` messages of a conversation, without copying them.

    The builder only ever appends, so a prefix of its list never changes: a request can hold one
    for as long as it likes. Copying the history for every model step made each step cost more than
    the last, and a provider (or a test) that kept its requests kept every copy."""

    __slots__ = ("_length", "_messages")

    def __init__(self, messages: list[Message], length: int) -> None:
        self._messages = messages
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return self._messages[: self._length][index]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("message index out of range")
        return self._messages[index]

    def __iter__(self) -> Iterator[Message]:
        messages = self._messages
        for i in range(self._length):
            yield messages[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(other) == self._length and all(a == b for a, b in zip(self, other, strict=False))

    def __repr__(self) -> str:
        return f"MessageHistory({self._length} messages)"


@dataclass
class ConversationBuilder:
    messages: list[Message] = field(default_factory=list)
    _assistant: dict[int, Block] = field(default_factory=dict)
    _call_order: list[str] = field(default_factory=list)
    _results: dict[str, ToolResultBlock] = field(default_factory=dict)

    def feed(self, event: Any) -> None:
        handler = _HANDLERS.get(event.type)
        if handler is not None:
            handler(self, event)

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
                                    dict(self._results))
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
}


def rebuild_conversation(events: list[Any]) -> list[Message]:
    builder = ConversationBuilder()
    for event in events:
        builder.feed(event)
    return builder.snapshot()
