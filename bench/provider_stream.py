"""Decoding a long streamed response: Vigil's providers next to the official SDKs, same bytes.

A loopback server sends one recorded-shape response (4000 text deltas and 10 tool calls of 200
input-JSON fragments each) in 64 KiB chunks, so the client's parsing is what is measured, not
the server. Vigil's provider consumes the whole stream into runtime events; the SDK consumes it
through its streaming helper into a final message (which is the same work: every event parsed,
text and tool inputs accumulated).

    .venv/bin/python bench/provider_stream.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.wire_server import LoopbackServer, Piece, Reply, anthropic_events, openai_chunks
from tui_app.providers.anthropic import AnthropicModel
from tui_app.providers.openai import OpenAIModel
from tui_app.runtime.messages import Message, TextBlock
from tui_app.runtime.model import ModelRequest

TEXT = "All work and no play makes a long stream. " * 1143  # 48000 chars → 4000 deltas of 12
CALLS = [{"id": f"toolu_{n:02d}", "name": "Read", "input": {"file_path": f"src/{'x' * 2360}{n}.py"}}
         for n in range(10)]  # ~2400 chars of JSON each → 200 fragments of 12
REQUEST = ModelRequest(system="s", messages=[Message(role="user", content=[TextBlock(text="go")])], tools=[])
CHUNK = 64 * 1024


def chunked(body: bytes) -> Reply:
    return Reply(pieces=[Piece(body[i:i + CHUNK]) for i in range(0, len(body), CHUNK)])


def anthropic_body() -> bytes:
    events = anthropic_events(text=TEXT, tool_calls=CALLS)
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def openai_body() -> bytes:
    chunks = openai_chunks(text=TEXT, tool_calls=CALLS)
    return ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


async def vigil(model, server: LoopbackServer, body: bytes) -> float:
    server.queue(chunked(body))
    began = time.perf_counter()
    count = 0
    async for _ in model.stream(REQUEST):
        count += 1
    elapsed = time.perf_counter() - began
    assert count > 6000, count
    return elapsed


async def anthropic_sdk(client, server: LoopbackServer, body: bytes) -> float:
    server.queue(chunked(body))
    began = time.perf_counter()
    async with client.messages.stream(model="claude-sonnet-4-6", max_tokens=1024,
                                      messages=[{"role": "user", "content": "go"}]) as stream:
        message = await stream.get_final_message()
    elapsed = time.perf_counter() - began
    assert len(message.content) == 11
    return elapsed


async def openai_sdk(client, server: LoopbackServer, body: bytes) -> float:
    server.queue(chunked(body))
    began = time.perf_counter()
    async with client.chat.completions.stream(model="gpt-test", messages=[{"role": "user", "content": "go"}]) as stream:
        async for _ in stream:
            pass
        completion = stream.current_completion_snapshot
    elapsed = time.perf_counter() - began
    assert len(completion.choices[0].message.tool_calls) == 10
    return elapsed


async def measure(repeat: int) -> None:
    import anthropic
    import openai

    with LoopbackServer() as server:
        rows = []
        for name, body, ours_model, peer_client, peer in [
            ("anthropic", anthropic_body(),
             AnthropicModel(model="m", base_url=server.url, api_key="k"),
             anthropic.AsyncAnthropic(base_url=server.url, api_key="k", max_retries=0), anthropic_sdk),
            ("openai", openai_body(),
             OpenAIModel(model="m", base_url=server.url + "/v1", api_key="k"),
             openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="k", max_retries=0), openai_sdk),
        ]:
            await vigil(ours_model, server, body)  # warm up
            await peer(peer_client, server, body)
            ours = statistics.median([await vigil(ours_model, server, body) for _ in range(repeat)])
            theirs = statistics.median([await peer(peer_client, server, body) for _ in range(repeat)])
            await ours_model.aclose()
            await peer_client.close()
            rows.append((name, len(body), ours, theirs))
    print(f"provider stream decoding: one long response, median of {repeat} runs (ms per response)")
    print(f"{'wire':>10} {'bytes':>9} {'vigil':>9} {'SDK':>9} {'ratio':>7}")
    for name, size, ours, theirs in rows:
        print(f"{name:>10} {size:>9} {ours * 1000:>9.1f} {theirs * 1000:>9.1f} {theirs / ours:>6.1f}×")
    print("ratio = SDK time / Vigil time (above 1× means Vigil is faster)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    asyncio.run(measure(parser.parse_args().repeat))


if __name__ == "__main__":
    main()
