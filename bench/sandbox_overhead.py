"""What the sandbox costs one Bash call: a trivial command through Vigil's whole pipeline (policy,
bubblewrap, placeholders), sandboxed and not, in the same run and the same session, alternating.
A third side runs a trivial command the classifier does not know (`/bin/true`): such a command may
use the network, so its sandbox also gets the per-call proxy and the socat relay inside.

The home directory is a fake one holding every credential path the sandbox hides
(`sandbox_secrets.HOME_SECRETS`), and the environment carries secret-looking variables: the small
world (each credential hidden, the environment scrubbed) is paid in full on every call.

    .venv/bin/python bench/sandbox_overhead.py [--runs 20]

Prints, per side: median, spread (min–max and the middle half), and the added time at the median
against the unsandboxed call measured in the same run. Goal: ≤ 10 ms added at the median.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_app.assemble import SessionOptions, build_session
from tui_app.runtime.permissions.sandbox_secrets import HOME_SECRETS
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.tools.bash import sandbox as sandbox_module

GOAL_MS = 10.0


def project(root: Path) -> Path:
    proj = root / "proj"
    (proj / "secret").mkdir(parents=True)
    (proj / "secret" / "key").write_text("canary\n")
    (proj / "src").mkdir()
    (proj / "src" / "app.py").write_text("print('app')\n")
    (proj / ".vigil").mkdir()
    (proj / ".vigil" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(./secret/**)"]}}))
    return proj


def full_home(root: Path) -> Path:
    """A home holding every credential the sandbox hides (directories where the name has no dot
    suffix, files where it does)."""
    home = root / "fake-home"
    for rel in HOME_SECRETS:
        path = home / rel
        if "." in path.name.lstrip("."):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("secret\n")
        else:
            path.mkdir(parents=True, exist_ok=True)
            (path / "secret").write_text("secret\n")
    return home


async def one(session, command: str, sandboxed: bool, n: int) -> float:
    """One call; the unsandboxed one asks to leave the sandbox (bypassPermissions lets it)."""
    data = {"command": command, "dangerouslyDisableSandbox": not sandboxed}
    began = time.perf_counter()
    outcome = await run_call(ToolCall(f"bench-{n}", "Bash", data), session.call_env(None))
    elapsed = (time.perf_counter() - began) * 1000
    started = [e for e in seen if e.type == "ToolCallStarted" and e.call_id == f"bench-{n}"]
    if outcome.type != "ToolCallResult" or not started or bool(started[0].sandboxed) != sandboxed:
        raise SystemExit(f"the call did not run as asked (sandboxed={sandboxed}): {outcome.model_content!r}")
    return elapsed


seen: list = []


def describe(name: str, times: list[float], base: float | None) -> str:
    """median, min–max, the middle half, and what the sandbox added at the median."""
    times = sorted(times)
    median = statistics.median(times)
    q1, q3 = times[len(times) // 4], times[(3 * len(times)) // 4]
    added = f"  added {median - base:+6.1f} ms ({median / base:4.2f}x)" if base else ""
    return (f"{name:<32} median {median:6.1f} ms   spread {times[0]:6.1f}–{times[-1]:6.1f} ms "
            f"(middle half {q1:.1f}–{q3:.1f}){added}")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--empty-home", action="store_true", help="a home with no credential in it (the comparison)")
    args = parser.parse_args()
    if args.runs < 5:
        raise SystemExit("--runs must be at least 5")
    print(__doc__.strip().splitlines()[0])
    found = sandbox_module.probe()
    if not found.available:
        raise SystemExit(f"no sandbox here: {found.reason}")
    root = Path(tempfile.mkdtemp(prefix="vigil-bench-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    os.environ["VIGIL_HOME"] = str(root / "home")
    os.environ["HOME"] = str(root / "empty-home") if args.empty_home else str(full_home(root))
    os.makedirs(os.environ["HOME"], exist_ok=True)
    for i in range(20):
        os.environ[f"BENCH_{i}_TOKEN"] = "x" * 40
    try:
        script = root / "script.json"
        script.write_text(json.dumps({"steps": [{"text": "ok"}]}))
        session = build_session(SessionOptions(cwd=str(project(root)), script=str(script), no_claude_settings=True,
                                               permission_mode="bypassPermissions", persist=False))
        session.subscribe(seen.append)
        await session.start()
        sides = {"unsandboxed `true`": ("true", False), "sandboxed `true`": ("true", True),
                 "sandboxed `/bin/true` + relay": ("/bin/true", True)}
        times: dict[str, list[float]] = {side: [] for side in sides}
        n = 0
        for command, sandboxed in sides.values():  # warm-up: imports, the probe, the page cache
            n += 1
            await one(session, command, sandboxed, n)
        for _ in range(args.runs):
            for side, (command, sandboxed) in sides.items():
                n += 1
                times[side].append(await one(session, command, sandboxed, n))
        await session.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    base_side = next(iter(times))
    base = statistics.median(times[base_side])
    print(f"through the Bash tool, {args.runs} runs per side, alternating "
          f"({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})")
    for side, values in times.items():
        print(describe(side, values, None if side == base_side else base))
    added = statistics.median(times["sandboxed `true`"]) - base
    best = min(times["sandboxed `true`"]) - min(times[base_side])
    print(f"goal: ≤ {GOAL_MS:.0f} ms added at the median — {'met' if added <= GOAL_MS else 'NOT met'} "
          f"({added:.1f} ms at the median, {best:.1f} ms between the fastest runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
