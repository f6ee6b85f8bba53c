"""Putting one mutant into the running process (a forked child: the parent stays clean).

Only the mutated top-level statement is executed again, in a copy of its module's namespace, and
what it made is put where the old objects are, so every reference already handed out sees it:

* a function (or a method, or anything nested in one): the live function gets the new code
  object (`from x import f` elsewhere, dicts of handlers and bound methods all follow);
* a class body (dataclass defaults, class constants): the new class's attributes are copied onto
  the live class, which keeps its identity (isinstance keeps working);
* a module-level value: the name is rebound in the module, in every module that imported it under
  that name, in function defaults that hold it, and every later top-level assignment of the module
  that uses it is run again (`WRITERS = FS_COMMANDS | …`, `PROGRAMS = {"ls": LS, …}`).

Caches (`functools.lru_cache`) of the target modules are emptied: they hold answers of the
unmutated code.
"""

from __future__ import annotations
import __future__

import ast
import sys
import types
from typing import Any

from tests.mutation.mutants import Mutant, mutated_statement

FLAGS = __future__.annotations.compiler_flag


def module_name(file: str) -> str:
    return file.removesuffix(".py").replace("/", ".")


def _run(stmt: ast.stmt, file: str, namespace: dict[str, Any]) -> None:
    module = ast.Module([stmt], [])
    ast.fix_missing_locations(module)
    exec(compile(module, file, "exec", flags=FLAGS, dont_inherit=True), namespace)


def _function(obj: Any) -> types.FunctionType | None:
    while hasattr(obj, "__wrapped__"):
        obj = obj.__wrapped__
    if isinstance(obj, staticmethod | classmethod):
        obj = obj.__func__
    return obj if isinstance(obj, types.FunctionType) else None


def _patch_function(old: Any, new: Any) -> bool:
    old_fn, new_fn = _function(old), _function(new)
    if old_fn is None or new_fn is None:
        return False
    if old_fn.__code__.co_freevars != new_fn.__code__.co_freevars:
        return False
    old_fn.__code__ = new_fn.__code__
    old_fn.__defaults__ = new_fn.__defaults__
    old_fn.__kwdefaults__ = new_fn.__kwdefaults__
    return True


def _transplant_class(old: type, new: type) -> None:
    for name, value in vars(new).items():
        if name in ("__dict__", "__weakref__", "__module__", "__qualname__", "__doc__"):
            continue
        current = vars(old).get(name)
        if isinstance(value, property) and isinstance(current, property):
            for part in ("fget", "fset", "fdel"):
                if getattr(value, part) is not None and getattr(current, part) is not None:
                    _patch_function(getattr(current, part), getattr(value, part))
            continue
        if current is not None and _patch_function(current, value):
            continue
        setattr(old, name, value)


def _loads(stmt: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stores(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, ast.Assign):
        return {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return {stmt.target.id}
    return set()


def _rebind(module: types.ModuleType, names: set[str], old: dict[str, Any]) -> None:
    """Names of `module` now hold new objects: every other holder of the old ones follows."""
    for name in names:
        new = module.__dict__.get(name)
        before = old.get(name)
        for other in list(sys.modules.values()):
            if other is module or not isinstance(other, types.ModuleType):
                continue
            if not (other.__name__.startswith(("tui_app", "tests")) and other.__dict__.get(name) is before):
                continue
            setattr(other, name, new)
        for other in list(sys.modules.values()):
            if not isinstance(other, types.ModuleType) or not other.__name__.startswith("tui_app"):
                continue
            for value in list(vars(other).values()):
                for holder in (value, *vars(value).values()) if isinstance(value, type) else (value,):
                    fn = _function(holder)
                    if fn is not None and fn.__defaults__ and any(d is before for d in fn.__defaults__):
                        fn.__defaults__ = tuple(new if d is before else d for d in fn.__defaults__)


def apply(mutant: Mutant, source: str) -> None:
    tree = ast.parse(source)
    stmt = mutated_statement(tree, mutant)
    module = sys.modules[module_name(mutant.file)]
    original = tree.body[mutant.stmt_index]
    if isinstance(original, ast.FunctionDef | ast.AsyncFunctionDef):
        scratch = dict(module.__dict__)
        _run(stmt, mutant.file, scratch)
        if not _patch_function(module.__dict__[original.name], scratch[original.name]):
            raise RuntimeError(f"cannot patch {original.name}")
    elif isinstance(original, ast.ClassDef):
        scratch = dict(module.__dict__)
        _run(stmt, mutant.file, scratch)
        _transplant_class(module.__dict__[original.name], scratch[original.name])
    else:
        names = _stores(original)
        old = {n: module.__dict__.get(n) for n in names}
        _run(stmt, mutant.file, module.__dict__)
        changed = set(names)
        # later assignments built from what changed are built again
        for later in tree.body[mutant.stmt_index + 1:]:
            if isinstance(later, ast.Assign | ast.AnnAssign) and _loads(later) & changed:
                stores = _stores(later)
                old.update({n: module.__dict__.get(n) for n in stores})
                _run(later, mutant.file, module.__dict__)
                changed |= stores
        _rebind(module, changed, old)
    clear_caches()


def clear_caches() -> None:
    from tests.mutation.scope import TARGETS

    for file in TARGETS:
        module = sys.modules.get(module_name(file))
        if module is None:
            continue
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()
