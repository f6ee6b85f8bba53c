"""Session events for widget tests, snapshots, the gallery and the widget bench: what a real
session emits (same models, same order), with fixed timestamps so snapshots are stable."""

from __future__ import annotations

from typing import Any

from tui_app.runtime.contract import ToolFlags
from tui_app.runtime.display import (
    BashOutputDisplay,
    FileDiffDisplay,
    OutputSegment,
)
from tui_app.runtime.events import (
    ArtifactRef,
    CallMetrics,
    PermissionRequested,
    PermissionResolved,
    ToolCallError,
    ToolCallProgress,
    ToolCallRequested,
    ToolCallResult,
    ToolCallScheduled,
    ToolCallStarted,
)

T0 = 1_700_000_000.0
CWD = "/home/dev/proj"
READ = ToolFlags(read_only=True, concurrency_safe=True, side_effect_scope="none", needs_approval=False, risk="low")
WRITE = ToolFlags(side_effect_scope="workspace", risk="medium")
SHELL = ToolFlags(side_effect_scope="system", risk="high")

#: strings that would be markup, actions or terminal commands if anything trusted them
NASTY = [
    "[/",
    "[bold]x",
    "[@click=app.quit]x[/]",
    "\x1b]52;c;SGVsbG8gY2xpcGJvYXJk\x07clip",
    "\x1b]0;pwned title\x07title",
    "\x1b[2J\x1b[1;1Hcursor\x1b[5A",
    "c1\x9b31m\x85\x90dcs\x9c",
]
NASTY_TEXT = " ".join(NASTY)

OLD_STATS = '''"""Small statistics helpers."""


def total(values):
    result = 0
    for value in values:
        result += value
    return result


def mean(values):
    return total(values) / len(values)


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle]
'''
NEW_STATS = OLD_STATS.replace(
    "    return ordered[middle]\n",
    "    if len(ordered) % 2:\n        return ordered[middle]\n"
    "    return (ordered[middle - 1] + ordered[middle]) / 2\n",
).replace("return total(values) / len(values)", "return total(values) / max(len(values), 1)")


def stats_diff(path: str = f"{CWD}/calc/stats.py") -> FileDiffDisplay:
    return FileDiffDisplay(path=path, old_text=OLD_STATS, new_text=NEW_STATS, added=4, removed=2)


PYTEST_OUTPUT = [
    ("stdout", "\x1b[1m============================= test session starts ==============================\x1b[0m\n"),
    ("stdout", "collected 4 items\n\ntests/test_stats.py \x1b[32m.\x1b[0m\x1b[32m.\x1b[0m\x1b[31mF\x1b[0m"),
    ("stdout", "\x1b[32m.\x1b[0m\x1b[31m                                         [100%]\x1b[0m\n\n"),
    ("stdout", "=================================== FAILURES ===================================\n"),
    ("stdout", "\x1b[31m\x1b[1m" + " MedianTest.test_even ".center(80, "_") + "\x1b[0m\n"),
    ("stdout", "    def test_even(self):\n>       self.assertEqual(median([4, 1, 3, 2]), 2.5)\n"),
    ("stdout", "\x1b[1m\x1b[31mE       AssertionError: 3 != 2.5\x1b[0m\n"),
    ("stderr", "warning: PYTHONHASHSEED is not set\n"),
    ("stdout", "\x1b[31m========================= \x1b[1m1 failed\x1b[0m, \x1b[32m3 passed\x1b[0m\x1b[31m in 0.04s "
               "==========================\x1b[0m\n"),
]


def bash_display(command: str = "python -m pytest -q", exit_code: int = 1) -> BashOutputDisplay:
    segments = [OutputSegment(stream=s, text=t) for s, t in PYTEST_OUTPUT]  # type: ignore[arg-type]
    return BashOutputDisplay(command=command, segments=segments, exit_code=exit_code, duration_ms=1840,
                             total_bytes=sum(len(t) for _, t in PYTEST_OUTPUT))


def _ev(cls: Any, seq: int, dt: float, **fields: Any) -> Any:
    return cls(seq=seq, session_id="s-demo", ts=T0 + dt, turn_id="t1", **fields)


def edit_request(call_id: str = "toolu_05") -> PermissionRequested:
    data = {"file_path": f"{CWD}/calc/stats.py", "old_string": "return ordered[middle]",
            "new_string": "if len(ordered) % 2: ..."}
    return PermissionRequested(
        call_id=call_id, turn_id="t1", session_id="s-demo", ts=T0 + 3.0, request_id="perm-1", tool="Edit",
        input=data, input_sha256="9c1f3ab2e4d5f60718293a4b5c6d7e8f", summary="Edit calc/stats.py",
        reason="file edits ask in default mode", decided_by="mode", risk="medium",
        side_effect_scope="workspace", preview_kind="diff", preview_display=stats_diff(),
        suggested_rules=["Edit(calc/**)"],
    )


def bash_request(command: str, call_id: str = "toolu_09", risk: str = "high") -> PermissionRequested:
    return PermissionRequested(
        call_id=call_id, turn_id="t1", session_id="s-demo", ts=T0 + 5.0, request_id="perm-2", tool="Bash",
        input={"command": command}, input_sha256="51d0c0ffee00aa11bb22cc33dd44ee55", summary=f"Bash {command}",
        reason="Bash commands ask on first use", decided_by="rule", risk=risk, side_effect_scope="system",
        preview_kind="command", preview=command, suggested_rules=["Bash(npm test:*)"],
    )


def session_events() -> list[Any]:
    """A turn mid-session: parallel reads, a failing test run, an Edit waiting for approval,
    a running command, a denied call and one cancelled by the turn stop."""
    seq = iter(range(1, 1000))
    ev: list[Any] = []

    def add(cls: Any, dt: float, **fields: Any) -> None:
        ev.append(_ev(cls, next(seq), dt, **fields))

    calls = [
        ("toolu_01", "Glob", {"pattern": "**/*.py"}),
        ("toolu_02", "Read", {"file_path": f"{CWD}/calc/stats.py"}),
        ("toolu_03", "Read", {"file_path": f"{CWD}/tests/test_stats.py"}),
        ("toolu_04", "Bash", {"command": "python -m pytest -q"}),
        ("toolu_05", "Edit", {"file_path": f"{CWD}/calc/stats.py", "old_string": "return ordered[middle]",
                              "new_string": "if len(ordered) % 2: ..."}),
        ("toolu_06", "Bash", {"command": "npm run build --watch"}),
        ("toolu_07", "WebFetch", {"url": "https://docs.python.org/3/library/statistics.html"}),
        ("toolu_08", "Bash", {"command": "rm -rf build/"}),
    ]
    for index, (call_id, name, data) in enumerate(calls):
        add(ToolCallRequested, 0.01 * index, call_id=call_id, step=1, index=index, name=name, input=data)
    groups = [["toolu_01", "toolu_02", "toolu_03"], ["toolu_04"], ["toolu_05"], ["toolu_06"], ["toolu_07"],
              ["toolu_08"]]
    for gi, group in enumerate(groups):
        for call_id in group:
            add(ToolCallScheduled, 0.1, call_id=call_id, batch=0, group=gi, groups=groups)
    for i, (call_id, name, data) in enumerate(calls[:3]):
        add(ToolCallStarted, 0.2, call_id=call_id, tool=name, input=data, target=str(next(iter(data.values()))),
            flags=READ, group=0)
        size = [812, 1450, 2210][i]
        add(ToolCallResult, 0.2 + 0.01 * (i + 1), call_id=call_id, tool=name, model_content="…",
            original_bytes=size, sent_bytes=size, metrics=CallMetrics(total_ms=12 + i, exec_ms=9 + i, bytes_out=size))
    add(ToolCallStarted, 0.3, call_id="toolu_04", tool="Bash", input=calls[3][2], target="python -m pytest -q",
        flags=SHELL, group=1, timeout_ms=120_000)
    for stream, text in PYTEST_OUTPUT:
        add(ToolCallProgress, 0.5, call_id="toolu_04", kind="output", stream=stream, text=text)
    add(ToolCallResult, 2.14, call_id="toolu_04", tool="Bash", model_content="Exit code 1\n…1 failed, 3 passed",
        display=bash_display(), original_bytes=48_211, sent_bytes=30_000, strategy="artifact", truncated=False,
        artifacts=[ArtifactRef(artifact_id="a1", uri="vigil-artifact://s-demo/a1",
                               path="/home/dev/.local/share/vigil/sessions/s-demo/artifacts/a1.txt",
                               bytes=48_211, lines=612)],
        metrics=CallMetrics(total_ms=1850, exec_ms=1840, bytes_out=48_211))
    ev.append(edit_request().model_copy(update={"seq": next(seq)}))
    add(ToolCallStarted, 4.0, call_id="toolu_06", tool="Bash", input=calls[5][2], target="npm run build --watch",
        flags=SHELL, group=3, timeout_ms=600_000)
    add(ToolCallProgress, 4.1, call_id="toolu_06", kind="output", stream="stdout",
        text="> build\n> vite build --watch\n")
    add(PermissionResolved, 4.2, call_id="toolu_07", decision="deny", decided_by="rule",
        reason="WebFetch(domain:docs.python.org) is denied", rule="WebFetch(domain:docs.python.org)")
    add(ToolCallError, 4.2, call_id="toolu_07", tool="WebFetch", phase="permission", code="permission_denied",
        message="WebFetch(domain:docs.python.org) is denied", model_content="Permission denied",
        metrics=CallMetrics(total_ms=3))
    add(ToolCallError, 4.3, call_id="toolu_08", tool="Bash", phase="cancel", code="turn_stopped",
        message="Tool cancelled because a previous tool result requested a turn stop.",
        model_content="Tool cancelled because a previous tool result requested a turn stop.")
    return ev


def chat_events() -> list[Any]:
    """The session's start and the turn's prompt and text around `session_events()`."""
    from tui_app.runtime.events import (
        AssistantText,
        AssistantTextDelta,
        ModelStepEnded,
        SessionStarted,
        TurnStarted,
    )

    text = ("The failing test is **`MedianTest.test_even`**: for an even number of values `median` returns "
            "the upper middle value. Reading the code and the tests, then running them.")
    head = [
        SessionStarted(seq=0, session_id="20250101-120000-abc123", ts=T0 - 5, cwd=CWD, provider="anthropic",
                       model="claude-sonnet-4-5", permission_mode="default"),
        _ev(TurnStarted, 0, 0.0, prompt="Why does test_even fail? Fix it."),
        *(_ev(AssistantTextDelta, 0, 0.0, step=1, index=0, text=text[i:i + 16]) for i in range(0, len(text), 16)),
        _ev(AssistantText, 0, 0.0, step=1, index=0, text=text),
        _ev(ModelStepEnded, 0, 0.0, step=1, stop_reason="tool_use",
            usage={"input_tokens": 12_345, "output_tokens": 678}),
    ]
    return [*head, *session_events()]
