"""The pieces under Bash: ending process groups, flags per command, the approval preview, which
command's exit status counts, and the live stream's edges."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time
import types

import pytest

from tests.fakes import make_env
from tests.procs import kill_marked, marker, wait_for_marker, with_marker
from tests.waiting import HANG_S
from tui_app.runtime.contract import ProgressSink, ToolFlags
from tui_app.runtime.permissions.broker import ApprovalAnswer, ApprovalBroker
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.runtime.processes import groups as proc_table
from tui_app.tools.bash import tool as bash_module
from tui_app.tools.bash.exit_codes import is_failure, last_command
from tui_app.tools.bash.live_output import LiveOutput
from tui_app.tools.bash.output import decode_chunks
from tui_app.tools.bash.shell_run import ShellRun
from tui_app.tools.bash.tool import BASE_FLAGS, BASH, bash_flags_for

# ---- ending groups ------------------------------------------------------------------------------


async def test_a_group_that_ignores_term_is_killed_after_the_grace():
    mark = marker()
    run = await ShellRun.start(f"trap '' TERM; sleep {mark} & sleep {mark}; wait", "/tmp", {}, lambda s, d: None)
    try:
        await wait_for_marker(mark, count=2)
        began = time.monotonic()
        await run.stop(grace_s=0.5)
        elapsed = time.monotonic() - began
        assert 0.5 <= elapsed < HANG_S  # TERM did nothing; KILL came after the grace
        assert with_marker(mark) == {}
        assert proc_table.group_members(run.pgid) == set()
    finally:
        run.release()
        kill_marked(mark)
    assert run.pgid not in proc_table.tracked()


async def test_a_zombie_left_in_the_group_does_not_hold_up_the_stop():
    # `(sleep 0.05 &)` orphans a child that exits; an init that never reaps leaves it a zombie
    mark = marker()
    run = await ShellRun.start(f"(sleep 0.05 &); sleep {mark}", "/tmp", {}, lambda s, d: None)
    try:
        await wait_for_marker(mark)
        await asyncio.sleep(0.2)
        began = time.monotonic()
        await run.stop(grace_s=10 * HANG_S)  # were the zombie waited for, the stop would take the grace
        assert time.monotonic() - began < HANG_S
        assert with_marker(mark) == {}
    finally:
        run.release()
        kill_marked(mark)


def test_stat_parsing_survives_a_process_name_with_parentheses_and_spaces(tmp_path):
    odd = tmp_path / "a) b (c"
    shutil.copy("/bin/sleep", odd)
    proc = subprocess.Popen([str(odd), "5"], start_new_session=True)
    try:
        info = proc_table.read_stat(proc.pid)
        assert info is not None and info.pgrp == proc.pid and info.state in "RSD"
    finally:
        proc.kill()
        proc.wait()


# ---- flags and approval -------------------------------------------------------------------------

@pytest.fixture
def classifier(monkeypatch):
    bash_module._classifier.cache_clear()

    def install(fn):
        module = types.ModuleType("tui_app.runtime.permissions.bash.readonly")
        module.bash_flags = fn
        monkeypatch.setitem(sys.modules, "tui_app.runtime.permissions.bash.readonly", module)
        bash_module._classifier.cache_clear()

    yield install
    bash_module._classifier.cache_clear()


READ_ONLY = ToolFlags(read_only=True, concurrency_safe=True, side_effect_scope="none", needs_approval=False,
                      risk="low")


def test_without_the_classifier_every_command_is_a_high_risk_writer(classifier):
    classifier(None)
    assert bash_flags_for({"command": "git status"}) == BASE_FLAGS
    assert (BASE_FLAGS.read_only, BASE_FLAGS.concurrency_safe, BASE_FLAGS.side_effect_scope,
            BASE_FLAGS.needs_approval, BASE_FLAGS.risk) == (False, False, "system", True, "high")


def test_the_classifier_decides_per_command_and_its_failures_fall_to_the_safe_side(classifier):
    classifier(lambda command: READ_ONLY if command == "git status" else BASE_FLAGS)
    assert bash_flags_for({"command": "git status"}) == READ_ONLY
    assert bash_flags_for({"command": "rm -rf build"}) == BASE_FLAGS

    def broken(command):
        raise RuntimeError("parser crashed")

    classifier(broken)
    assert bash_flags_for({"command": "git status"}) == BASE_FLAGS


async def test_the_approval_shows_the_exact_full_command_and_denial_runs_nothing(tmp_path):
    mark = marker()
    command = f"echo one && \\\n  sleep {mark} # {'x' * 300}"
    broker = ApprovalBroker(interactive=True)
    env, rec = make_env(BASH, broker=broker, cwd=str(tmp_path))
    task = asyncio.ensure_future(run_call(ToolCall("c1", "Bash", {"command": command}), env))
    while not broker.pending():
        await asyncio.sleep(0.01)
    asked = rec.of("PermissionRequested")[0]
    assert asked.preview_kind == "command" and asked.preview == command
    assert asked.summary == f"Run `echo one && \\ …` in {tmp_path}"
    assert asked.risk == "medium"  # runs something, destroys nothing (rm -rf would be "high")
    request = broker.pending()[0]
    broker.answer(request.request_id, ApprovalAnswer("deny", input_sha256=request.input_sha256))
    outcome = await task
    assert outcome.code == "user_denied" and with_marker(mark) == {}


# ---- which exit status counts -------------------------------------------------------------------

@pytest.mark.parametrize(("command", "words"), [
    ("grep x f", ["grep", "x", "f"]),
    ("ls | grep x", ["grep", "x"]),
    ("grep x f && echo found", ["echo", "found"]),
    ("LC_ALL=C /usr/bin/grep -r x .", ["/usr/bin/grep", "-r", "x", "."]),
    ("echo 'a | grep'", ["echo", "a | grep"]),
    ("diff <(sort a) <(sort b)", ["diff"]),
    ("grep $(echo $(cat y)) f", ["grep", "f"]),
    ("(cd sub && rg foo)", ["rg", "foo"]),
    ("find . -name x &", ["find", ".", "-name", "x"]),
    ("echo one\ngrep two f", ["grep", "two", "f"]),
    ("grep 'unbalanced", []),
])
def test_the_last_command_of_a_line(command, words):
    assert last_command(command) == words


@pytest.mark.parametrize(("command", "code", "failed"), [
    ("git -C repo diff --stat", 1, False),
    ("git --no-pager grep foo", 1, False),
    ("git status", 1, True),
    ("grep x f", 2, True),
    ("npm test", 1, True),
    ("anything", 0, False),
])
def test_exit_one_is_an_answer_only_for_some_commands(command, code, failed):
    assert is_failure(command, code) is failed


# ---- the live stream ----------------------------------------------------------------------------

class Sink:
    def __init__(self):
        self.events = []

    def __call__(self, **fields):
        self.events.append(fields)


async def test_an_escape_sequence_split_between_reads_is_held_back_whole():
    sink = Sink()
    live = LiveOutput(ProgressSink(sink))
    live.feed("stdout", b"plain \x1b[3")
    live.flush()
    live.feed("stdout", b"1mred\x1b[0m")
    live.close()
    assert "".join(e["text"] for e in sink.events) == "plain \x1b[31mred\x1b[0m"


async def test_the_live_stream_stops_at_its_budget_with_one_note():
    sink = Sink()
    live = LiveOutput(ProgressSink(sink), budget=1000)
    for _ in range(50):
        live.feed("stdout", b"x" * 100)
    live.close()
    texts = [e["text"] for e in sink.events if e["kind"] == "output"]
    assert len("".join(texts)) == 1000
    assert [e["kind"] for e in sink.events].count("message") == 1


def test_an_unfinished_character_at_the_end_of_one_stream_stays_with_that_stream():
    pieces = decode_chunks([("stdout", b"ab\xe2\x82"), ("stderr", b"late\n")])
    assert pieces == [("stdout", "ab\ufffd"), ("stderr", "late\n")]
    # … and one finished by a later read of its own stream is whole
    pieces = decode_chunks([("stdout", b"\xe2\x82"), ("stderr", b"x"), ("stdout", b"\xac")])
    assert "".join(t for s, t in pieces if s == "stdout") == "€"


def test_timeouts_follow_the_environment():
    import os
    import subprocess
    from pathlib import Path

    code = "from tui_app.tools.bash.tool import BASH; print(BASH.timeout.default_ms, BASH.timeout.max_ms)"
    env = {**os.environ, "BASH_DEFAULT_TIMEOUT_MS": "5000", "BASH_MAX_TIMEOUT_MS": "9000",
           "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["5000", "9000"]
