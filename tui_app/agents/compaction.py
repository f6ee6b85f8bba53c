"""Context compaction: when the conversation nears the model's context window, the model writes a
summary of it and the summary takes the conversation's place (docs/architecture.md §11).

Token accounting comes from the providers' usage: after each model step the input, cache and
output tokens it reported are the size of the conversation at that moment; what was added since
(tool results) is estimated at four characters a token. Compaction runs before a model step when
that reaches `threshold` × the window (settings `autoCompact`), by hand with /compact, and once
more when a provider says the request no longer fits. The result is one `ConversationCompacted`
event; the conversation builder honours it live and when a log is resumed, and the log keeps
every earlier event (so the screen, replay and artifacts keep everything).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tui_app.runtime.events import CompactionStarted, ConversationCompacted, ModelRetry, Warning
from tui_app.runtime.executor import TurnControl
from tui_app.runtime.log.conversation import continuation_text
from tui_app.runtime.messages import Message, TextBlock, ToolDefinition
from tui_app.runtime.model import ModelError, ModelRequest, Retrying, StepStop, TextDelta
from tui_app.runtime.outcome import project_exception

DEFAULT_THRESHOLD = 0.8
#: for a model the table does not know (a local server's model is often smaller: set contextWindow)
DEFAULT_WINDOW = 128_000
CHARS_PER_TOKEN = 4

#: context windows by model-name prefix; the longest matching prefix wins
CONTEXT_WINDOWS: dict[str, int] = {
    "claude": 200_000,
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5": 16_385,
    "gpt-oss": 131_072,
    "o1": 200_000,
    "o3": 200_000,
    "o4": 200_000,
    "gemini": 1_048_576,
    "deepseek": 128_000,
    "qwen3": 40_960,
    "qwen2.5": 32_768,
    "qwen": 32_768,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3.3": 131_072,
    "llama3": 8_192,
    "mistral": 32_768,
    "codestral": 256_000,
    "gemma3": 131_072,
    "gemma": 8_192,
    "scripted": 200_000,
}

SUMMARY_INSTRUCTION = """\
Your task now is to write a detailed summary of the conversation so far. It will replace the \
conversation: after it, you will see only this summary, so it must hold everything needed to carry \
on the work without asking the user again. Do not call any tools; answer with the summary only.

Cover, in this order:
1. The user's requests and intent, in their own words where it matters.
2. Key technical facts: the project, its layout, conventions, commands that build and test it.
3. Files read, created or changed, with their full paths, and the important code (exact snippets where \
they matter).
4. Errors met and how they were fixed; approaches that did not work.
5. Persisted outputs (artifacts): keep every path or vigil-artifact:// URI exactly, so they can be read \
back with ReadArtifact.
6. Pending tasks, and the current work: what was being done right before this summary.
7. The next step, if there is one, in line with the user's latest request."""


def context_window(model: str, overrides: Mapping[str, int] | None = None) -> int:
    """The window of `model`: an override (exact name or prefix), else the table, else the default.
    A provider prefix (`anthropic/claude-…` on OpenRouter) does not hide the name."""
    name = model.rsplit("/", 1)[-1].lower()
    for table in (overrides or {}, CONTEXT_WINDOWS):
        lowered = {k.lower(): v for k, v in table.items()}
        if name in lowered:
            return lowered[name]
        prefixes = [k for k in lowered if name.startswith(k)]
        if prefixes:
            return lowered[max(prefixes, key=len)]
    return DEFAULT_WINDOW


@dataclass(frozen=True)
class CompactionSettings:
    enabled: bool = True
    threshold: float = DEFAULT_THRESHOLD
    #: model name (or prefix) → window, from settings `contextWindow`
    windows: dict[str, int] = field(default_factory=dict)
    #: `contextWindow` given as one number: the window of every model
    window: int | None = None

    def window_of(self, model: str) -> int:
        return self.window or context_window(model, self.windows)


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def compaction_settings(values: Mapping[str, Any]) -> tuple[CompactionSettings, list[str]]:
    """From settings: `autoCompact` (true/false, or {"enabled": bool, "threshold": 0.5-0.95}) and
    `contextWindow` (a number of tokens, or {"model or prefix": tokens}). Problems are reported
    and the defaults kept."""
    problems: list[str] = []
    enabled, threshold = True, DEFAULT_THRESHOLD
    auto = values.get("autoCompact")
    if isinstance(auto, bool):
        enabled = auto
    elif isinstance(auto, dict):
        if isinstance(auto.get("enabled"), bool):
            enabled = auto["enabled"]
        raw = auto.get("threshold")
        if raw is not None:
            if isinstance(raw, int | float) and not isinstance(raw, bool) and 0.1 <= raw <= 0.99:
                threshold = float(raw)
            else:
                problems.append(f"autoCompact.threshold must be a share of the window between 0.1 and 0.99, "
                                f"not {raw!r}")
    elif auto is not None:
        problems.append(f"autoCompact must be true, false or an object, not {auto!r}")
    window, windows = None, {}
    given = values.get("contextWindow")
    if _positive_int(given):
        window = given
    elif isinstance(given, dict):
        for name, size in given.items():
            if _positive_int(size):
                windows[str(name)] = size
            else:
                problems.append(f"contextWindow[{name!r}] must be a positive number of tokens, not {size!r}")
    elif given is not None:
        problems.append(f"contextWindow must be a number of tokens or an object, not {given!r}")
    return CompactionSettings(enabled, threshold, windows, window), problems


def estimate_tokens(text_or_len: str | int) -> int:
    length = text_or_len if isinstance(text_or_len, int) else len(text_or_len)
    return (length + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def messages_chars(messages: list[Message]) -> int:
    return sum(len(m.model_dump_json()) for m in messages)


def tools_chars(tools: list[ToolDefinition]) -> int:
    return len(json.dumps([t.model_dump() for t in tools]))


def usage_total(usage: Mapping[str, int]) -> int:
    """The tokens of a request and its answer: everything the provider counted."""
    return sum(int(usage.get(k, 0) or 0) for k in ("input_tokens", "cache_read_input_tokens",
                                                    "cache_creation_input_tokens", "output_tokens"))


@dataclass
class ContextAccount:
    """How full one agent's context is. `reported` is what the provider counted for the last
    request and its answer, when the conversation had `messages_then` messages."""

    settings: CompactionSettings = field(default_factory=CompactionSettings)
    reported: int | None = None
    messages_then: int = 0
    #: a turn in which automatic compaction failed does not try again (each try is a model request)
    failed_turn: str | None = None
    #: (model, its context window), looked up once per model
    _window: tuple[str, int] | None = field(default=None, repr=False, compare=False)

    def record(self, usage: Mapping[str, int], messages: int) -> None:
        total = usage_total(usage)
        if total > 0:
            self.reported, self.messages_then = total, messages

    def compacted(self, tokens_after: int) -> None:
        self.reported, self.messages_then = tokens_after, 1

    def tokens(self, host: Any) -> int:
        return self._tokens_of(host, host.conversation.snapshot())

    def _tokens_of(self, host: Any, messages: list[Message]) -> int:
        if self.reported is None or self.messages_then > len(messages):
            # nothing counted yet (a resumed session): estimate the whole request
            return estimate_tokens(len(host.system_prompt) + tools_chars(host.tool_menu) + messages_chars(messages))
        return self.reported + estimate_tokens(messages_chars(messages[self.messages_then:]))

    def window(self, host: Any) -> int:
        model = host.model.model
        known = self._window
        if known is None or known[0] != model:  # looked up once per model: the check runs every step
            known = self._window = (model, self.settings.window_of(model))
        return known[1]

    def should_compact(self, host: Any, turn_id: str | None) -> bool:
        """Before every model step, so it copies the conversation once (a snapshot with results
        still pending builds new messages)."""
        if not self.settings.enabled or self.failed_turn == (turn_id or ""):
            return False
        messages = host.conversation.snapshot()
        if len(messages) <= 1:
            return False  # a summary alone (or one prompt) cannot get any smaller
        return self._tokens_of(host, messages) >= self.settings.threshold * self.window(host)


def account_of(host: Any) -> ContextAccount | None:
    """The context account of the agent `host` runs (a session's built-in agent, or a subagent)."""
    account = getattr(host, "context", None)
    return account if isinstance(account, ContextAccount) else None


_OVERFLOW = re.compile(r"prompt is too long|context[_ ]length|context window|maximum context|too many tokens|"
                       r"exceeds the (?:model's )?(?:max|context)", re.IGNORECASE)


def is_context_overflow(stop_reason: str | None, error: str | None) -> bool:
    """The provider said the request does not fit (a stop reason, or a 400 in its words)."""
    return stop_reason == "model_context_window_exceeded" or bool(error and _OVERFLOW.search(error))


def summary_request(host: Any, instructions: str = "") -> ModelRequest:
    """The conversation and the summary instruction. The system prompt and the tools stay as
    they were, so the provider's prompt cache still holds the prefix (and the Messages API wants
    tools declared when the history has tool calls)."""
    text = SUMMARY_INSTRUCTION
    if instructions.strip():
        text += f"\n\nThe user asks that the summary pay attention to: {instructions.strip()}"
    messages = [*host.conversation.snapshot(), Message(role="user", content=[TextBlock(text=text)])]
    return ModelRequest(system=host.system_prompt, messages=messages, tools=host.tool_menu, purpose="compaction")


async def _stream_summary(host: Any, request: ModelRequest, turn_id: str | None
                          ) -> tuple[str, dict[str, int]]:
    parts: list[str] = []
    usage: dict[str, int] = {}
    async for event in host.model.stream(request):
        if isinstance(event, TextDelta):
            parts.append(event.text)
        elif isinstance(event, Retrying):
            host.emit(ModelRetry(turn_id=turn_id, attempt=event.attempt, max_attempts=event.max_attempts,
                                 status=event.status, reason=event.reason, wait_ms=event.wait_ms))
        elif isinstance(event, StepStop):
            usage = {k: v for k, v in event.usage.items() if isinstance(v, int)}
    return "".join(parts), usage


async def compact(host: Any, control: TurnControl | None = None, *, turn_id: str | None = None,
                  trigger: str = "manual", instructions: str = "") -> ConversationCompacted | None:
    """Ask the model for a summary and put it in the conversation's place. None (with a warning)
    when there is nothing to compact, the request failed, or the user interrupted it."""
    if not host.conversation.snapshot():
        if trigger == "manual":  # asked for: the user hears why nothing happened
            host.emit(CompactionStarted(turn_id=turn_id, trigger="manual", instructions=instructions.strip()))
            host.emit(Warning(turn_id=turn_id, code="compaction_failed", message="Not enough messages to compact."))
        return None
    began = time.perf_counter()
    host.emit(CompactionStarted(turn_id=turn_id, trigger=trigger, instructions=instructions.strip()))  # type: ignore[arg-type]
    account = account_of(host)
    before = account.tokens(host) if account is not None else 0
    request = summary_request(host, instructions)
    work = asyncio.ensure_future(_stream_summary(host, request, turn_id))
    waits: set[asyncio.Future[Any]] = {work}
    abort_wait = asyncio.ensure_future(control.aborted.wait()) if control is not None else None
    if abort_wait is not None:
        waits.add(abort_wait)
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if abort_wait is not None:
            abort_wait.cancel()
        if not work.done():
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)
    problem = None
    if work.cancelled():
        problem = "it was interrupted"
    elif work.exception() is not None:
        exc = work.exception()
        problem = str(exc) if isinstance(exc, ModelError) else project_exception(exc)  # type: ignore[arg-type]
    else:
        summary, usage = work.result()
        if not summary.strip():
            problem = "the model answered with no summary"
    if problem is not None:
        if account is not None and trigger == "auto":
            account.failed_turn = turn_id or ""
        host.emit(Warning(turn_id=turn_id, code="compaction_failed",
                          message=f"The conversation could not be compacted: {problem}. It goes on as it was."))
        return None
    after = estimate_tokens(continuation_text(summary))
    event = host.emit(ConversationCompacted(
        turn_id=turn_id, summary=summary.strip(), boundary_seq=host.conversation.last_seq,
        trigger=trigger, instructions=instructions.strip(), tokens_before=before, tokens_after=after,  # type: ignore[arg-type]
        usage=usage, duration_ms=int((time.perf_counter() - began) * 1000)))
    if account is not None:
        account.compacted(after)
    return event


async def maybe_compact(host: Any, control: TurnControl, turn_id: str | None) -> ConversationCompacted | None:
    """Before a model step: compact when the context has reached the threshold."""
    account = account_of(host)
    if account is None or not account.should_compact(host, turn_id):
        return None
    return await compact(host, control, turn_id=turn_id, trigger="auto")


def clear(host: Any, turn_id: str | None = None) -> ConversationCompacted:
    """/clear: the conversation starts afresh (the log and the screen keep what was)."""
    event = host.emit(ConversationCompacted(turn_id=turn_id, summary="", boundary_seq=host.conversation.last_seq,
                                            trigger="clear"))
    account = account_of(host)
    if account is not None:
        account.reported, account.messages_then = None, 0
    return event
