"""ReadArtifact through the real pipeline, on real artifact files: pages, matches, the end, and
the session boundary."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from tests.fakes import make_env
from tui_app.runtime.events import ToolCallError, ToolCallResult
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.runtime.results.artifacts import ArtifactStore
from tui_app.tools.read_artifact import MAX_LINE_CHARS, READ_ARTIFACT


@pytest.fixture
def setup(tmp_path):
    store = ArtifactStore("test", tmp_path / "sessions" / "test" / "artifacts")
    env, rec = make_env(READ_ARTIFACT, cwd=str(tmp_path))
    env.services["artifacts"] = store
    return env, rec, store


async def read(env, call_id="toolu_r", **data):
    return await run_call(ToolCall(call_id, "ReadArtifact", data), env)


def numbered(lines: list[str], start: int) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start))


LOG = [f"step {i}: ok" for i in range(1, 451)]


async def test_pages_through_an_artifact_to_the_end(setup):
    env, _, store = setup
    ref = store.persist_text("toolu_1", "Bash", "\n".join(LOG) + "\n")
    first = await read(env, artifact=ref.uri)
    assert isinstance(first, ToolCallResult)
    header = f"{ref.uri} (450 lines, 5.6KB)"
    assert first.model_content == (
        f"{header}\n{numbered(LOG[:200], 1)}\n\n"
        "[Showing lines 1-200 of 450. 250 more lines follow; call ReadArtifact with offset=201 to continue.]")
    second = await read(env, artifact=ref.uri, offset=201)
    assert second.model_content.split("\n")[1] == "   201\tstep 201: ok"
    assert "offset=401 to continue" in second.model_content
    last = await read(env, artifact=ref.path, offset=401, limit=200)
    assert last.model_content == (
        f"{header}\n{numbered(LOG[400:], 401)}\n\n[Showing lines 401-450 of 450. This is the end of the artifact.]")
    assert last.model_content.count("\n") - 3 == 49  # 50 lines, no more


async def test_a_line_past_the_end_says_how_many_lines_there_are(setup):
    env, _, store = setup
    ref = store.persist_text("toolu_1", "Bash", "a\nb\nc")
    out = await read(env, artifact=ref.uri, offset=4)
    assert isinstance(out, ToolCallResult)
    assert out.model_content.endswith("[Line 4 is past the end: the artifact has 3 lines. Use an offset from 1 to 3.]")
    assert out.model_content.count("\t") == 0


async def test_a_pattern_shows_matches_with_context_and_line_numbers(setup):
    env, _, store = setup
    lines = [f"test_{i} PASSED" for i in range(1, 101)]
    lines[9] = "test_10 FAILED: expected 4, got 5"
    lines[11] = "test_12 FAILED: timeout"
    lines[79] = "test_80 FAILED: KeyError"
    ref = store.persist_text("toolu_1", "Bash", "\n".join(lines))
    out = await read(env, artifact=ref.uri, pattern=r"FAILED", context=1)
    body = out.model_content.split("\n", 1)[1]
    assert body == (
        "     9-test_9 PASSED\n"
        "    10:test_10 FAILED: expected 4, got 5\n"
        "    11-test_11 PASSED\n"
        "    12:test_12 FAILED: timeout\n"
        "    13-test_13 PASSED\n"
        "--\n"
        "    79-test_79 PASSED\n"
        "    80:test_80 FAILED: KeyError\n"
        "    81-test_81 PASSED\n"
        "\n"
        "[3 matching lines in lines 1-100 of 100. The search reached the end of the artifact.]")


async def test_a_pattern_with_a_limit_says_where_to_continue(setup):
    env, _, store = setup
    ref = store.persist_text("toolu_1", "Grep", "\n".join(f"hit {i}" for i in range(1, 51)))
    out = await read(env, artifact=ref.uri, pattern=r"hit \d+", limit=2)
    assert out.model_content.endswith(
        "[2 matching lines shown, searched lines 1-2 of 50; more may follow. Call ReadArtifact with offset=3 and "
        "the same pattern to continue.]")
    nxt = await read(env, artifact=ref.uri, pattern=r"hit \d+", limit=2, offset=3)
    assert "     3:hit 3\n     4:hit 4" in nxt.model_content


async def test_no_match_is_said_plainly(setup):
    env, _, store = setup
    ref = store.persist_text("toolu_1", "Bash", "all good\n")
    out = await read(env, artifact=ref.uri, pattern="ERROR")
    assert out.model_content.endswith("[No line matches /ERROR/ in lines 1-1 of 1.]")


async def test_an_invalid_pattern_is_a_clear_error(setup):
    env, _, store = setup
    ref = store.persist_text("toolu_1", "Bash", "x")
    out = await read(env, artifact=ref.uri, pattern="(unclosed")
    assert isinstance(out, ToolCallError) and out.phase == "precondition"
    assert "Invalid regular expression /(unclosed/" in out.model_content


async def test_another_sessions_artifact_is_refused(setup, tmp_path):
    env, _, _ = setup
    theirs = ArtifactStore("other", tmp_path / "sessions" / "other" / "artifacts")
    ref = theirs.persist_text("toolu_1", "Bash", "their secret output")
    for reference in (ref.uri, ref.path, f"../other/artifacts/{Path(ref.path).name}"):
        out = await read(env, artifact=reference)
        assert isinstance(out, ToolCallError) and out.code == "artifact_not_found"
        assert "secret" not in out.model_content
    by_uri = (await read(env, artifact=ref.uri)).model_content
    assert by_uri == (f"<tool_use_error>{ref.uri} belongs to session other; only artifacts of the current "
                      "session (test) can be read.</tool_use_error>")
    assert "not an artifact of the current session" in (await read(env, artifact=ref.path)).model_content


async def test_binary_and_invalid_utf8_are_decoded_with_replacement(setup):
    env, _, store = setup
    writer = store.open_writer("toolu_1", "Bash")
    writer.write(b"ok line\n\xff\xfe\x00bin\x89PNG\nhalf \xf0\x9f\x98\n")
    ref = writer.close()
    out = await read(env, artifact=ref.uri, pattern="bin|half", context=0)
    assert isinstance(out, ToolCallResult)
    assert "     2:\ufffd\ufffd\x00bin\ufffdPNG" in out.model_content
    assert "     3:half \ufffd" in out.model_content


async def test_a_very_long_line_is_cut_and_the_next_line_still_read(setup):
    env, _, store = setup
    ref = store.persist_text("toolu_1", "Bash", "x" * 500_000 + "\nafter\n")
    out = await read(env, artifact=ref.uri)
    first, second = out.model_content.split("\n")[1:3]
    assert first == "     1\t" + "x" * MAX_LINE_CHARS + f" … [line cut at {MAX_LINE_CHARS} characters]"
    assert second == "     2\tafter"


async def test_a_page_stops_before_the_budget_and_names_the_next_offset(setup):
    env, _, store = setup
    ref = store.persist_text("toolu_1", "Bash", "\n".join("y" * 1500 for _ in range(300)))
    out = await read(env, artifact=ref.uri, limit=2000)
    assert isinstance(out, ToolCallResult) and not out.truncated  # never cut blindly by the pipeline
    shown = len(re.findall(r"^ +\d+\t", out.model_content, flags=re.M))
    assert 0 < shown < 300 and f"offset={shown + 1} to continue" in out.model_content


async def test_it_is_read_only_concurrency_safe_and_never_asks(setup):
    env, rec, store = setup
    refs = [store.persist_text(f"toolu_{i}", "Bash", f"artifact {i}\n") for i in range(4)]
    flags = READ_ARTIFACT.flags
    assert flags.effectively_read_only and flags.runs_in_parallel and not flags.needs_approval
    outs = await asyncio.gather(*(read(env, call_id=f"r{i}", artifact=r.uri) for i, r in enumerate(refs)))
    assert [o.model_content.split("\n")[1] for o in outs] == [f"     1\tartifact {i}" for i in range(4)]
    assert "PermissionRequested" not in rec.types()


async def test_an_artifact_of_an_empty_output_and_a_session_without_a_store(setup, tmp_path):
    env, _, store = setup
    writer = store.open_writer("toolu_1", "Bash")
    ref = writer.close()
    assert (await read(env, artifact=ref.uri)).model_content.endswith("[The artifact is empty.]")
    bare, _ = make_env(READ_ARTIFACT)
    out = await read(bare, artifact=ref.uri)
    assert isinstance(out, ToolCallError) and "no artifact store" in out.model_content
