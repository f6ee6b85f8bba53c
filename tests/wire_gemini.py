"""Gemini's generateContent wire format, for the loopback server: what Gemini CLI speaks with
`GOOGLE_GEMINI_BASE_URL` — `POST /v1beta/models/M:streamGenerateContent?alt=sse` (one
GenerateContentResponse per `data:` line) and `:generateContent` (one JSON body, for its side
requests that want JSON of a schema).
"""

from __future__ import annotations

import json
from typing import Any

from tests.wire_server import Captured, Piece, Reply, json_reply


def gemini_chunks(
    *,
    text: str = "",
    calls: list[dict[str, Any]] = (),  # type: ignore[assignment]
    usage: dict[str, int] | None = None,
    model: str = "gemini-2.5-pro",
    fragment: int = 12,
) -> list[dict[str, Any]]:
    """One streamed answer: text in pieces, then function calls ({"name", "args"[, "id"]}) in one
    chunk, the last chunk with finishReason and usageMetadata."""
    usage = usage or {"prompt": 180, "candidates": 30}
    meta = {"promptTokenCount": usage["prompt"], "candidatesTokenCount": usage["candidates"],
            "totalTokenCount": usage["prompt"] + usage["candidates"]}

    def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        out: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": "vigil-test"}
        out["usageMetadata"] = meta if finish else {"promptTokenCount": usage["prompt"],
                                                    "totalTokenCount": usage["prompt"]}
        return out

    out = [chunk([{"text": text[i:i + fragment]}]) for i in range(0, len(text), fragment)]
    if calls:
        out.append(chunk([{"functionCall": {k: v for k, v in c.items() if k in ("name", "args", "id")}}
                          for c in calls]))
    out.append(chunk([{"text": ""}], "STOP"))
    return out


def gemini_sse(chunks: list[dict[str, Any]], *, delay: float = 0.0) -> list[Piece]:
    return [Piece(f"data: {json.dumps(c)}\r\n\r\n".encode(), delay) for c in chunks]


def gemini_reply(**kw: Any) -> Reply:
    delay = kw.pop("delay", 0.0)
    return Reply(pieces=gemini_sse(gemini_chunks(**kw), delay=delay))


def gemini_json(value: Any) -> Reply:
    """A `:generateContent` answer whose text is `value` as JSON (what a schema-bound request wants)."""
    return json_reply(200, {"candidates": [{"content": {"parts": [{"text": json.dumps(value)}], "role": "model"},
                                            "finishReason": "STOP", "index": 0}],
                            "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 10,
                                              "totalTokenCount": 60},
                            "modelVersion": "gemini-2.5-flash"})


def function_responses(request: Captured) -> dict[str, Any]:
    """name → response of the functionResponse parts in a request's last user content."""
    found: dict[str, Any] = {}
    contents = request.json.get("contents", [])
    for content in contents[-1:]:
        for part in content.get("parts", []):
            answer = part.get("functionResponse")
            if isinstance(answer, dict):
                found[answer.get("name", "")] = answer.get("response")
    return found
