"""Every row of the docs/architecture.md §6 budget table through the real pipeline: what the model gets, under
the budget, over it, persisted or cut, at UTF-8 boundaries, and for failures."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes import SAFE, make_env
from tui_app.runtime.contract import RawResult, ResultBudget, StrictInput, ToolFailure, ToolSpec
from tui_app.runtime.events import ToolCallError, ToolCallResult
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.runtime.results import budgets
from tui_app.runtime.results.artifacts import ArtifactStore
from tui_app.runtime.results.serialize import failure_text, preview_head, preview_tail, truncate_middle, truncate_text


class EmitInput(StrictInput):
    text: str = ""
    error: bool = False


async def emit_text(args: EmitInput, ctx) -> RawResult:
    return RawResult(text=args.text, is_error=args.error)


def tool(name: str, budget: ResultBudget, **extra) -> ToolSpec:
    return ToolSpec(name=name, description=name, handler=emit_text, input_model=EmitInput, flags=SAFE,
                    budget=budget, **extra)


def env_with_store(spec: ToolSpec, tmp_path):
    env, rec = make_env(spec)
    env.services["artifacts"] = ArtifactStore("test", tmp_path / "artifacts")
    return env, rec


async def run(env, name: str, text: str, error: bool = False, call_id: str = "toolu_1"):
    return await run_call(ToolCall(call_id, name, {"text": text, "error": error}), env)


def log_text(size: int, tag: str = "line") -> str:
    """ASCII log lines, numbered, exactly `size` bytes long."""
    lines, total, i = [], 0, 0
    while total < size:
        line = f"{tag} {i:07d} of the output\n"
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines)[:size]


def notice(original: int, limit: int) -> str:
    return f"[Tool output truncated by resultBudget: original {original} bytes, limit {limit} bytes]"


# name, constant, bytes to the model, over budget, preview end — docs/architecture.md §6, row by row
ROWS = [
    ("Anything", budgets.DEFAULT, 100_000, "truncate", "head"),
    ("Bash", budgets.BASH, 30_000, "artifact", "tail"),
    ("Read", budgets.READ, 262_144, "truncate", "head"),
    ("Write", budgets.WRITE_EDIT, 100_000, "truncate", "head"),
    ("Edit", budgets.WRITE_EDIT, 100_000, "truncate", "head"),
    ("WebFetch", budgets.WEB_FETCH, 100_000, "artifact", "head"),
    ("Glob", budgets.GLOB, 100_000, "artifact", "head"),
    ("Grep", budgets.GREP, 20_000, "artifact", "head"),
    ("mcp__docs__search", budgets.MCP, 50_000, "truncate", "head"),
]
ROW_IDS = [row[0] for row in ROWS]


def test_the_contract_default_is_the_tables_default_row():
    assert ResultBudget() == budgets.DEFAULT


@pytest.mark.parametrize(("name", "budget", "limit", "over", "end"), ROWS, ids=ROW_IDS)
def test_budget_constants_match_the_design_table(name, budget, limit, over, end):
    assert (budget.limit_bytes, budget.over_budget, budget.preview_end) == (limit, over, end)


@pytest.mark.parametrize(("name", "budget", "limit", "over", "end"), ROWS, ids=ROW_IDS)
async def test_output_exactly_at_the_budget_goes_inline(name, budget, limit, over, end, tmp_path):
    env, rec = env_with_store(tool(name, budget), tmp_path)
    text = log_text(limit)
    out = await run(env, name, text)
    assert isinstance(out, ToolCallResult)
    assert out.model_content == text
    assert (out.truncated, out.strategy, out.original_bytes, out.sent_bytes) == (False, "inline", limit, limit)
    assert out.artifacts == [] and "ArtifactPersisted" not in rec.types()


@pytest.mark.parametrize(("name", "budget", "limit", "over", "end"), ROWS, ids=ROW_IDS)
async def test_one_byte_over_the_budget_takes_the_rows_road(name, budget, limit, over, end, tmp_path):
    env, rec = env_with_store(tool(name, budget), tmp_path)
    text = log_text(limit + 1)
    out = await run(env, name, text)
    assert isinstance(out, ToolCallResult)
    assert out.truncated and out.strategy == over
    assert out.original_bytes == limit + 1 and out.sent_bytes == len(out.model_content.encode())
    assert out.sent_bytes <= limit
    if over == "truncate":
        kept, _, line = out.model_content.rpartition("\n\n")
        assert line == notice(limit + 1, limit)
        assert out.sent_bytes == limit  # the head fills the budget exactly, with the notice
        assert text.startswith(kept)
        assert out.artifacts == [] and not rec.of("Warning")
    else:
        (ref,) = out.artifacts
        assert Path(ref.path).read_text(encoding="utf-8") == text  # nothing is lost
        assert rec.of("ArtifactPersisted")[0].artifact == ref
        assert out.model_content.startswith("<persisted-output>\nOutput too large (")
        assert f"Full output saved to: {ref.path}\n" in out.model_content
        if end == "tail":
            assert "Preview (last 2.0KB):\n...\n" in out.model_content
            assert text.endswith(out.model_content.split("\n...\n", 1)[1].removesuffix("\n</persisted-output>"))
        else:
            assert "Preview (first 2.0KB):\n" in out.model_content
            assert out.model_content.endswith("\n...\n</persisted-output>")


async def test_the_head_envelope_word_for_word(tmp_path):
    env, _ = env_with_store(tool("Grep", budgets.GREP), tmp_path)
    text = log_text(820 * 1024, "match")
    out = await run(env, "Grep", text)
    path = out.artifacts[0].path
    # 2000 characters end inside a line; the last newline before that is in the second half
    head = text[:2000]
    head = head[: head.rfind("\n")]
    assert out.model_content == (
        "<persisted-output>\n"
        f"Output too large (820.0KB). Full output saved to: {path}\n"
        "\n"
        "Preview (first 2.0KB):\n"
        f"{head}\n"
        "...\n"
        "</persisted-output>"
    )


async def test_the_tail_envelope_word_for_word(tmp_path):
    env, _ = env_with_store(tool("Bash", budgets.BASH), tmp_path)
    text = log_text(40_000, "build") + "ERROR: 3 tests failed"
    out = await run(env, "Bash", text)
    path = out.artifacts[0].path
    tail = text[-2000:]
    tail = tail[tail.find("\n") + 1 :]  # starts after the first newline of the last 2000 characters
    assert out.model_content == (
        "<persisted-output>\n"
        f"Output too large (39.1KB). Full output saved to: {path}\n"
        "\n"
        "Preview (last 2.0KB):\n"
        "...\n"
        f"{tail}\n"
        "</persisted-output>"
    )
    assert out.model_content.endswith("ERROR: 3 tests failed\n</persisted-output>")


def test_a_preview_is_cut_at_a_newline_only_in_its_second_half():
    early = "a" * 500 + "\n" + "b" * 3000  # the only newline is in the first half: no cut
    assert preview_head(early) == (early[:2000], True)
    late = "a" * 1500 + "\n" + "b" * 3000
    assert preview_head(late) == ("a" * 1500, True)
    assert preview_tail("a" * 3000 + "\n" + "b" * 500) == ("a" * 1499 + "\n" + "b" * 500, True)
    assert preview_tail("a" * 3000 + "\n" + "b" * 1500) == ("b" * 1500, True)


async def test_the_truncation_line_word_for_word():
    env, _ = make_env(tool("Read", budgets.READ))
    text = "x" * 300_000
    out = await run(env, "Read", text)
    line = notice(300_000, 262_144)
    assert out.model_content == "x" * (262_144 - len(line) - 2) + "\n\n" + line


async def test_a_tail_truncation_keeps_the_end():
    spec = tool("Tail", ResultBudget(max_model_bytes=1000, max_inline_bytes=1000, preview_end="tail"))
    env, _ = make_env(spec)
    text = log_text(5000) + "the end"
    out = await run(env, "Tail", text)
    kept, _, line = out.model_content.rpartition("\n\n")
    assert text.endswith(kept) and kept.endswith("the end")
    assert line == notice(5007, 1000) and len(out.model_content.encode()) == 1000


async def test_the_budget_is_the_smaller_of_model_and_inline_bytes():
    spec = tool("Small", ResultBudget(max_model_bytes=100_000, max_inline_bytes=500))
    env, _ = make_env(spec)
    out = await run(env, "Small", "y" * 501)
    assert out.truncated and out.model_content.endswith(notice(501, 500))


@pytest.mark.parametrize("end", ["head", "tail"])
@pytest.mark.parametrize("char", ["é", "€", "😀"])
async def test_cuts_never_split_a_character(char, end):
    limit = 1001  # leaves a room that no multi-byte width divides
    spec = tool("Wide", ResultBudget(max_model_bytes=limit, max_inline_bytes=limit, preview_end=end))
    env, _ = make_env(spec)
    text = char * 2000
    out = await run(env, "Wide", text)
    data = out.model_content.encode("utf-8")  # would raise on a split surrogate
    kept = out.model_content.rpartition("\n\n")[0]
    assert set(kept) == {char} and "\ufffd" not in out.model_content
    width = len(char.encode())
    assert limit - width < len(data) <= limit  # as much as fits, never a byte more
    assert out.original_bytes == 2000 * width


async def test_a_persisted_preview_counts_characters_not_bytes(tmp_path):
    env, _ = env_with_store(tool("Grep", budgets.GREP), tmp_path)
    text = "😀" * 30_000  # no newline at all
    out = await run(env, "Grep", text)
    preview = out.model_content.split("Preview (first 2.0KB):\n", 1)[1].split("\n...\n")[0]
    assert preview == "😀" * 2000


@pytest.mark.parametrize("name", ["Read", "Bash", "mcp__docs__search"])
async def test_empty_output_says_so(name):
    env, _ = make_env(tool(name, budgets.BY_TOOL.get(name, budgets.MCP)))
    out = await run(env, name, "")
    assert out.model_content == f"({name} completed with no output)"


async def test_a_tools_own_persisted_format_is_used(tmp_path):
    def bash_like(raw, text, path):
        return f"Exit code 0\nOutput saved to {path}\n{text[-100:]}"

    env, _ = env_with_store(tool("Bash", budgets.BASH, format_persisted=bash_like), tmp_path)
    text = log_text(50_000)
    out = await run(env, "Bash", text)
    assert out.strategy == "artifact"
    assert out.model_content == f"Exit code 0\nOutput saved to {out.artifacts[0].path}\n{text[-100:]}"


async def test_a_large_failed_result_keeps_head_and_tail(tmp_path):
    spec = tool("Check", ResultBudget(max_model_bytes=5000, max_inline_bytes=5000))
    env, _ = make_env(spec)
    text = "starting checks\n" + log_text(50_000) + "FATAL: config missing"
    out = await run(env, "Check", text, error=True)
    assert isinstance(out, ToolCallError)
    assert out.model_content.startswith("starting checks\n")
    assert "FATAL: config missing\n\n[Tool output truncated by resultBudget" in out.model_content
    assert "bytes omitted ...]" in out.model_content
    assert len(out.model_content.encode()) <= 5000 and out.truncated
    assert out.message == "starting checks"


async def test_a_large_failed_result_persisted_shows_both_ends(tmp_path):
    env, _ = env_with_store(tool("Grep", budgets.GREP), tmp_path)
    text = log_text(30_000) + "grep: broken pipe"
    out = await run(env, "Grep", text, error=True)
    assert isinstance(out, ToolCallError) and out.strategy == "artifact"
    assert "Preview (first 2.0KB):\nline 0000000" in out.model_content
    assert "\n...\nPreview (last 2.0KB):\n" in out.model_content
    assert out.model_content.endswith("grep: broken pipe\n</persisted-output>")
    assert out.message == "line 0000000 of the output"  # the text's first line, never the envelope tag


async def test_a_huge_business_failure_message_obeys_the_budget():
    async def noisy(args, ctx):
        raise ToolFailure("first words " + "z" * 200_000 + " last words")

    spec = ToolSpec(name="Noisy", description="", handler=noisy, input_model=EmitInput, flags=SAFE,
                    budget=ResultBudget(max_model_bytes=4000, max_inline_bytes=4000))
    env, _ = make_env(spec)
    out = await run(env, "Noisy", "")
    assert isinstance(out, ToolCallError) and out.truncated
    assert out.model_content.startswith("<tool_use_error>first words")
    assert "last words</tool_use_error>" in out.model_content
    assert len(out.model_content.encode()) <= 4000
    assert len(out.message.encode()) <= 20_000 and len(out.display.message.encode()) <= 20_000


async def test_output_with_lone_surrogates_is_sent_with_replacement_characters():
    env, _ = make_env(tool("Read", budgets.READ))
    bad = b"caf\xe9 ok".decode("utf-8", "surrogateescape")
    out = await run(env, "Read", bad)
    assert out.model_content == "caf\ufffd ok"


async def test_a_broken_formatter_ends_the_call_as_an_output_error():
    def broken(raw):
        raise ValueError("formatter bug")

    env, rec = make_env(tool("Fmt", budgets.DEFAULT, format_model_content=broken))
    out = await run(env, "Fmt", "x")
    assert isinstance(out, ToolCallError)
    assert (out.phase, out.code, out.side_effects) == ("output", "output_invalid", "applied")
    assert "formatter bug" in out.model_content
    assert rec.types()[-1] == "ToolCallError"


async def test_the_result_carries_sizes_strategy_metrics_and_the_untrusted_mark(tmp_path):
    env, _ = env_with_store(tool("Glob", budgets.GLOB), tmp_path)
    out = await run(env, "Glob", log_text(150_000))
    assert out.untrusted is True
    assert (out.strategy, out.truncated, out.original_bytes) == ("artifact", True, 150_000)
    assert out.sent_bytes == len(out.model_content.encode()) < 3000
    assert out.metrics.bytes_out == out.sent_bytes
    assert out.metrics.total_ms >= out.metrics.exec_ms >= 0 and out.metrics.permission_wait_ms == 0


# ---- failure_text: the helper Bash uses for a failed command -----------------------------------------

BASH = budgets.BASH


def test_failure_text_keeps_a_short_output_whole():
    assert failure_text("Exit code 1", "boom\n", BASH) == "Exit code 1\nboom\n"
    assert failure_text("Exit code 1", "", BASH) == "Exit code 1"


def test_failure_text_keeps_the_exit_line_head_and_tail_within_the_budget():
    output = "collecting 1200 items\n" + log_text(500_000) + "E   AssertionError: 4 != 5\nFAILED test_x"
    text = failure_text("Exit code 1", output, BASH)
    assert len(text.encode()) <= BASH.limit_bytes
    assert text.startswith("Exit code 1\ncollecting 1200 items\n")
    assert "E   AssertionError: 4 != 5\nFAILED test_x\n\n[Tool output truncated by resultBudget: original" in text
    omitted = int(text.split("[... ", 1)[1].split(" bytes omitted", 1)[0])
    head, tail = text.split("\n\n[... ", 1)[0], text.split("omitted ...]\n\n", 1)[1].split("\n\n[Tool", 1)[0]
    assert omitted == len(output.encode()) - len(head.encode()) + len("Exit code 1\n") - len(tail.encode())


def test_failure_text_with_an_artifact_shows_both_ends_in_the_envelope():
    output = "header\n" + log_text(900_000) + "Traceback: the real error"
    text = failure_text("Exit code 2", output, BASH, "/a/b.txt")
    assert text.startswith("Exit code 2\n<persisted-output>\nOutput too large (878.9KB). Full output saved "
                           "to: /a/b.txt\n\nPreview (first 2.0KB):\nheader\n")
    assert "\n...\nPreview (last 2.0KB):\n" in text
    assert text.endswith("Traceback: the real error\n</persisted-output>")


def test_failure_text_of_a_stream_joined_from_its_two_ends_reports_the_whole_size():
    head, tail = log_text(40_000, "early"), log_text(40_000, "late") + "boom"
    text = failure_text("Exit code 3", head + tail, BASH, total_bytes=10_000_000)
    assert "original 10000000 bytes" in text and text.endswith("limit 30000 bytes]")
    assert "boom\n\n[Tool output" in text and text.startswith("Exit code 3\nearly 0000000")
    persisted = failure_text("Exit code 3", head + tail, BASH, "/x.txt", total_bytes=10_000_000)
    assert "Output too large (9.5MB)" in persisted


# ---- properties --------------------------------------------------------------------------------------

TEXTS = st.text(alphabet=st.sampled_from(["a", "\n", "é", "€", "😀", "中", " "]), max_size=3000)


@settings(max_examples=300, deadline=None)
@given(text=TEXTS, limit=st.integers(min_value=120, max_value=4000), end=st.sampled_from(["head", "tail"]))
def test_a_truncation_always_fits_and_is_a_real_slice(text, limit, end):
    budget = ResultBudget(max_model_bytes=limit, max_inline_bytes=limit, preview_end=end)
    out, sent = truncate_text(text, budget)
    assert sent == len(out.encode()) <= limit
    kept = out.rpartition("\n\n[Tool output truncated")[0]
    assert text.startswith(kept) if end == "head" else text.endswith(kept)


@settings(max_examples=300, deadline=None)
@given(text=TEXTS, limit=st.integers(min_value=200, max_value=4000))
def test_a_middle_cut_always_fits_and_keeps_both_ends(text, limit):
    out, sent = truncate_middle(text, limit)
    assert sent == len(out.encode()) <= limit
    head, rest = out.split("\n\n[... ", 1)
    omitted = int(rest.split(" bytes omitted", 1)[0])
    tail = rest.split(" bytes omitted ...]\n\n", 1)[1].rpartition("\n\n[Tool output truncated")[0]
    assert text.startswith(head) and text.endswith(tail)
    assert len(head.encode()) + omitted + len(tail.encode()) == len(text.encode())
