"""Tool output is untrusted: every screen projection comes out inert, the model's text stays exact.

The corpus holds what a hostile or merely noisy command can print: a clipboard write (OSC 52), a
window title (OSC 0), hyperlinks (OSC 8), device control strings, cursor movement and screen
clearing, bare escapes, and the 8-bit C1 forms of the same."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes import SAFE, make_env
from tui_app.runtime.contract import ApprovalPreview, RawResult, StrictInput, ToolFailure, ToolFlags, ToolSpec
from tui_app.runtime.display import (
    BashOutputDisplay,
    DiffHunk,
    ErrorDisplay,
    FileDiffDisplay,
    McpDisplay,
    OutputSegment,
    TextDisplay,
    TodoItem,
    TodoListDisplay,
)
from tui_app.runtime.events import ToolCallError, ToolCallResult
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.runtime.results.sanitize import StreamNeutralizer, neutralize, neutralize_display, reveal_controls

CORPUS = {
    "osc52_clipboard": "\x1b]52;c;cm0gLXJmIH4K\x07",
    "osc52_st": "\x1b]52;p;ZXZpbA==\x1b\\",
    "osc0_title": "\x1b]0;PWNED TITLE\x07",
    "osc2_title_unterminated": "\x1b]2;half title",
    "osc8_link": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "dcs": "\x1bP1$tDCSDATA\x1b\\",
    "apc": "\x1b_APCDATA\x1b\\",
    "csi_clear": "\x1b[2J\x1b[3J",
    "csi_cursor": "\x1b[H\x1b[10;20H\x1b[5A\x1b[K\x1b[?25l\x1b[?1049h",
    "csi_scroll_region": "\x1b[1;5r",
    "esc_reset": "\x1bc",
    "esc_save_cursor": "\x1b7\x1b8",
    "esc_charset": "\x1b(0",
    "bare_esc": "lonely\x1b",
    "c1_csi": "\x9b2J\x9b1;1H",
    "c1_osc": "\x9d0;C1 TITLE\x07",
    "c1_dcs": "\x90C1DCS\x9c",
    "c1_single": "\x84\x85\x8d\x8e\x8f",
    "c0": "bell\x07 back\x08 del\x7f nul\x00 vt\x0b ff\x0c",
    "carriage_return": "progress 10%\rprogress 100%\r\n",
}
PAYLOADS = ["cm0gLXJmIH4K", "ZXZpbA==", "PWNED TITLE", "half title", "evil.example", "DCSDATA", "APCDATA",
            "C1 TITLE", "C1DCS"]
SGR = "\x1b[1;31mred bold\x1b[0m \x1b[38;2;10;20;30mtrue colour\x1b[m"
HOSTILE = "start " + "".join(CORPUS.values()) + " " + SGR + " end"

ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def inert(text: str, keep_sgr: bool = False) -> bool:
    if keep_sgr:
        text = re.sub(r"\x1b\[[0-9;:]*m", "", text)
    return ANY_CONTROL.search(text) is None


@pytest.mark.parametrize("name", list(CORPUS))
def test_each_sequence_is_removed_without_its_payload(name):
    # an unterminated string or a bare escape may take what follows on its line, never the next line
    out = neutralize(f"before {CORPUS[name]}\nafter")
    assert inert(out), repr(out)
    assert out.startswith("before ") and out.endswith("\nafter")
    assert not any(p in out for p in PAYLOADS)


def test_plain_text_and_what_surrounds_the_sequences_survive():
    out = neutralize(HOSTILE)
    assert out.startswith("start ") and out.endswith(" end")
    for visible in ("lonely", "click", "bell back del nul vt ff", "red bold", "true colour"):
        assert visible in out
    assert "progress 10%progress 100%\n" in out  # a redraw becomes one line, CRLF a newline
    assert neutralize("tab\tand\nnewline, ünïcødé, 中文, 😀") == "tab\tand\nnewline, ünïcødé, 中文, 😀"


def test_sgr_can_be_kept_and_nothing_else():
    out = neutralize(HOSTILE, keep_sgr=True)
    assert inert(out, keep_sgr=True) and not inert(out)
    assert "\x1b[1;31mred bold\x1b[0m" in out and "\x1b[38;2;10;20;30mtrue colour\x1b[m" in out
    assert not any(p in out for p in PAYLOADS)
    # a forged placeholder cannot smuggle anything back
    assert neutralize("\x000\x00\x1b]0;x\x07", keep_sgr=True) == "0"


def test_a_stray_introducer_does_not_swallow_the_rest_of_a_log():
    out = neutralize("line one \x9d oops\nline two\nline three")
    assert out == "line one \nline two\nline three"


def test_reveal_shows_every_control_as_a_symbol():
    out = reveal_controls("rm -rf ~\x1b[2K\rls\x00\x7f\x9b\r\n")
    assert out == "rm -rf ~␛[2K␍ls␀␡<U+009B>\n"
    assert inert(out)


def test_a_sequence_split_between_chunks_is_held_until_whole():
    stream = StreamNeutralizer(keep_sgr=True)
    chunks = ["ok \x1b[3", "1mred\x1b", "[0m \x1b]52;c;", "ZXZpbA==\x07 done\r", "\nnext"]
    out = "".join(stream.feed(c) for c in chunks) + stream.finish()
    assert out == "ok \x1b[31mred\x1b[0m  done\nnext"


# ---- every display kind -----------------------------------------------------------------------------

def every_kind(text: str) -> list:
    return [
        FileDiffDisplay(path=f"src/{text}.py", hunks=[DiffHunk(old_start=1, old_lines=1, new_start=1, new_lines=1,
                                                               lines=[f"-{text}", f"+{text}"])],
                        old_text=text, new_text=text + "!"),
        BashOutputDisplay(command=f"echo {text}", segments=[OutputSegment(stream="stdout", text=text),
                                                            OutputSegment(stream="stderr", text=text)]),
        TextDisplay(text=text, title=text),
        TodoListDisplay(todos=[TodoItem(content=text, status="pending", active_form=text)]),
        McpDisplay(server=text, tool=text, blocks=[{"type": "text", "text": text}, {text: [text, {"k": text}]}],
                   structured_content={"nested": [text]}),
        ErrorDisplay(phase="execute", code="execution_failed", message=text),
    ]


def strings_in(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if hasattr(type(value), "model_fields"):
        return [s for name in type(value).model_fields for s in strings_in(getattr(value, name))]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in strings_in(k) + strings_in(v)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in strings_in(item)]
    return []


@pytest.mark.parametrize("display", every_kind(HOSTILE), ids=lambda d: d.kind)
def test_every_display_kind_comes_out_inert(display):
    clean = neutralize_display(display)
    assert type(clean) is type(display)
    strings = strings_in(clean)
    assert strings and all(inert(s, keep_sgr=display.kind == "bash_output") for s in strings)
    assert not any(p in s for s in strings for p in PAYLOADS)
    sgr_kept = any("\x1b[1;31m" in s for s in strings)
    assert sgr_kept == (display.kind == "bash_output")  # colours only where a viewer styles them
    assert any(s.startswith("start ") and s.endswith(" end") for s in strings)


@pytest.mark.parametrize("display", every_kind("plain text"), ids=lambda d: d.kind)
def test_a_clean_display_is_returned_untouched(display):
    assert neutralize_display(display) is display


# ---- through the pipeline ------------------------------------------------------------------------------

class KindInput(StrictInput):
    kind: str


async def show(args: KindInput, ctx) -> RawResult:
    (display,) = [d for d in every_kind(HOSTILE) if d.kind == args.kind]
    if args.kind == "error":
        raise ToolFailure(f"failed: {HOSTILE}", display=display)
    return RawResult(text=HOSTILE, display=display)


SHOW = ToolSpec(name="Show", description="", handler=show, input_model=KindInput, flags=SAFE)


@pytest.mark.parametrize("kind", [d.kind for d in every_kind("x")])
async def test_the_pipeline_emits_inert_displays_and_exact_model_text(kind):
    env, _ = make_env(SHOW)
    out = await run_call(ToolCall("toolu_1", "Show", {"kind": kind}), env)
    assert isinstance(out, ToolCallError if kind == "error" else ToolCallResult)
    assert all(inert(s, keep_sgr=kind == "bash_output") for s in strings_in(out.display))
    assert not any(p in s for s in strings_in(out.display) for p in PAYLOADS)
    # the model gets the bytes the tool produced: it is data, marked untrusted, never rewritten
    expected = f"<tool_use_error>failed: {HOSTILE}</tool_use_error>" if kind == "error" else HOSTILE
    assert out.model_content == expected and out.untrusted


async def test_a_pipeline_made_error_card_is_inert_too():
    async def crash(args, ctx):
        raise RuntimeError(f"exploded: {HOSTILE}")

    env, _ = make_env(ToolSpec(name="Crash", description="", handler=crash, input_model=KindInput, flags=SAFE))
    out = await run_call(ToolCall("toolu_1", "Crash", {"kind": "x"}), env)
    assert out.display.kind == "error" and inert(out.display.message)


async def test_progress_output_is_neutralised_on_its_way_to_the_screen():
    async def stream(args, ctx):
        for chunk in ["compiling \x1b[3", "2mok\x1b[0m\n\x1b]0;", "TITLE\x07\x1b[2Jdone\n"]:
            ctx.progress.output(chunk)
        ctx.progress.message("phase \x1b]52;c;ZXZpbA==\x07two")
        return RawResult(text="done")

    env, rec = make_env(ToolSpec(name="Stream", description="", handler=stream, input_model=KindInput, flags=SAFE))
    await run_call(ToolCall("toolu_1", "Stream", {"kind": "x"}), env)
    progress = rec.of("ToolCallProgress")
    output = "".join(p.text for p in progress if p.kind == "output")
    assert output == "compiling \x1b[32mok\x1b[0m\ndone\n"
    assert [p.text for p in progress if p.kind == "message"] == ["phase two"]


async def test_an_approval_preview_shows_hidden_controls_instead_of_hiding_them():
    async def preview(data, ctx):
        diff = FileDiffDisplay(path="a.sh", hunks=[DiffHunk(old_start=1, old_lines=0, new_start=1, new_lines=1,
                                                            lines=["+echo hi\x1b[2K\rrm -rf ~"])])
        return ApprovalPreview(summary="Run echo hi\x1b[2K", kind="command", body="echo hi\x1b[2K\rrm -rf ~",
                               display=diff)

    asking = ToolFlags(read_only=False, side_effect_scope="workspace", needs_approval=True)
    spec = ToolSpec(name="Run", description="", handler=show, input_model=KindInput, flags=asking,
                    prepare_approval=preview)
    env, rec = make_env(spec)
    await run_call(ToolCall("toolu_1", "Run", {"kind": "text"}), env)
    (request,) = rec.of("PermissionRequested")
    assert request.preview == "echo hi␛[2K␍rm -rf ~"
    assert request.summary == "Run echo hi␛[2K"
    assert request.preview_display.hunks[0].lines == ["+echo hi␛[2K␍rm -rf ~"]


# ---- properties --------------------------------------------------------------------------------------

PIECES = st.sampled_from(["a", " ", "\n", "\t", "\r", "é", "[", "]", ";", "0", "1", "m", "H", "\\", "\x07",
                          "\x1b", "\x9b", "\x9d", "\x90", "\x9c", "\x00", "\x7f", "\x85", "P", "_"])


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(PIECES, max_size=60), keep_sgr=st.booleans())
def test_any_mix_of_controls_comes_out_inert(pieces, keep_sgr):
    out = neutralize("".join(pieces), keep_sgr=keep_sgr)
    assert inert(out, keep_sgr=keep_sgr)
    assert neutralize(out, keep_sgr=keep_sgr) == out  # a second pass finds nothing left to do


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(PIECES, max_size=60), cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=6))
def test_chunked_output_comes_out_inert_wherever_it_is_cut(pieces, cuts):
    text = "".join(pieces)
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    stream = StreamNeutralizer(keep_sgr=True)
    out = "".join(stream.feed(text[a:b]) for a, b in itertools.pairwise(bounds)) + stream.finish()
    assert inert(out, keep_sgr=True)


async def test_undecodable_bytes_in_displays_and_errors_never_break_the_log():
    escaped = b"caf\xe9 \xff".decode("utf-8", "surrogateescape")

    async def odd(args, ctx):
        if args.kind == "fail":
            raise ToolFailure(f"bad name {escaped}")
        ctx.progress.output(escaped)
        return RawResult(text=escaped, display=BashOutputDisplay(
            command="ls", segments=[OutputSegment(stream="stdout", text=escaped)]))

    env, rec = make_env(ToolSpec(name="Odd", description="", handler=odd, input_model=KindInput, flags=SAFE))
    ok = await run_call(ToolCall("toolu_1", "Odd", {"kind": "ok"}), env)
    failed = await run_call(ToolCall("toolu_2", "Odd", {"kind": "fail"}), env)
    assert ok.display.segments[0].text == "caf\ufffd \ufffd" and ok.model_content == "caf\ufffd \ufffd"
    assert failed.message == "bad name caf\ufffd \ufffd"
    for event in rec.events:
        event.model_dump_json()  # the session log writes every one of them
