"""Background tasks: start, read incrementally, stop; none outlives its session or Vigil itself."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.fakes import make_env
from tests.procs import kill_marked, marker, wait_for_marker, wait_gone, with_marker
from tests.waiting import DEADLINE_S, HANG_S
from tui_app.agents.builtin_agent import BuiltinAgent
from tui_app.providers.scripted import ScriptedModel, load_script
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.results.artifacts import ArtifactStore
from tui_app.runtime.session import Session
from tui_app.tools.bash.task_output import TASK_OUTPUT
from tui_app.tools.bash.task_stop import TASK_STOP
from tui_app.tools.bash.tasks import BackgroundTasks
from tui_app.tools.bash.tool import BASH

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
async def task_env(tmp_path):
    env, rec = make_env(BASH, TASK_OUTPUT, TASK_STOP, policy=ModePolicy(allow={"Bash"}), cwd=str(tmp_path))
    env.services["artifacts"] = ArtifactStore("test", tmp_path / "artifacts")
    env.services["background_tasks"] = tasks = BackgroundTasks()
    yield env, rec
    await tasks.aclose()


async def call(env, name: str, data: dict, call_id: str = "c"):
    return await run_call(ToolCall(call_id, name, data), env)


async def test_start_read_incrementally_and_stop(task_env):
    env, _ = task_env
    mark = marker()
    gate = Path(env.cwd) / "gate"  # "second" is printed only once the test has read "first"
    command = (f"echo first; echo warn >&2; while [ ! -e {gate} ]; do sleep 0.02; done; echo second; "
               f"sleep {mark}")
    try:
        # it returns while the command still runs (the command cannot end before the gate opens)
        started = await call(env, "Bash", {"command": command, "run_in_background": True}, "c1")
        assert started.type == "ToolCallResult"
        assert started.model_content.startswith("Command running in background with ID: bash_1\n")
        assert started.display.background_task_id == "bash_1"

        first = await call(env, "TaskOutput", {"task_id": "bash_1", "block": False}, "c2")
        for _ in range(50):  # the echo may not have happened yet
            if "first" in first.model_content:
                break
            await asyncio.sleep(0.02)
            first = await call(env, "TaskOutput", {"task_id": "bash_1", "block": False}, "c2")
        assert "<status>running</status>" in first.model_content
        assert "first\nwarn" in first.model_content and "second" not in first.model_content

        gate.touch()
        seen = ""
        deadline = time.monotonic() + DEADLINE_S  # for the shell to notice the gate
        while "second" not in seen and time.monotonic() < deadline:
            second = await call(env, "BashOutput", {"bash_id": "bash_1"}, "c3")  # legacy name, never blocks
            assert second.tool == "TaskOutput"
            seen += second.model_content
            await asyncio.sleep(0.02)
        assert "second" in seen and "first" not in seen  # only what is new

        empty = await call(env, "TaskOutput", {"task_id": "bash_1", "block": False}, "c4")
        assert "(no new output)" in empty.model_content

        stopped = await call(env, "KillShell", {"shell_id": "bash_1"}, "c5")
        assert stopped.type == "ToolCallResult" and stopped.model_content.startswith("Stopped background task bash_1")
        assert with_marker(mark) == {}

        after = await call(env, "TaskOutput", {"task_id": "bash_1"}, "c6")
        assert "<status>killed</status>" in after.model_content
        again = await call(env, "TaskStop", {"task_id": "bash_1"}, "c7")
        assert "had already ended (killed" in again.model_content
        artifact = Path(env.services["background_tasks"].get("bash_1").path).read_text()
        assert artifact == "first\nwarn\nsecond\n"
    finally:
        kill_marked(mark)


async def test_blocking_read_waits_for_the_end_and_reports_the_exit_code(task_env):
    env, _ = task_env
    await call(env, "Bash", {"command": "sleep 0.3; echo done; exit 4", "run_in_background": True})
    result = await call(env, "TaskOutput", {"task_id": "bash_1"})
    assert result.model_content == "<task_id>bash_1</task_id>\n<status>failed</status>\n<exit_code>4</exit_code>\n" \
                                   "<output>\ndone\n</output>"


async def test_a_read_returns_at_most_30000_bytes_and_says_where_the_rest_is(task_env):
    env, _ = task_env
    await call(env, "Bash", {"command": "seq 1 100000", "run_in_background": True})
    result = await call(env, "TaskOutput", {"task_id": "bash_1"})
    text = result.model_content
    task = env.services["background_tasks"].get("bash_1")
    assert f"earlier bytes of new output skipped; the whole output is in {task.path}" in text
    assert text.endswith("99999\n100000\n</output>") and len(text.encode()) < 31_000
    assert Path(task.path).read_text() == "".join(f"{i}\n" for i in range(1, 100001))


async def test_a_filter_returns_only_matching_lines_and_passes_over_the_rest(task_env):
    env, _ = task_env
    mark = marker()
    gate = Path(env.cwd) / "gate"  # the half line is finished only once the test has read it unfinished
    command = (f"for i in $(seq 1 3000); do echo \"line $i\"; done; echo 'ERROR disk full'; echo -n 'ERROR half'; "
               f"while [ ! -e {gate} ]; do sleep 0.02; done; echo ' a line'; sleep {mark}")

    async def written(text: str) -> None:  # reads return what the task's output file holds
        path = Path(env.services["background_tasks"].get("bash_1").path)
        deadline = time.monotonic() + 60  # bash's 3,000 echoes take seconds on a loaded machine
        while time.monotonic() < deadline:
            if path.exists() and text in path.read_text():
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"{text!r} never written; the file holds {path.read_text()[-300:]!r}")

    try:
        await call(env, "Bash", {"command": command, "run_in_background": True})
        await written("ERROR disk full\n")  # complete lines reach the file as they come
        first = await call(env, "TaskOutput", {"task_id": "bash_1", "block": False, "filter": "ERROR|line 299[0-9]$"})
        text = first.model_content
        assert "<output>\nline 2990\n" in text and "line 2999\nERROR disk full\n</output>" in text
        assert "line 1\n" not in text and "ERROR half" not in text  # an unfinished line waits for the next read
        gate.touch()
        deadline = time.monotonic() + 60  # until the rest of the line arrives; an unfinished line is not read
        while True:
            second = await call(env, "TaskOutput", {"task_id": "bash_1", "block": False, "filter": "ERROR"})
            if "(no new output)" not in second.model_content or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.02)
        assert "<output>\nERROR half a line\n</output>" in second.model_content
        plain = await call(env, "TaskOutput", {"task_id": "bash_1", "block": False})
        assert "(no new output)" in plain.model_content  # what the filter passed over is not read again
        bad = await call(env, "TaskOutput", {"task_id": "bash_1", "filter": "ERROR("})
        assert (bad.type, bad.phase) == ("ToolCallError", "precondition")
        assert "Invalid filter regular expression 'ERROR('" in bad.model_content
    finally:
        kill_marked(mark)


async def test_an_unknown_task_is_refused_with_the_known_ones(task_env):
    env, _ = task_env
    await call(env, "Bash", {"command": "true", "run_in_background": True})
    result = await call(env, "TaskOutput", {"task_id": "bash_9"})
    assert (result.type, result.phase) == ("ToolCallError", "precondition")
    assert "No background task with id bash_9 (tasks: bash_1)" in result.model_content
    result = await call(env, "TaskStop", {})
    assert "Give the task_id" in result.model_content


async def test_no_background_task_survives_the_session(tmp_path):
    marks = [marker(), marker()]
    registry = ToolRegistry()
    for spec in (BASH, TASK_OUTPUT, TASK_STOP):
        registry.register(spec)
    script = tmp_path / "script.json"
    script.write_text('{"steps": [{"text": "hi"}]}')
    session = Session(agent=BuiltinAgent(ScriptedModel(load_script(script))), cwd=str(tmp_path), registry=registry,
                      policy=ModePolicy(allow={"Bash"}), persist=False,
                      services={"artifacts": ArtifactStore("s", tmp_path / "a"),
                                "background_tasks": BackgroundTasks(grace_s=1.0)})
    try:
        await session.start()
        env = session.call_env("turn-1")
        for i, mark in enumerate(marks):
            # one that ignores TERM in the shell itself, one plain
            command = f"trap '' TERM; sleep {mark} & wait" if i == 0 else f"sleep {mark}"
            outcome = await call(env, "Bash", {"command": command, "run_in_background": True}, f"c{i}")
            assert outcome.type == "ToolCallResult"
        for mark in marks:
            await wait_for_marker(mark)
        began = time.monotonic()
        await session.close()
        # the TERM-ignoring one needed the KILL after the grace (1 s here), and got it
        assert 1.0 <= time.monotonic() - began < HANG_S
        for mark in marks:
            assert with_marker(mark) == {}
    finally:
        for mark in marks:
            kill_marked(mark)


# ---- Vigil's own process ending -----------------------------------------------------------------

def _python(code: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("ending", ["asyncio_run_returns", "loop_abandoned"])
def test_background_tasks_die_with_the_vigil_process(ending):
    mark = marker()
    code = f"""
        import asyncio, os
        from tests.procs import wait_for_marker
        from tui_app.tools.bash.tasks import BackgroundTasks

        async def start():
            tasks = BackgroundTasks()
            await tasks.start("sh -c 'sleep {mark}1 & sleep {mark}2; wait'", "/tmp", call_id="x",
                              env=dict(os.environ))
            await wait_for_marker("{mark}2", timeout=60)
            print("running", flush=True)

        if "{ending}" == "asyncio_run_returns":
            asyncio.run(start())  # never closes the service: asyncio.run cancels what is left
        else:
            loop = asyncio.new_event_loop()
            loop.run_until_complete(start())  # the loop is dropped with the watcher pending: atexit
    """
    try:
        proc = _python(code)
        out, err = proc.communicate(timeout=DEADLINE_S)
        assert "running" in out, err
        assert wait_gone(mark) == {}
    finally:
        kill_marked(mark)


def _signal_states(pid: int) -> str:
    lines = []
    for tid in sorted(os.listdir(f"/proc/{pid}/task")):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/status") as status:
            lines.append(f"{tid}: " + " ".join(line.strip() for line in status
                                               if line.startswith(("Name", "SigPnd", "ShdPnd", "SigBlk", "SigIgn",
                                                                   "SigCgt"))))
    return "\n".join(lines)


@pytest.mark.parametrize("caught_by", ["main_thread", "another_thread"])
def test_a_foreground_command_dies_with_vigil_on_keyboard_interrupt(caught_by, tmp_path):
    """Ctrl-C in a headless run (`run_main`, the CLI's way to run the loop). The kernel may hand
    the signal to any thread that does not block it: to the child watcher's thread, while the main
    thread has every signal blocked during a `vfork` (here the main thread blocks SIGINT for good,
    so the other thread is sure to get it). Python runs the handler in the main thread only, so
    the loop must wake up for it: it used to sleep on until the call's own deadline."""
    mark = marker()
    flag = tmp_path / "dump"
    code = f"""
        import asyncio, faulthandler, os, signal, sys, threading, time
        # as in a terminal's foreground: a suite started in the background (`make test &`) runs
        # with SIGINT ignored, which every child inherits, and Python then leaves Ctrl-C ignored
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from tests.fakes import make_env
        from tui_app.runtime.permissions.decision import ModePolicy
        faulthandler.register(signal.SIGUSR1, all_threads=True)  # the stacks, should it hang
        from tui_app.runtime.pipeline import ToolCall, run_call
        from tui_app.runtime.processes.shutdown import run_main
        from tui_app.tools.bash.tool import BASH

        async def ready():
            if "{caught_by}" == "another_thread":
                while not any("waitpid" in t.name for t in threading.enumerate()):
                    await asyncio.sleep(0.01)  # the shell's watcher thread, which must not inherit the mask
                signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGINT}})
            print("ready", flush=True)

        def dump_when_asked(loop):  # the tasks' stacks, should it hang (a thread that takes no signal)
            signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
            while not os.path.exists("{flag}"):
                time.sleep(0.2)
            for task in asyncio.all_tasks(loop):
                task.print_stack(file=sys.stderr)

        async def main():
            env, _ = make_env(BASH, policy=ModePolicy(allow={{"Bash"}}))
            threading.Thread(target=dump_when_asked, args=(asyncio.get_running_loop(),), daemon=True).start()
            asyncio.ensure_future(ready())
            command = "sh -c 'sleep {mark}1 & sleep {mark}2; wait'"
            outcome = await run_call(ToolCall("c1", "Bash", {{"command": command}}), env)
            print(outcome.code, flush=True)  # Ctrl-C cancels the main task; the call settles as cancelled

        run_main(main())
    """
    try:
        proc = _python(code)
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], DEADLINE_S)
        assert ready and proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + DEADLINE_S
        while len(with_marker(mark)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(with_marker(mark)) >= 2
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:  # say where it hung, and what each thread does with signals
            signals = _signal_states(proc.pid)
            flag.touch()
            proc.send_signal(signal.SIGUSR1)
            time.sleep(5)
            proc.kill()
            out, err = proc.communicate()
            mine = (signal.getsignal(signal.SIGINT), signal.pthread_sigmask(signal.SIG_BLOCK, []))
            raise AssertionError(f"no exit after Ctrl-C; printed {out!r}; signal state of each thread:\n{signals}\n"
                                 f"(this test's SIGINT handler and mask: {mine}); every thread's and task's stack:"
                                 f"\n{err}") from None
        assert out.strip() == "cancelled", err
        assert wait_gone(mark) == {}
    finally:
        kill_marked(mark)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGHUP])
def test_a_headless_run_killed_by_a_signal_takes_its_commands_with_it(tmp_path, how):
    mark = marker()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"tool_calls": [
        {"id": "b1", "name": "Bash", "input": {"command": f"sleep {mark} & sleep {mark}"}}]}]}))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VIGIL_HOME": str(tmp_path / "home")}
    run = subprocess.Popen([sys.executable, "-m", "tui_app", "-p", "go", "--script", str(script),
                            "--permission-mode", "bypassPermissions"], cwd=tmp_path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + DEADLINE_S
        while len(with_marker(mark)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(with_marker(mark)) >= 2, "the command did not start"
        run.send_signal(how)
        assert run.wait(DEADLINE_S) == 128 + how
        assert wait_gone(mark) == {}
        (log,) = (tmp_path / "home" / "sessions").glob("*/events.jsonl")
        kinds = [json.loads(line)["type"] for line in log.read_text().splitlines()]
        assert "ToolCallStarted" in kinds and kinds[-1] == "SessionEnded"  # a log that ends cleanly
    finally:
        run.kill()
        kill_marked(mark)
