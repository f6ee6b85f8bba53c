"""The runtime is UI-agnostic: it never imports Textual or the widgets, directly or indirectly."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

RUNTIME = Path(__file__).parent.parent / "tui_app" / "runtime"
FORBIDDEN = ("textual", "widgets", "tui_app.tools", "tui_app.providers", "tui_app.mcp", "tui_app.app",
             "tui_app.screens", "tui_app.assemble", "tui_app.cli")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_runtime_module_imports_textual_widgets_or_upper_floors():
    offenders = []
    for path in sorted(RUNTIME.rglob("*.py")):
        for name in imported_modules(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN):
                offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_importing_every_runtime_module_loads_no_textual():
    modules = [f"tui_app.runtime.{p.stem}" for p in sorted(RUNTIME.glob("*.py")) if p.stem != "__init__"]
    code = ("import sys\n" + "".join(f"import {m}\n" for m in modules)
            + "bad = [m for m in sys.modules if m == 'textual' or m.startswith('textual.')]\n"
            + "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=RUNTIME.parent.parent, check=True)
    assert out.stdout.strip() == ""
