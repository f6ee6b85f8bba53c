"""The floors of docs/architecture.md §1 hold: the runtime is UI-agnostic, nothing imports upward, and no module
is part of an import circle (a piece two modules share moves down a floor)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent
RUNTIME = ROOT / "tui_app" / "runtime"

#: bottom up; a module may import its own floor and the floors below, never one above
FLOORS: list[tuple[str, ...]] = [
    ("tui_app.runtime",),
    ("tui_app.tools", "tui_app.providers", "tui_app.mcp", "tui_app.agents", "tui_app.view_model", "widgets"),
    ("tui_app.config", "tui_app.project_trust", "tui_app.demo"),
    ("tui_app.assemble",),
    ("tui_app.headless", "tui_app.app", "tui_app.host"),
    ("tui_app.cli", "tui_app.__main__"),
]
#: the pipeline core of the runtime: its rooms (permissions/, hooks/, results/, files/) sit below it
RUNTIME_CORE_ABOVE_ROOMS = ("tui_app.runtime.pipeline", "tui_app.runtime.call", "tui_app.runtime.approval_stage",
                            "tui_app.runtime.executor", "tui_app.runtime.session", "tui_app.runtime.agent")
RUNTIME_ROOMS = ("tui_app.runtime.permissions", "tui_app.runtime.hooks", "tui_app.runtime.results",
                 "tui_app.runtime.files", "tui_app.runtime.processes", "tui_app.runtime.log")
RUNTIME_FORBIDDEN = ("textual", "widgets", "tui_app.tools", "tui_app.providers", "tui_app.mcp", "tui_app.agents",
                     "tui_app.app", "tui_app.headless", "tui_app.assemble", "tui_app.config", "tui_app.cli")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported_modules(path: Path, *, runtime_only: bool = False) -> set[str]:
    """Every module `path` imports (lazy imports inside functions included); with
    `runtime_only`, imports under `if TYPE_CHECKING:` are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    if runtime_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and _is_type_checking(node):
                skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            # `from pkg import module` imports the module too
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def project_modules() -> dict[str, Path]:
    paths = [*ROOT.joinpath("tui_app").rglob("*.py"), *ROOT.joinpath("widgets").rglob("*.py")]
    return {module_name(p): p for p in paths if "sample_project" not in p.parts}


def import_graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    """Who imports whom; with `type_checking`, the imports under `if TYPE_CHECKING:` count too."""
    modules = project_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        imports = imported_modules(path, runtime_only=not type_checking)
        graph[name] = {m for m in imports if m in modules and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def floor_of(name: str) -> int | None:
    for level, prefixes in enumerate(FLOORS):
        if _under(name, prefixes):
            return level
    return None


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for name, targets in graph.items():
        mine = floor_of(name)
        for target in targets:
            theirs = floor_of(target)
            upward = mine is not None and theirs is not None and theirs > mine
            if upward or (_under(name, RUNTIME_ROOMS) and _under(target, RUNTIME_CORE_ABOVE_ROOMS)):
                bad.append(f"{name} -> {target}")
    return sorted(bad)


def test_no_import_circles():
    assert cycles(import_graph()) == []


def test_no_circles_hidden_under_type_checking():
    """A part that needs its owner takes a Protocol of what it needs (docs/architecture.md §1)."""
    assert cycles(import_graph(type_checking=True)) == []


#: the rooms of the clients of a session: they reach it through its port (docs/architecture.md §13)
CLIENTS = ("tui_app.app", "tui_app.headless", "tui_app.host", "tui_app.cli", "widgets")
#: what only the session and its controller may touch
SESSION_INSIDES = frozenset({"policy", "model", "services", "driver"})


def reach_ins(tree: ast.AST) -> list[tuple[int, str]]:
    """`session.policy`, `x.session.services` …: a client reaching into a live session."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in SESSION_INSIDES:
            owner = node.value
            named = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else ""
            if named == "session":
                found.append((node.lineno, f"session.{node.attr}"))
    return found


def test_no_client_reaches_into_a_session():
    offenders = []
    for name, path in sorted(project_modules().items()):
        if _under(name, CLIENTS):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            offenders += [f"{name}:{line} {what}" for line, what in reach_ins(tree)]
    assert offenders == []


def test_the_reach_in_check_finds_a_reach_in():
    code = "def f(app):\n    app.session.services['x'] = 1\n    session.policy.mode = 'plan'\n    facts.model\n"
    assert reach_ins(ast.parse(code)) == [(2, "session.services"), (3, "session.policy")]


def test_no_folder_holds_more_than_twenty_modules():
    folders: dict[Path, int] = {}
    for path in project_modules().values():
        if path.name != "__init__.py":
            folders[path.parent] = folders.get(path.parent, 0) + 1
    assert {str(f.relative_to(ROOT)): n for f, n in folders.items() if n > 20} == {}


def test_comments_cite_documents_of_the_repository_only():
    """Comments cite docs/architecture.md; a document outside the repository cannot be followed."""
    outside = ("DESIGN §", "DESIGN.md", "SPEC-compat", "NOTES-agents", "NOTES-perf", "NOTES-mcp", "REVIEW-architecture")
    cited = []
    sources = [*project_modules().values(), *ROOT.joinpath("tests").glob("*.py"), *ROOT.joinpath("bench").glob("*.py")]
    for path in sources:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(word in line for word in outside) and path.name != "test_layers.py":
                cited.append(f"{path.relative_to(ROOT)}:{number}")
    assert cited == []


def test_the_circle_check_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_nothing_imports_a_floor_above_its_own():
    assert upward_imports(import_graph()) == []


def test_the_floor_check_finds_an_upward_import():
    graph = {"tui_app.runtime.events": {"tui_app.tools.read"},
             "tui_app.runtime.permissions.rules": {"tui_app.runtime.pipeline"},
             "tui_app.tools.read": {"tui_app.runtime.events"}}
    assert upward_imports(graph) == ["tui_app.runtime.events -> tui_app.tools.read",
                                     "tui_app.runtime.permissions.rules -> tui_app.runtime.pipeline"]


def test_every_module_has_a_floor():
    assert [m for m in project_modules() if m != "tui_app" and floor_of(m) is None] == []


def test_every_package_says_what_it_is_for():
    silent = []
    for init in [*ROOT.joinpath("tui_app").rglob("__init__.py"), *ROOT.joinpath("widgets").rglob("__init__.py")]:
        if "sample_project" in init.parts:
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        if len(doc.splitlines()) < 2 or "TODO" in doc:
            silent.append(module_name(init))
    assert silent == []


def test_no_runtime_module_imports_textual_widgets_or_upper_floors():
    offenders = []
    for path in sorted(RUNTIME.rglob("*.py")):
        for name in imported_modules(path):
            if _under(name, RUNTIME_FORBIDDEN):
                offenders.append(f"{module_name(path)}: {name}")
    assert offenders == []


def test_importing_every_runtime_module_loads_no_textual():
    modules = [module_name(p) for p in sorted(RUNTIME.rglob("*.py"))]
    code = ("import sys\n" + "".join(f"import {m}\n" for m in modules)
            + "bad = [m for m in sys.modules if m == 'textual' or m.startswith('textual.')]\n"
            + "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == ""
