"""What the git guard adds to deciding one `git status`: the classifier's answer for the line in a
fresh repository, with the guard's cache of configuration files empty (the first decision after a
configuration file changed: one `git config --file` per file) and warm (every later one), against
the same line's answer for `ls` (no guard), in the same run.

    .venv/bin/python bench/git_guard_cost.py [--runs 21]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tui_app.runtime.permissions.bash import git_guard  # noqa: E402
from tui_app.runtime.permissions.bash.parse import parse_command  # noqa: E402
from tui_app.runtime.permissions.bash.readonly import classify  # noqa: E402
from tui_app.runtime.permissions.bash.words import Where  # noqa: E402


def timed(line: str, where: Where, cold: bool) -> float:
    parsed = parse_command(line)
    if cold:
        git_guard._cache.clear()
    began = time.perf_counter()
    classify(parsed, where)
    return (time.perf_counter() - began) * 1000


def summary(name: str, values: list[float]) -> str:
    return (f"{name:>22}: median {statistics.median(values):7.3f} ms  "
            f"min {min(values):7.3f}  max {max(values):7.3f}  (n={len(values)})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proj = Path(tmp) / "proj"
        proj.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=proj, check=True, env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"})
        where = Where((str(proj),), tmp)
        timed("git status", where, cold=False)  # the parser and the grammar loaded
        rows = {"ls": [], "git status (cold cache)": [], "git status (warm)": []}
        for _ in range(args.runs):
            rows["ls"].append(timed("ls", where, cold=False))
            rows["git status (cold cache)"].append(timed("git status", where, cold=True))
            rows["git status (warm)"].append(timed("git status", where, cold=False))
        for name, values in rows.items():
            print(summary(name, values))


if __name__ == "__main__":
    main()
