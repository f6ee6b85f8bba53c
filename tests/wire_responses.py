"""The OpenAI Responses API's stream (`POST /v1/responses`, SSE), for the loopback server: what
Codex speaks (`wire_api = "responses"`). Each event is sent as `event: TYPE` + `data: JSON` with a
`sequence_number`, in the order and shape the service sends them; test_wire_formats.py feeds the
bytes to the official openai SDK to prove it.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from tests.wire_server import Piece, Reply

_ids = itertools.count(1)


def responses_events(
    *,
    text: str = "",
    function_calls: list[dict[str, Any]] = (),  # type: ignore[assignment]
    custom_calls: list[dict[str, Any]] = (),  # type: ignore[assignment]
    usage: dict[str, int] | None = None,
    model: str = "gpt-5.5",
    fragment: int = 12,
) -> list[dict[str, Any]]:
    """One streamed response: a message with `text`, then function calls ({"call_id", "name",
    "arguments": dict or str}) and custom (freeform) tool calls ({"call_id", "name", "input": str},
    like Codex's apply_patch)."""
    number = next(_ids)
    response_id = f"resp_vigil_test_{number:05d}"
    usage = usage or {"input_tokens": 210, "output_tokens": 40, "cached": 0}
    shell = {"id": response_id, "object": "response", "created_at": 1764806400 + number, "status": "in_progress",
             "error": None, "incomplete_details": None, "instructions": None, "max_output_tokens": None,
             "model": model, "output": [], "parallel_tool_calls": True, "previous_response_id": None,
             "reasoning": {"effort": None, "summary": None}, "store": False, "temperature": 1.0,
             "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": [], "top_p": 1.0,
             "truncation": "disabled", "usage": None, "user": None, "metadata": {}}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": dict(shell)},
                                    {"type": "response.in_progress", "response": dict(shell)}]
    output: list[dict[str, Any]] = []
    if text:
        index = len(output)
        item_id = f"msg_vigil_{number:05d}_{index}"
        events.append({"type": "response.output_item.added", "output_index": index, "item": {
            "id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}})
        events.append({"type": "response.content_part.added", "item_id": item_id, "output_index": index,
                       "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}})
        for i in range(0, len(text), fragment):
            events.append({"type": "response.output_text.delta", "item_id": item_id, "output_index": index,
                           "content_index": 0, "delta": text[i:i + fragment], "logprobs": []})
        part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        events.append({"type": "response.output_text.done", "item_id": item_id, "output_index": index,
                       "content_index": 0, "text": text, "logprobs": []})
        events.append({"type": "response.content_part.done", "item_id": item_id, "output_index": index,
                       "content_index": 0, "part": part})
        item = {"id": item_id, "type": "message", "status": "completed", "role": "assistant", "content": [part]}
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
        output.append(item)
    for call in function_calls:
        index = len(output)
        arguments = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
        item_id = f"fc_vigil_{number:05d}_{index}"
        base = {"id": item_id, "type": "function_call", "call_id": call["call_id"], "name": call["name"]}
        events.append({"type": "response.output_item.added", "output_index": index,
                       "item": {**base, "arguments": "", "status": "in_progress"}})
        for i in range(0, len(arguments), fragment):
            events.append({"type": "response.function_call_arguments.delta", "item_id": item_id,
                           "output_index": index, "delta": arguments[i:i + fragment]})
        events.append({"type": "response.function_call_arguments.done", "item_id": item_id, "output_index": index,
                       "arguments": arguments})
        item = {**base, "arguments": arguments, "status": "completed"}
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
        output.append(item)
    for call in custom_calls:
        index = len(output)
        item_id = f"ctc_vigil_{number:05d}_{index}"
        base = {"id": item_id, "type": "custom_tool_call", "call_id": call["call_id"], "name": call["name"]}
        events.append({"type": "response.output_item.added", "output_index": index,
                       "item": {**base, "input": "", "status": "in_progress"}})
        for i in range(0, len(call["input"]), fragment):
            events.append({"type": "response.custom_tool_call_input.delta", "item_id": item_id,
                           "output_index": index, "delta": call["input"][i:i + fragment]})
        events.append({"type": "response.custom_tool_call_input.done", "item_id": item_id, "output_index": index,
                       "input": call["input"]})
        item = {**base, "input": call["input"], "status": "completed"}
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
        output.append(item)
    done = {**shell, "status": "completed", "output": output, "usage": {
        "input_tokens": usage["input_tokens"], "input_tokens_details": {"cached_tokens": usage.get("cached", 0)},
        "output_tokens": usage["output_tokens"], "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage["input_tokens"] + usage["output_tokens"]}}
    events.append({"type": "response.completed", "response": done})
    for sequence, event in enumerate(events):
        event["sequence_number"] = sequence
    return events


def responses_sse(events: list[dict[str, Any]], *, delay: float = 0.0) -> list[Piece]:
    return [Piece(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode(), delay) for e in events]


def responses_reply(**kw: Any) -> Reply:
    delay = kw.pop("delay", 0.0)
    return Reply(pieces=responses_sse(responses_events(**kw), delay=delay))


def function_output(body: dict[str, Any], call_id: str) -> str | None:
    """The output a request sends back for one of the model's calls (function or custom)."""
    for item in body.get("input", []):
        if isinstance(item, dict) and item.get("call_id") == call_id and item.get("type", "").endswith("_output"):
            output = item.get("output")
            if isinstance(output, list):
                return "\n".join(part.get("text", "") for part in output if isinstance(part, dict))
            return output if isinstance(output, str) else json.dumps(output)
    return None
