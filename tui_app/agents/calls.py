"""An external agent's steps and tool calls, told as the same SessionEvents the built-in agent
emits (docs/architecture.md §11): ModelStepStarted/Ended, ToolCallRequested → (PermissionRequested/Resolved) →
ToolCallStarted → ToolCallResult / ToolCallError, ToolBatchComplete per step.

Every call the agent proposed gets exactly one result, even when the agent never reports one (it
exited, the turn was interrupted): `settle_open` gives the rest a synthetic error. A call Vigil was
never asked about is marked as decided by the agent when it starts: Vigil never claims an approval
it did not give.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from tui_app.runtime.contract import ToolFlags
from tui_app.runtime.display import Display, ErrorDisplay
from tui_app.runtime.events import (
    CallMetrics,
    ModelStepEnded,
    ModelStepStarted,
    PermissionResolved,
    ToolBatchComplete,
    ToolCallError,
    ToolCallRequested,
    ToolCallResult,
    ToolCallStarted,
)
from tui_app.runtime.messages import ImageBlock, ObservationContent, TextBlock
from tui_app.runtime.results.displays import MAX_ERROR_MESSAGE_BYTES
from tui_app.runtime.results.sanitize import neutralize_display
from tui_app.runtime.results.serialize import bound_text, content_bytes, valid_unicode

#: flags of a tool Vigil does not know: it may do anything
UNKNOWN_FLAGS = ToolFlags(read_only=False, side_effect_scope="system", needs_approval=True, risk="medium")


@dataclass
class AgentCall:
    call_id: str
    name: str
    input: Any
    step: int
    index: int
    requested_at: float = field(default_factory=time.perf_counter)
    started_at: float | None = None
    wait_ms: int = 0
    #: Vigil decided this call (its policy or the user through Vigil's dialog)
    decided_by_vigil: bool = False
    #: Vigil said no: (phase, code, message) for the result the agent will report
    denial: tuple[str, str, str] | None = None
    settled: bool = False
    failed: bool = False


@dataclass
class _Step:
    number: int
    calls: list[str] = field(default_factory=list)
    ended: bool = False
    batch_told: bool = False


class CallBook:
    def __init__(self, session: Any, agent_label: str) -> None:
        self.session = session
        self.agent_label = agent_label
        self.turn_id: str | None = None
        self.calls: dict[str, AgentCall] = {}
        self.steps: dict[int, _Step] = {}
        self.steps_in_turn = 0

    # ---- turns and steps ----------------------------------------------------------------------

    def begin_turn(self, turn_id: str) -> None:
        self.turn_id = turn_id
        self.steps_in_turn = 0

    def open_step(self, model: str = "") -> int:
        number = self.session.next_step()
        self.steps[number] = _Step(number)
        self.steps_in_turn += 1
        self.session.emit(ModelStepStarted(turn_id=self.turn_id, step=number, model=model))
        return number

    def close_step(self, number: int, stop_reason: str | None = None, usage: dict[str, int] | None = None,
                   error: str | None = None) -> None:
        step = self.steps.get(number)
        if step is None or step.ended:
            return
        step.ended = True
        self.session.emit(ModelStepEnded(turn_id=self.turn_id, step=number, stop_reason=stop_reason,
                                         usage=dict(usage or {}), error=error))
        self._maybe_batch_done(step)

    # ---- calls ----------------------------------------------------------------------------------

    def get(self, call_id: str) -> AgentCall | None:
        return self.calls.get(call_id)

    def request(self, call_id: str, name: str, data: Any, step: int, index: int) -> AgentCall:
        """The agent proposed a call (told once, however often the agent mentions it)."""
        call = self.calls.get(call_id)
        if call is not None:
            return call
        call = self.calls[call_id] = AgentCall(call_id, name, data, step, index)
        if step in self.steps:
            self.steps[step].calls.append(call_id)
        self.session.emit(ToolCallRequested(turn_id=self.turn_id, call_id=call_id, step=step, index=index,
                                            name=name, input=data))
        return call

    def decided_by_vigil(self, call_id: str, wait_ms: int = 0) -> None:
        call = self.calls.get(call_id)
        if call is not None:
            call.decided_by_vigil = True
            call.wait_ms += wait_ms

    def denied_by_vigil(self, call_id: str, phase: str, code: str, message: str) -> None:
        call = self.calls.get(call_id)
        if call is not None:
            call.decided_by_vigil = True
            call.denial = (phase, code, message)

    def denied_by_agent(self, call_id: str, reason: str) -> None:
        """The agent refused the call by itself (its own rules or mode)."""
        call = self.calls.get(call_id)
        if call is not None and not call.decided_by_vigil and not call.settled:
            self.session.emit(PermissionResolved(turn_id=self.turn_id, call_id=call_id, decision="deny",
                                                 decided_by="agent", reason=reason))

    def start(self, call_id: str, data: Any = None, agent_decision: str | None = None,
              target: str | None = None, at: float | None = None) -> None:
        """The call runs now (or since `at`, a perf_counter time, when the agent said so before
        Vigil could tell it ran unasked). `agent_decision` says how the agent decided by itself
        (shown when Vigil was not the one that allowed it); `target` is the table's one line for it
        when the agent's words say it better than Vigil's spec of a tool by that name."""
        call = self.calls.get(call_id)
        if call is None or call.started_at is not None or call.settled:
            return
        if data is not None:
            call.input = data
        if not call.decided_by_vigil:
            self.session.emit(PermissionResolved(
                turn_id=self.turn_id, call_id=call_id, decision="allow", decided_by="agent",
                reason=agent_decision or f"allowed by {self.agent_label}"))
        call.started_at = time.perf_counter() if at is None else at
        call.requested_at = min(call.requested_at, call.started_at)
        spec = self.session.registry.resolve(call.name)
        data = call.input if isinstance(call.input, dict) else {}
        try:
            flags = spec.flags_of(data) if spec is not None else UNKNOWN_FLAGS
            target = target or (spec.target(data) if spec is not None else "")
        except Exception:
            flags, target = UNKNOWN_FLAGS, target or ""
        self.session.emit(ToolCallStarted(turn_id=self.turn_id, call_id=call_id, tool=call.name, input=data,
                                          target=target, flags=flags))

    def finish(self, call_id: str, content: ObservationContent, *, is_error: bool, display: Display | None = None,
               error: tuple[str, str, str] | None = None, agent_decision: str | None = None) -> None:
        """The agent reported the call's result. `error` (phase, code, message) overrides what
        an error result is called; Vigil's own denial of the call wins over both."""
        call = self.calls.get(call_id)
        if call is None or call.settled:
            return
        if call.denial is not None:
            error, is_error = call.denial, True
        elif not is_error and call.started_at is None:
            self.start(call_id, agent_decision=agent_decision)
        elif is_error and error is None:
            if call.started_at is None:  # it ran without a word from Vigil, and failed
                self.start(call_id, agent_decision=agent_decision)
            error = ("execute", "execution_failed", _first_line(content))
        self._emit_outcome(call, content, is_error, display, error)

    def settle_open(self, phase: str, code: str, message: str) -> None:
        """A result for every call of this turn the agent never reported on."""
        for call in list(self.calls.values()):
            if not call.settled:
                if call.denial is not None:
                    self._emit_outcome(call, call.denial[2], True, None, call.denial)
                else:
                    started = call.started_at is not None
                    self._emit_outcome(call, message, True, None,
                                       (phase, code if started else "aborted_before_dispatch", message))
        for step in self.steps.values():
            step.ended = True
            self._maybe_batch_done(step)

    def _emit_outcome(self, call: AgentCall, content: ObservationContent, is_error: bool, display: Display | None,
                      error: tuple[str, str, str] | None) -> None:
        call.settled, call.failed = True, is_error
        now = time.perf_counter()
        sent = content_bytes(content)
        exec_ms = int((now - call.started_at) * 1000) if call.started_at is not None else 0
        metrics = CallMetrics(total_ms=int((now - call.requested_at) * 1000), permission_wait_ms=call.wait_ms,
                              exec_ms=exec_ms, bytes_out=sent)
        display = neutralize_display(display)
        if is_error:
            phase, code, message = error or ("execute", "execution_failed", _first_line(content))
            message = bound_text(valid_unicode(message), MAX_ERROR_MESSAGE_BYTES)[0]
            self.session.emit(ToolCallError(
                turn_id=self.turn_id, call_id=call.call_id, tool=call.name, phase=phase, code=code,  # type: ignore[arg-type]
                message=message, model_content=content,
                display=display or ErrorDisplay(phase=phase, code=code, message=message),
                side_effects="unknown" if call.started_at is not None else "none",
                original_bytes=sent, sent_bytes=sent, metrics=metrics))
        else:
            self.session.emit(ToolCallResult(
                turn_id=self.turn_id, call_id=call.call_id, tool=call.name, model_content=content, display=display,
                original_bytes=sent, sent_bytes=sent, metrics=metrics))
        step = self.steps.get(call.step)
        if step is not None:
            self._maybe_batch_done(step)

    def _maybe_batch_done(self, step: _Step) -> None:
        if step.batch_told or not step.ended or not step.calls:
            return
        calls = [self.calls[c] for c in step.calls]
        if not all(c.settled for c in calls):
            return
        step.batch_told = True
        failed = sum(1 for c in calls if c.failed)
        self.session.emit(ToolBatchComplete(turn_id=self.turn_id, batch=step.number, ok=len(calls) - failed,
                                            failed=failed))


def observation(content: Any) -> ObservationContent:
    """A tool_result's content as the model saw it: text, or text and image parts."""
    if isinstance(content, str):
        return valid_unicode(content)
    if not isinstance(content, list):
        return "" if content is None else valid_unicode(str(content))
    parts: list[TextBlock | ImageBlock] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(TextBlock(text=valid_unicode(block["text"])))
        elif isinstance(block, dict) and block.get("type") == "image" and isinstance(block.get("source"), dict):
            source = block["source"]
            parts.append(ImageBlock(media_type=str(source.get("media_type", "image/png")),
                                    data=str(source.get("data", ""))))
        else:
            parts.append(TextBlock(text=valid_unicode(str(block))))
    if all(isinstance(p, TextBlock) for p in parts):
        return "\n".join(p.text for p in parts)  # type: ignore[union-attr]
    return parts


def _first_line(content: ObservationContent) -> str:
    text = content if isinstance(content, str) else " ".join(p.text for p in content if isinstance(p, TextBlock))
    text = text.strip()
    return text.splitlines()[0][:500] if text else "failed"
