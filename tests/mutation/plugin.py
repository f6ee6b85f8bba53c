"""The pytest plugin behind `make mutate`: it takes over pytest's run loop.

1. Every collected test runs once, in forked workers, under a line tracer restricted to the target
   files: which lines of the permission room each test runs, and how long it takes. A test that
   fails here is left out (it would "kill" every mutant).
2. Each mutant runs in a forked child of this process (the modules are imported once): the child
   puts the mutant in (`apply`), then runs the tests that run the mutated lines — the likely
   killers first, then the most focused — within a budget of measured seconds (`--again N`: a
   survivor runs again with N times the budget) —
   and stops at the first failure. A child that outlives its deadline was stuck (a mutant that
   loops): killed. Mutants listed in `equivalent/*.txt` are not run.
3. The report: every surviving mutant with where it is, then
   `mutation score: K/N killed (S surviving, E equivalent)`.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import pickle
import signal
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from _pytest.runner import runtestprotocol

from tests.mutation.apply import apply, clear_caches
from tests.mutation.mutants import Mutant, iter_targets
from tests.mutation.scope import TARGETS

ROOT = Path(__file__).resolve().parents[2]
EQUIVALENT_DIR = Path(__file__).with_name("equivalent")


@dataclass
class Options:
    workers: int = 2
    only: str | None = None
    match: str | None = None
    report: Path | None = None
    limit: int | None = None
    #: while working: at most this many tests per mutant (the fastest); a survivor is then only a suspect
    max_tests: int | None = None
    #: while working: keep each test module's measurement here, measured again when it or the
    #: targets change
    cache: Path | None = None
    #: each mutant runs its tests (the likely killers first, then the most focused) until their measured
    #: time passes this many seconds; a mutant that survives them counts as surviving
    budget: float | None = 2.0
    #: survivors of the budget run again with this many times the budget (0: not again)
    again: float = 0


def read_equivalents(folder: Path = EQUIVALENT_DIR) -> dict[str, str]:
    """`mutant id  — reason` lines, one file a mutated module (see equivalent/README)."""
    found: dict[str, str] = {}
    for path in sorted(folder.glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            mutant_id, sep, reason = line.partition("  — ")
            if not sep or not reason.strip():
                raise SystemExit(f"{path.name}: no reason given for {line!r}")
            found[mutant_id.strip()] = reason.strip()
    return found


# ---- coverage -------------------------------------------------------------------------------------

@dataclass
class TestInfo:
    nodeid: str
    passed: bool
    seconds: float
    lines: set[tuple[str, int]] = field(default_factory=set)


def _tracer(files: dict[str, str], hits: set[tuple[str, int]]):
    def local(frame, event, arg):
        if event == "line":
            hits.add((files[frame.f_code.co_filename], frame.f_lineno))
        return local

    def global_(frame, event, arg):
        name = files.get(frame.f_code.co_filename)
        if name is None:
            return None
        hits.add((name, frame.f_lineno))
        return local

    return global_


def _quiet() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def _run_items(items: list[pytest.Item]) -> bool:
    for index, item in enumerate(items):
        nextitem = items[index + 1] if index + 1 < len(items) else None
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        if any(r.failed for r in reports):
            return False
    return True


def _measure(items: list[pytest.Item], out: str) -> None:
    """In a forked worker: run these tests one by one under the tracer; pickle what each ran."""
    files = {str(ROOT / f): f for f in TARGETS}
    infos = []
    for index, item in enumerate(items):
        clear_caches()  # else a test served from a cache filled by an earlier one would not run those lines
        hits: set[tuple[str, int]] = set()
        tracer = _tracer(files, hits)
        threading.settrace(tracer)
        sys.settrace(tracer)
        started = time.perf_counter()
        try:
            nextitem = items[index + 1] if index + 1 < len(items) else None
            reports = runtestprotocol(item, nextitem=nextitem, log=False)
        finally:
            sys.settrace(None)
            threading.settrace(None)  # type: ignore[arg-type]
        passed = not any(r.failed for r in reports) and not any(r.skipped for r in reports)
        infos.append(TestInfo(item.nodeid, passed, time.perf_counter() - started, hits))
    with open(out, "wb") as handle:
        pickle.dump(infos, handle)


def _fork(target, *args) -> int:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            _quiet()
            code = target(*args) or 0
        except BaseException:
            code = 70
        finally:
            os._exit(code)
    return pid


def _fingerprint(module: str) -> str:
    digest = hashlib.sha256()
    helpers = sorted(p for p in (ROOT / "tests").glob("*.py") if not p.name.startswith("test_"))
    helpers += sorted((ROOT / "tests" / "mutation").glob("*.py"))  # how it measures
    for path in [ROOT / module, *helpers, *(ROOT / f for f in TARGETS)]:
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()


def measure(items: list[pytest.Item], workers: int, tmp: str, cache: Path | None = None) -> dict[str, TestInfo]:
    # whole modules go to one worker (module fixtures are set up once), biggest modules first
    by_module: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        by_module[item.nodeid.split("::", 1)[0]].append(item)
    cached: dict[str, tuple[str, list[TestInfo]]] = {}
    if cache is not None and cache.exists():
        with open(cache, "rb") as handle:
            cached = pickle.load(handle)
    infos: dict[str, TestInfo] = {}
    prints = {module: _fingerprint(module) for module in by_module}
    for module in list(by_module):
        entry = cached.get(module)
        if entry is not None and entry[0] == prints[module] and {i.nodeid for i in entry[1]} == {
                item.nodeid for item in by_module[module]}:
            infos.update({i.nodeid: i for i in entry[1]})
            del by_module[module]
    shares: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for group in sorted(by_module.values(), key=len, reverse=True):
        min(shares, key=len).extend(group)
    pids = {}
    for n, share in enumerate(shares):
        if share:
            out = os.path.join(tmp, f"measure-{n}.pickle")
            pids[_fork(_measure, share, out)] = out
    for pid, out in pids.items():
        os.waitpid(pid, 0)
        with open(out, "rb") as handle:
            infos.update({i.nodeid: i for i in pickle.load(handle)})
    if cache is not None:
        fresh: dict[str, list[TestInfo]] = defaultdict(list)
        for info in infos.values():
            fresh[info.nodeid.split("::", 1)[0]].append(info)
        cached.update({module: (prints[module], found) for module, found in fresh.items() if module in prints})
        with open(cache, "wb") as handle:
            pickle.dump(cached, handle)
    return infos


# ---- mutants --------------------------------------------------------------------------------------

@dataclass
class Result:
    mutant: Mutant
    status: str  # killed, survived, timeout, uncovered, equivalent, broken
    tests: int = 0
    seconds: float = 0.0
    killer: str = ""


def _child(mutant: Mutant, source: str, items: list[pytest.Item], out: str) -> int:
    try:
        apply(mutant, source)
    except Exception as exc:
        Path(out).write_text(f"broken\t{type(exc).__name__}: {exc}")
        return 3
    for index, item in enumerate(items):
        clear_caches()  # each test as it ran when measured
        nextitem = items[index + 1] if index + 1 < len(items) else None
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        if any(r.failed for r in reports):
            Path(out).write_text(f"killed\t{item.nodeid}")
            return 1
    Path(out).write_text("survived\t")
    return 0


def _uses(sources: dict[str, str]) -> dict[str, set[tuple[str, int]]]:
    """name → the lines of the target files that read it (`NAME`, `x.NAME`)."""
    import ast

    found: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for file, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                found[node.id].add((file, node.lineno))
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                found[node.attr].add((file, node.lineno))
    return found


def _import_time_names(mutant: Mutant, source: str) -> set[str]:
    """What an import-time mutant changes: the names it (re)binds, and those built from them later."""
    import ast

    tree = ast.parse(source)
    top = tree.body[mutant.stmt_index]
    if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef):
        return {top.name}  # a default value
    if isinstance(top, ast.ClassDef):
        return {top.name} | {t.id for stmt in top.body if isinstance(stmt, ast.Assign | ast.AnnAssign)
                             for t in ast.walk(stmt) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    names = {t.id for t in ast.walk(top) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    for later in tree.body[mutant.stmt_index + 1:]:
        if isinstance(later, ast.Assign | ast.AnnAssign):
            loads = {n.id for n in ast.walk(later) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            if loads & names:
                names |= {t.id for t in ast.walk(later) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    return names


def select(mutant: Mutant, infos: dict[str, TestInfo], by_file: dict[str, list[str]],
           max_tests: int | None = None, uses: dict[str, set[tuple[str, int]]] | None = None,
           source: str | None = None) -> list[str]:
    lines = {(mutant.file, n) for n in range(mutant.line, mutant.end_line + 1)}
    chosen = [i for i in infos.values() if i.passed and i.lines & lines]
    if not chosen and mutant.import_time:
        used: set[tuple[str, int]] = set()
        if uses is not None and source is not None:
            for name in _import_time_names(mutant, source):
                used |= uses.get(name, set())
        chosen = [i for i in infos.values() if i.passed and i.lines & used]
        if not chosen:
            chosen = [infos[n] for n in by_file.get(mutant.file, ())]
    # the most focused tests first (those that run the fewest lines of the room: a table row about
    # this very check, not a session that passes through it), the fastest among equals
    return [i.nodeid for i in sorted(chosen, key=lambda i: (len(i.lines), i.seconds))][:max_tests]


def _order(chosen: list[str], mutant: Mutant, killers: dict[tuple[str, str], list[str]],
           infos: dict[str, TestInfo], budget: float | None, kills: dict[str, int] | None = None) -> list[str]:
    """Tests that killed this function's other mutants first (they likely kill this one), then the
    most focused (a table row about this very check), then those that killed this file's other
    mutants and the best killers anywhere, then the rest by focus; within the budget, where a test
    that does not fit is passed over for a faster one rather than ending the list."""
    wanted = set(chosen)
    first: list[str] = []

    def add(names, most: int) -> None:  # type: ignore[no-untyped-def]
        first.extend([n for n in names if n in wanted and n not in first][:most])

    add(killers.get((mutant.file, mutant.qualname), ()), 8)
    add(chosen, 12)
    add(killers.get((mutant.file, ""), ()), 24)
    if kills:
        add(sorted((n for n in chosen if kills.get(n)), key=lambda n: -kills[n]), 16)
    ordered = first + [n for n in chosen if n not in first]
    if budget is None:
        return ordered
    kept, spent = [], 0.0
    for n in ordered:
        if kept and spent + infos[n].seconds > budget:
            continue
        kept.append(n)
        spent += infos[n].seconds
    return kept


def run_mutants(mutants: list[tuple[Mutant, str]], items: dict[str, pytest.Item], infos: dict[str, TestInfo],
                equivalents: dict[str, str], workers: int, tmp: str, progress, max_tests: int | None = None,
                budget: float | None = None, again_factor: float = 0) -> list[Result]:
    by_file: dict[str, list[str]] = defaultdict(list)
    for info in infos.values():
        if info.passed:
            for file in {f for f, _ in info.lines}:
                by_file[file].append(info.nodeid)
    results: list[Result] = []
    queue = []
    uses = _uses({f: (ROOT / f).read_text(encoding="utf-8") for f in TARGETS})
    killers: dict[tuple[str, str], list[str]] = defaultdict(list)
    kills: dict[str, int] = defaultdict(int)
    for mutant, source in mutants:
        if mutant.id in equivalents:
            results.append(Result(mutant, "equivalent"))
            continue
        chosen = select(mutant, infos, by_file, max_tests, uses, source)
        if not chosen:
            results.append(Result(mutant, "uncovered"))
            continue
        # an import-time change reaches every user of the name: it gets a larger share
        share = budget * 3 if budget is not None and mutant.import_time else budget
        queue.append((mutant, source, chosen, share))
    total = len(queue)
    first = progress if not (budget and again_factor) else (lambda d, t, r: r.status == "survived" or progress(d, t, r))
    _run_queue(queue, results, items, infos, killers, kills, workers, tmp, first, total)
    if budget is not None and again_factor:
        # a survivor of the budget gets more: the killer may be a slower test (`make mutate` runs
        # `--again inf`, every test that runs its lines: with few survivors left, a minute or two)
        again = [r for r in results if r.status == "survived"]
        if again:
            print(f"mutate: {len(again)} survived their budget; again with {again_factor} times as much", flush=True)
            results[:] = [r for r in results if r.status != "survived"]
            sources = {m.id: src for m, src in mutants}
            queue = [(r.mutant, sources[r.mutant.id], select(r.mutant, infos, by_file, max_tests, uses,
                                                              sources[r.mutant.id]),
                      again_factor * (budget * 3 if r.mutant.import_time else budget)) for r in again]
            _run_queue(queue, results, items, infos, killers, kills, workers, tmp, progress, len(queue))
    return results


def _run_queue(queue: list, results: list[Result], items: dict[str, pytest.Item], infos: dict[str, TestInfo],
               killers: dict[tuple[str, str], list[str]], kills: dict[str, int], workers: int, tmp: str, progress,
               total: int) -> None:
    running: dict[int, tuple[Mutant, str, list[str], float, float]] = {}
    done = 0
    while queue or running:
        while queue and len(running) < workers:
            mutant, source, chosen, share = queue.pop(0)
            chosen = _order(chosen, mutant, killers, infos, share, kills)
            out = os.path.join(tmp, f"m{len(results) + len(running) + len(queue)}-{os.getpid()}-{time.time_ns()}")
            deadline = 3.0 + 4 * sum(infos[n].seconds for n in chosen)  # a mutant that loops or hangs
            pid = _fork(_child, mutant, source, [items[n] for n in chosen], out)
            running[pid] = (mutant, out, chosen, time.monotonic(), deadline)
        time.sleep(0.002)
        for pid, (mutant, out, chosen, started, deadline) in list(running.items()):
            finished, _status = os.waitpid(pid, os.WNOHANG)
            elapsed = time.monotonic() - started
            if finished == 0 and elapsed < deadline:
                continue
            if finished == 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                result = Result(mutant, "timeout", len(chosen), elapsed, "deadline")
            else:
                text = Path(out).read_text() if os.path.exists(out) else "broken\tno result"
                status, _, detail = text.partition("\t")
                result = Result(mutant, status, len(chosen), elapsed, detail)
            del running[pid]
            if result.status == "killed":
                kills[result.killer] += 1
                for key in ((mutant.file, mutant.qualname), (mutant.file, "")):
                    if result.killer in killers[key]:
                        killers[key].remove(result.killer)
                    killers[key].insert(0, result.killer)
            results.append(result)
            done += 1
            progress(done, total, result)


# ---- the plugin -------------------------------------------------------------------------------------

class MutationPlugin:
    def __init__(self, options: Options) -> None:
        self.options = options
        self.exit_code = 0

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        started = time.monotonic()
        options = self.options
        mutants: list[tuple[Mutant, str]] = []
        for file, source, found in iter_targets(str(ROOT), TARGETS):
            if options.only and options.only not in file:
                continue
            mutants += [(m, source) for m in found if not options.match or options.match in m.id]
        if options.limit:
            mutants = mutants[: options.limit]
        equivalents = read_equivalents()
        for file in TARGETS:  # imported once here, so that every child can put a mutant into it
            importlib.import_module(file.removesuffix(".py").replace("/", "."))
        items = {item.nodeid: item for item in session.items}
        say = print
        say(f"\nmutate: {len(mutants)} mutants in {len({m.file for m, _ in mutants})} files, {len(items)} tests, "
            f"{options.workers} workers")
        with tempfile.TemporaryDirectory(prefix="vigil-mutate-") as tmp:
            infos = measure(list(items.values()), max(4, 2 * options.workers), tmp, options.cache)
            failing = sorted(n for n, i in infos.items() if not i.passed)
            measured = time.monotonic() - started
            say(f"mutate: every test run once under the tracer in {measured:.0f}s"
                + (f"; left out (failed or skipped): {', '.join(failing)}" if failing else ""))

            def progress(done: int, total: int, result: Result) -> None:
                if result.status == "survived" or done % 50 == 0 or done == total:
                    mark = "SURVIVED " if result.status == "survived" else ""
                    say(f"  [{done}/{total} {time.monotonic() - started:.0f}s] {mark}"
                        + (f"{result.mutant.file}:{result.mutant.line} {result.mutant.qualname} {result.mutant.op}: "
                           f"{result.mutant.detail}" if mark else "running"), flush=True)

            slow = sorted(infos.values(), key=lambda i: -i.seconds)[:5]
            say("mutate: slowest tests: " + ", ".join(f"{i.nodeid.split('/')[-1]} {i.seconds:.1f}s" for i in slow))
            results = run_mutants(mutants, items, infos, equivalents, options.workers, tmp, progress,
                                  options.max_tests, options.budget, options.again)
        self.report(results, equivalents, mutants, time.monotonic() - started)
        return True

    def report(self, results: list[Result], equivalents: dict[str, str], mutants: list, seconds: float) -> None:
        counts: dict[str, int] = defaultdict(int)
        for r in results:
            counts[r.status] += 1
        killed = counts["killed"] + counts["timeout"]
        surviving = [r for r in results if r.status in ("survived", "uncovered")]
        broken = [r for r in results if r.status == "broken"]
        equivalent = counts["equivalent"]
        known = {m.id for m, _ in mutants}
        whole = not (self.options.only or self.options.match or self.options.limit)
        stale = sorted(set(equivalents) - known) if whole else []
        per_file: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for r in results:
            per_file[r.mutant.file][r.status] += 1
        print("\nper file (killed / surviving / equivalent):")
        for file, c in sorted(per_file.items()):
            print(f"  {c['killed'] + c['timeout']:4d} / {c['survived'] + c['uncovered']:3d} / {c['equivalent']:3d}  "
                  f"{file}")
        if surviving:
            print(f"\nsurviving mutants ({len(surviving)}):")
            for r in sorted(surviving, key=lambda r: (r.mutant.file, r.mutant.line)):
                tag = "no test runs it" if r.status == "uncovered" else f"{r.tests} tests"
                print(f"  {r.mutant.file}:{r.mutant.line}  [{tag}]\n    {r.mutant.id}")
        if broken:
            print(f"\nmutants that could not be applied ({len(broken)}, not counted):")
            for r in broken:
                print(f"  {r.mutant.id}: {r.killer}")
        if stale:
            print(f"\nequivalent/ names mutants that no longer exist ({len(stale)}):")
            for s in stale:
                print(f"  {s}")
        if self.options.report is not None:
            self.options.report.write_text(json.dumps([
                {"id": r.mutant.id, "file": r.mutant.file, "line": r.mutant.line, "status": r.status,
                 "tests": r.tests, "seconds": round(r.seconds, 3), "killer": r.killer} for r in results], indent=1))
        total = killed + len(surviving) + equivalent
        print(f"\nmutate: {seconds / 60:.1f} min, {counts['timeout']} killed by their deadline")
        print(f"mutation score: {killed}/{total} killed ({len(surviving)} surviving, {equivalent} equivalent)")
        self.exit_code = 1 if surviving or stale or broken else 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    from tests.mutation.scope import TEST_FILES

    parser = argparse.ArgumentParser(prog="python -m tests.mutation", description=__doc__.splitlines()[0])
    # one more than the cores: many of the permission tests wait on hook processes and threads
    parser.add_argument("--workers", type=int, default=(os.cpu_count() or 2) + 1)
    parser.add_argument("--only", help="mutate only files whose path contains this")
    parser.add_argument("--match", help="mutate only mutants whose name contains this")
    parser.add_argument("--limit", type=int, help="the first N mutants only")
    parser.add_argument("--report", type=Path, help="write every mutant's result here (JSON)")
    parser.add_argument("--max-tests", type=int, help="while working: only the N fastest tests per mutant")
    parser.add_argument("--budget", type=float, default=2.0,
                        help="measured seconds of tests per mutant (0: every covering test)")
    parser.add_argument("--again", type=float, default=0,
                        help="run survivors again with this many times the budget (0: no second pass; "
                             "inf: with every test that runs their lines)")
    parser.add_argument("--cache", type=Path, help="while working: reuse test measurements kept here")
    parser.add_argument("tests", nargs="*", help="test files (default: scope.TEST_FILES)")
    args = parser.parse_args(argv)
    plugin = MutationPlugin(Options(args.workers, args.only, args.match, args.report, args.limit, args.max_tests,
                                    args.cache, args.budget or None, args.again))
    os.chdir(ROOT)
    tests = args.tests or [t for t in TEST_FILES if (ROOT / t).exists()]
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "tests.mutation.profile",
                        "--no-header", *tests], plugins=[plugin])
    return plugin.exit_code or (0 if code in (0, pytest.ExitCode.OK) else int(code))
