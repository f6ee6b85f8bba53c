"""Bash through the real pipeline with real processes: timeouts and interrupts leave nothing
behind, output of any size streams and is kept whole, exit codes mean what they should."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import time
from pathlib import Path

import pytest

from tests.fakes import make_env
from tests.procs import in_groups, kill_marked, marker, wait_for_marker, wait_gone, with_marker
from tests.waiting import HANG_S
from tui_app.runtime.display import OutputSegment
from tui_app.runtime.events import EVENT_ADAPTER
from tui_app.runtime.executor import TurnControl, run_batch
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.runtime.results.artifacts import ArtifactStore
from tui_app.tools.bash.tool import BASH
from tui_app.tools.grep.rg_backend import find_rg


@pytest.fixture
def bash_env(tmp_path):
    env, rec = make_env(BASH, policy=ModePolicy(allow={"Bash"}), cwd=str(tmp_path))
    env.services["artifacts"] = ArtifactStore("test", tmp_path / "artifacts")
    return env, rec


async def bash(env, command: str, call_id: str = "c1", **extra):
    return await run_call(ToolCall(call_id, "Bash", {"command": command, **extra}), env)


def progress_text(rec, stream: str | None = None) -> str:
    return "".join(e.text for e in rec.of("ToolCallProgress")
                   if e.kind == "output" and (stream is None or e.stream == stream))


# ---- no process outlives a call ---------------------------------------------------------------

async def test_a_timeout_kills_the_whole_group(bash_env):
    env, _ = bash_env
    mark = marker()
    command = f"sh -c 'sleep {mark}1 & sleep {mark}2; wait'"
    try:
        task = asyncio.ensure_future(bash(env, command, timeout=1000))
        running = await wait_for_marker(mark, count=2)
        groups = set(running.values())
        began = time.monotonic()
        outcome = await task
        assert outcome.type == "ToolCallError"
        assert (outcome.phase, outcome.code) == ("timeout", "timeout")
        assert outcome.model_content == "Tool execution timed out after 1000ms"
        assert outcome.display.kind == "bash_output" and outcome.display.timed_out
        assert time.monotonic() - began < HANG_S  # not the sleep's 50 minutes
        # every process of the group is gone by the time the result exists, not "eventually"
        assert with_marker(mark) == {}
        assert in_groups(groups) == []
    finally:
        kill_marked(mark)


async def test_a_timeout_keeps_the_partial_output_on_screen_and_in_the_artifact(bash_env):
    env, _ = bash_env
    mark = marker()
    try:
        outcome = await bash(env, f"echo start; seq 1 100000; sleep 0.2; echo late >&2; sleep {mark}", timeout=1500)
        assert outcome.code == "timeout"
        display = outcome.display
        assert display.timed_out and display.exit_code is None and display.total_bytes == 588_906
        assert display.segments[-1] == OutputSegment(stream="stderr", text="late\n")
        artifact = Path(env.services["artifacts"].resolve(display.artifact_uri))
        assert artifact.read_text().startswith("start\n1\n2\n") and artifact.stat().st_size == 588_906
        assert with_marker(mark) == {}
    finally:
        kill_marked(mark)


async def test_a_turn_abort_kills_the_whole_group(bash_env):
    env, _ = bash_env
    mark = marker()
    control = TurnControl()
    try:
        batch = asyncio.ensure_future(run_batch(
            [ToolCall("c1", "Bash", {"command": f"sh -c 'sleep {mark}1 & sleep {mark}2; wait'"}),
             ToolCall("c2", "Bash", {"command": "echo never"})], env, control))
        running = await wait_for_marker(mark, count=2)
        control.abort("user pressed Esc")
        outcomes = await batch
        assert [(o.call_id, o.code) for o in outcomes] == [("c1", "cancelled"), ("c2", "aborted_before_dispatch")]
        assert "every process it started were stopped" in outcomes[0].model_content
        assert with_marker(mark) == {}
        assert in_groups(set(running.values())) == []
    finally:
        kill_marked(mark)


async def test_a_timeout_also_kills_what_left_the_group_with_setsid(bash_env):
    env, _ = bash_env
    mark = marker()
    try:
        task = asyncio.ensure_future(bash(env, f"setsid sleep {mark}1 & sleep {mark}2; wait", timeout=800))
        running = await wait_for_marker(mark, count=2)
        assert len(set(running.values())) == 2  # really in two groups
        outcome = await task
        assert outcome.code == "timeout"
        assert with_marker(mark) == {}
    finally:
        kill_marked(mark)


async def test_background_jobs_still_holding_the_output_are_stopped_when_the_command_ends(bash_env):
    env, _ = bash_env
    mark = marker()
    try:
        began = time.monotonic()
        outcome = await bash(env, f"sleep {mark} & echo started")
        assert time.monotonic() - began < HANG_S  # the call does not hang on the job's open output
        assert outcome.type == "ToolCallResult"
        assert outcome.model_content.startswith("started\n")
        assert "stopped 1 background process" in outcome.model_content
        assert "run_in_background" in outcome.model_content
        assert with_marker(mark) == {}
    finally:
        kill_marked(mark)


async def test_a_job_detached_from_the_output_is_left_running(bash_env):
    # `nohup … >file 2>&1 &` is how a user says "keep this running": it is not the call's output
    env, _ = bash_env
    mark = marker()
    try:
        outcome = await bash(env, f"nohup sleep {mark} >/dev/null 2>&1 & echo ok")
        assert outcome.type == "ToolCallResult" and outcome.model_content == "ok\n"
        # the call may return before nohup has exec'd sleep: wait for the process itself
        assert len(await wait_for_marker(mark)) == 1
    finally:
        kill_marked(mark)


# ---- output -----------------------------------------------------------------------------------

def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


async def test_200_mb_of_binary_output_streams_with_flat_memory_into_a_byte_identical_artifact(bash_env, tmp_path):
    env, rec = bash_env
    source = tmp_path / "random.bin"
    with open(source, "wb") as handle:  # random bytes: invalid UTF-8 and NULs all the way through
        for _ in range(200):
            handle.write(os.urandom(1 << 20))
    baseline = _rss_kb()
    peak = baseline
    done = False

    async def sample():
        nonlocal peak
        while not done:
            peak = max(peak, _rss_kb())
            await asyncio.sleep(0.02)

    sampler = asyncio.ensure_future(sample())
    # (two pipes keep the order of writes that are apart in time; a stream that was still buffered
    # when the other was written may be read after it, so the stderr line comes a moment later)
    outcome = await bash(env, f"cat {source}; sleep 0.2; echo THE-END >&2")
    done = True
    await sampler
    assert outcome.type == "ToolCallResult", outcome.model_content
    assert outcome.strategy == "artifact" and len(outcome.artifacts) == 1
    artifact = Path(outcome.artifacts[0].path)
    assert artifact.stat().st_size == 200 * (1 << 20) + len("THE-END\n")
    with open(artifact, "rb") as got, open(source, "rb") as want:
        while block := want.read(1 << 20):
            assert got.read(len(block)) == block
        assert got.read() == b"THE-END\n"
    assert (peak - baseline) / 1024 < 100, f"RSS grew {(peak - baseline) / 1024:.0f} MB"
    # the model gets the envelope with the *end* of the output, and a bounded amount of it
    assert outcome.model_content.startswith("<persisted-output>\nOutput too large (200.0MB)")
    assert "THE-END" in outcome.model_content and outcome.sent_bytes < 30_000
    # the session log would get at most ~150 KB of it through progress events, then one note
    progress = rec.of("ToolCallProgress")
    assert sum(len(e.text.encode()) for e in progress if e.kind == "output") <= 150_000
    assert [e.kind for e in progress].count("message") == 1
    display = outcome.display
    assert display.total_bytes == artifact.stat().st_size and display.truncated
    assert sum(len(s.text.encode()) for s in display.segments) <= 150_000
    assert display.segments[-1].stream == "stderr" and display.segments[-1].text == "THE-END\n"
    for event in rec.events:  # every event survives the log's JSON round trip
        EVENT_ADAPTER.validate_json(event.model_dump_json())


async def test_stdout_and_stderr_keep_their_interleaving(bash_env):
    env, rec = bash_env
    script = "for i in 1 2 3; do echo out$i; sleep 0.1; echo err$i >&2; sleep 0.1; done"
    outcome = await bash(env, script)
    assert [(s.stream, s.text) for s in outcome.display.segments] == [
        ("stdout", "out1\n"), ("stderr", "err1\n"), ("stdout", "out2\n"),
        ("stderr", "err2\n"), ("stdout", "out3\n"), ("stderr", "err3\n")]
    assert outcome.model_content == "out1\nerr1\nout2\nerr2\nout3\nerr3\n"
    live = [(e.stream, e.text) for e in rec.of("ToolCallProgress") if e.kind == "output"]
    assert live == [(s.stream, s.text) for s in outcome.display.segments]
    assert outcome.display.exit_code == 0 and not outcome.display.truncated


async def test_progress_events_are_coalesced_to_about_30_a_second(bash_env):
    env, rec = bash_env
    began = time.monotonic()
    outcome = await bash(env, "for i in $(seq 1 300); do echo o$i; echo e$i >&2; sleep 0.003; done")
    elapsed = time.monotonic() - began
    assert outcome.type == "ToolCallResult"
    events = rec.of("ToolCallProgress")
    assert len(events) <= 30 * elapsed + 6, (len(events), elapsed)  # first and final flushes may add 2 each
    # nothing was lost or reordered on the way: per stream, the live text is the whole output
    assert progress_text(rec, "stdout") == "".join(f"o{i}\n" for i in range(1, 301))
    assert progress_text(rec, "stderr") == "".join(f"e{i}\n" for i in range(1, 301))


async def test_invalid_utf8_nul_bytes_and_split_characters_do_not_break_anything(bash_env):
    env, rec = bash_env
    # a euro sign written in two halves, 0.2 s apart; then NUL, an invalid byte and an escape
    command = r"printf '\xe2\x82'; sleep 0.2; printf '\xac\n'; printf 'a\0b\xffc\033]0;title\007d\033[31mred\033[0m\n'"
    outcome = await bash(env, command)
    assert outcome.type == "ToolCallResult"
    shown = "".join(s.text for s in outcome.display.segments)
    assert shown == "€\nab\ufffdcd\x1b[31mred\x1b[0m\n"  # NUL and the title sequence neutralised, colour kept
    assert progress_text(rec) == shown
    assert outcome.model_content.startswith("€\na\x00b\ufffdc")
    for event in rec.events:
        EVENT_ADAPTER.validate_json(event.model_dump_json())


async def test_a_long_failing_log_keeps_exit_code_head_and_tail(bash_env):
    env, _ = bash_env
    outcome = await bash(env, "echo BUILD-START; seq 1 100000; sleep 0.2; echo 'FATAL: it broke' >&2; exit 2")
    assert outcome.type == "ToolCallError" and outcome.code == "execution_failed"
    text = outcome.model_content
    assert text.startswith("Exit code 2\nOutput began with:\nBUILD-START\n1\n2\n")
    assert "<persisted-output>" in text and "Preview (last 2.0KB):" in text
    assert text.rstrip().endswith("FATAL: it broke\n</persisted-output>")
    assert outcome.message == "Exit code 2"
    artifact = Path(outcome.artifacts[0].path).read_text()
    assert artifact.startswith("BUILD-START\n1\n") and artifact.endswith("100000\nFATAL: it broke\n")


async def test_output_between_the_model_budget_and_the_display_window(bash_env):
    env, _ = bash_env
    outcome = await bash(env, "seq 1 10000")  # 48894 bytes: all in memory, too much for the model
    assert outcome.strategy == "artifact"
    assert Path(outcome.artifacts[0].path).read_text() == "".join(f"{i}\n" for i in range(1, 10001))
    assert outcome.model_content.endswith("9999\n10000\n</persisted-output>")
    # under the display's own bound: the screen has every byte, though the model saw a preview
    display = outcome.display
    assert display.total_bytes == 48894 and display.omitted_bytes == 0
    assert "".join(s.text for s in display.segments) == "".join(f"{i}\n" for i in range(1, 10001))


async def test_small_output_is_inline_and_makes_no_artifact(bash_env, tmp_path):
    env, _ = bash_env
    outcome = await bash(env, "echo hello")
    assert (outcome.model_content, outcome.strategy, outcome.artifacts) == ("hello\n", "inline", [])
    assert not (tmp_path / "artifacts").exists()


async def test_when_the_artifact_cannot_be_written_the_call_still_succeeds_with_the_tail(bash_env):
    env, _ = bash_env

    class FullDisk:
        def open_writer(self, *args, **kwargs):
            raise OSError(28, "No space left on device")

        def persist_text(self, *args):
            raise OSError(28, "No space left on device")

    env.services["artifacts"] = FullDisk()
    outcome = await bash(env, "seq 1 200000; exit 3")
    assert outcome.type == "ToolCallError" and outcome.code == "execution_failed"
    text = outcome.model_content
    assert text.startswith("Exit code 3\n1\n2\n")
    assert "could not be saved: No space left on device" in text
    assert text.endswith("199999\n200000")
    assert len(text.encode()) <= 30_000


# ---- exit codes -------------------------------------------------------------------------------

@pytest.mark.parametrize(("command", "failed", "code"), [
    ("exit 3", True, 3),
    ("false", True, 1),
    ("grep -q nothing-here /dev/null", False, 1),
    ("ls / | grep -q nothing-here", False, 1),
    ("grep -q x /no/such/file", True, 2),
    (f"{find_rg()} -q nothing-here /dev/null", False, 1),  # the rg installed with Vigil
    ("find /no/such/dir -name x 2>/dev/null", False, 1),
    ("diff <(echo a) <(echo b) >/dev/null", False, 1),
    ("test -f /no/such/file", False, 1),
    ("[ -d /no/such/dir ]", False, 1),
    ("git diff --no-index --quiet /dev/null /etc/hostname", False, 1),
    ("kill -9 $$", True, 137),
])
async def test_exit_code_semantics(bash_env, command, failed, code):
    env, _ = bash_env
    outcome = await bash(env, command)
    assert outcome.display.exit_code == code
    if failed:
        assert outcome.type == "ToolCallError" and outcome.code == "execution_failed"
        assert outcome.model_content.splitlines()[0] == f"Exit code {code}"
    else:
        assert outcome.type == "ToolCallResult"


async def test_every_call_starts_in_the_workspace_root(bash_env, tmp_path):
    env, _ = bash_env
    first = await bash(env, "cd / && pwd")
    second = await bash(env, "pwd", call_id="c2")
    assert first.model_content == "/\n"
    assert second.model_content == f"{tmp_path}\n"


async def test_stdin_is_closed(bash_env):
    env, _ = bash_env
    began = time.monotonic()
    outcome = await bash(env, "cat; echo after-cat")
    assert outcome.model_content == "after-cat\n" and time.monotonic() - began < HANG_S


@pytest.mark.parametrize("command", ["", "   ", "echo a\x00b"])
async def test_a_command_that_cannot_run_is_refused_before_anything_starts(bash_env, command):
    env, rec = bash_env
    outcome = await bash(env, command)
    assert outcome.type == "ToolCallError" and outcome.phase in ("precondition", "validate")
    assert rec.of("ToolCallStarted") == []


async def test_a_missing_workspace_is_a_clear_error(tmp_path):
    env, _ = make_env(BASH, policy=ModePolicy(allow={"Bash"}), cwd=str(tmp_path / "gone"))
    outcome = await bash(env, "echo hi")
    assert outcome.type == "ToolCallError" and outcome.code == "execution_failed"
    assert re.search(r"Could not start bash in .*gone: No such file", outcome.model_content)


async def test_ansi_and_markup_in_output_reach_the_display_inert(bash_env):
    env, _ = bash_env
    outcome = await bash(env, r"printf '[bold]x[/] \033[2J\033[Hcleared\r\n'")
    shown = "".join(s.text for s in outcome.display.segments)
    assert shown == "[bold]x[/] cleared\n"  # markup is text; the screen clear is gone
    assert wait_gone("never-started") == {}
