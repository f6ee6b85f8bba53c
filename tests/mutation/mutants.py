"""Mutants: one small change each to the source of a target file, found by walking its AST.

A mutant is named by where it is and what it changes, not by its line number, so that the list of
equivalent mutants survives edits elsewhere in the file:

    tui_app/runtime/permissions/rules.py::governs::cmp::rule_tool == "Edit" → !=

The operators change what a security check decides, not how it is spelled:

    cmp    a comparison turned around (== !=, < >=, in / not in, is / is not)
    bool   one operand of `and` / `or` dropped
    not    a `not` dropped
    if     an `if` that is never taken
    del    a statement left out (a call, an assignment to an attribute or item, a bare
           return, continue, break, raise, +=)
    ret    `return X` → `return None`
    const  True ↔ False; a number n → n + 1 (and 1 → 0)
    str    a string compared with, or given to a string method (startswith, rstrip …) → ""
    elem   one element out of a literal list, tuple, set or dict of constants, or one word out
           of `_s("…")`
    op     `x + "sep"` → `x`; `a | b`, `a & b`, `a - b` → `a`
    call   any ↔ all, max ↔ min
    filter a comprehension's `if` dropped
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import dataclass

from tests.mutation.scope import ALLOW_LIST_CALLS, UNMUTATED_NAMES

STR_METHODS = frozenset({"startswith", "endswith", "removeprefix", "removesuffix", "partition", "split", "rsplit",
                         "rstrip", "lstrip", "strip", "count", "find", "replace", "join"})
CMP_SWAP = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
            ast.LtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
CMP_TEXT = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.GtE: ">=", ast.Gt: ">", ast.LtE: "<=",
            ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
CALL_SWAP = {"any": "all", "all": "any", "max": "min", "min": "max"}
TYPING_FORMS = frozenset({"Literal", "Annotated", "Optional", "Union", "Callable"})
DELETABLE = (ast.Expr, ast.Continue, ast.Break, ast.Raise, ast.AugAssign)


@dataclass
class Mutant:
    file: str
    #: the function or class it is in ("<module>" for top-level statements)
    qualname: str
    op: str
    #: what changes, in words (original → replacement)
    detail: str
    line: int
    end_line: int
    #: index of the top-level statement, the path to the node in it, and the change
    stmt_index: int
    path: tuple[tuple[str, int | None], ...]
    change: tuple = ()
    #: the node is only run at import (module level, class body): any test of the file may kill it
    import_time: bool = False
    occurrence: int = 0

    @property
    def id(self) -> str:
        suffix = f" #{self.occurrence + 1}" if self.occurrence else ""
        return f"{self.file}::{self.qualname}::{self.op}::{self.detail}{suffix}"


def _seg(source: str, node: ast.AST, limit: int = 70) -> str:
    text = ast.get_source_segment(source, node) or ast.unparse(node)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_docstring(node: ast.AST, parent: ast.AST | None) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))


class _Finder:
    def __init__(self, file: str, source: str, allowed: tuple[str, ...] | None) -> None:
        self.file, self.source, self.allowed = file, source, allowed
        self.found: list[Mutant] = []

    # ---- walking ----------------------------------------------------------------------------

    def run(self, tree: ast.Module) -> list[Mutant]:
        for index, stmt in enumerate(tree.body):
            self.stmt_index = index
            self._walk(stmt, (), "<module>", import_time=True, assigned=_assigned_names(stmt))
        counts: dict[str, int] = {}
        for mutant in self.found:
            key = mutant.id
            mutant.occurrence = counts.get(key, 0)
            counts[key] = mutant.occurrence + 1
        return self.found

    def _in_scope(self, qualname: str) -> bool:
        if self.allowed is None:
            return True
        return any(qualname == a or qualname.startswith(a + ".") for a in self.allowed)

    def _walk(self, node: ast.AST, path: tuple, qualname: str, import_time: bool, assigned: frozenset[str]) -> None:
        if isinstance(node, ast.Assert | ast.ImportFrom | ast.Import):
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = node.name if qualname == "<module>" else f"{qualname}.{node.name}"
            is_function = not isinstance(node, ast.ClassDef)
            for fname, value in ast.iter_fields(node):
                if fname in ("returns", "decorator_list", "type_params"):
                    continue
                if fname == "args":
                    self._walk_arguments(value, (*path, ("args", None)), inner, import_time)
                    continue
                self._walk_field(node, fname, value, path, inner, import_time and not is_function, assigned)
            return
        if isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self._visit_and_walk(node.value, (*path, ("value", None)), qualname, import_time, assigned)
            return
        if isinstance(node, ast.Assign) and qualname == "<module>" and assigned & UNMUTATED_NAMES:
            return
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ALLOW_LIST_CALLS):
            skip = ALLOW_LIST_CALLS[node.func.id]
            for i, kw in enumerate(node.keywords):
                if kw.arg not in skip:
                    self._visit_and_walk(kw.value, (*path, ("keywords", i), ("value", None)), qualname, import_time,
                                         assigned)
            return
        for fname, value in ast.iter_fields(node):
            self._walk_field(node, fname, value, path, qualname, import_time, assigned)

    def _walk_arguments(self, args: ast.arguments, path: tuple, qualname: str, import_time: bool) -> None:
        # default values run when the def does (import time); annotations are never mutated
        for fname in ("defaults", "kw_defaults"):
            for i, value in enumerate(getattr(args, fname)):
                if value is not None:
                    self._visit_and_walk(value, (*path, (fname, i)), qualname, True, frozenset())

    def _walk_field(self, node: ast.AST, fname: str, value: object, path: tuple, qualname: str,
                    import_time: bool, assigned: frozenset[str]) -> None:
        if fname in ("annotation", "returns", "type_comment"):
            return
        if isinstance(value, list):
            for i, child in enumerate(value):
                if isinstance(child, ast.AST):
                    if isinstance(child, ast.stmt) and _is_docstring(child, node):
                        continue
                    self._visit_and_walk(child, (*path, (fname, i)), qualname, import_time, assigned)
        elif isinstance(value, ast.AST):
            self._visit_and_walk(value, (*path, (fname, None)), qualname, import_time, assigned)

    def _visit_and_walk(self, node: ast.AST, path: tuple, qualname: str, import_time: bool,
                        assigned: frozenset[str]) -> None:
        if isinstance(node, ast.JoinedStr):
            return  # messages
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in TYPING_FORMS:
            return  # a type (`Behavior = Literal["allow", …]`), not a value the code decides with
        if self._in_scope(qualname) and not isinstance(node, ast.Assert):
            self._visit(node, path, qualname, import_time)
        self._walk(node, path, qualname, import_time, assigned)

    # ---- operators ----------------------------------------------------------------------------

    def _add(self, node: ast.AST, path: tuple, qualname: str, import_time: bool, op: str, detail: str,
             change: tuple) -> None:
        self.found.append(Mutant(self.file, qualname, op, detail, node.lineno, node.end_lineno or node.lineno,
                                 self.stmt_index, path, change, import_time))

    def _visit(self, node: ast.AST, path: tuple, qualname: str, t: bool) -> None:
        s = self.source
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                swapped = CMP_SWAP.get(type(op))
                if swapped is not None:
                    self._add(node, path, qualname, t, "cmp",
                              f"{_seg(s, node)} [{CMP_TEXT[type(op)]} → {CMP_TEXT[swapped]}]", ("cmp", i))
            for i, operand in enumerate([node.left, *node.comparators]):
                if isinstance(operand, ast.Constant) and isinstance(operand.value, str) and operand.value:
                    self._add(node, path, qualname, t, "str", f"{_seg(s, node)} [{operand.value!r} → '']",
                              ("cmp_str", i))
        elif isinstance(node, ast.BoolOp):
            for i, value in enumerate(node.values):
                self._add(node, path, qualname, t, "bool", f"{_seg(s, node)} [drop {_seg(s, value, 40)}]",
                          ("drop", i))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self._add(node, path, qualname, t, "not", f"{_seg(s, node)} [drop not]", ("unnot",))
        elif isinstance(node, ast.If):
            self._add(node, path, qualname, t, "if", f"if {_seg(s, node.test)} [never]", ("never",))
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                self._add(node, path, qualname, t, "const", f"{node.value} → {not node.value}",
                          ("const", not node.value))
            elif isinstance(node.value, int):
                self._add(node, path, qualname, t, "const", f"{node.value} → {node.value + 1}",
                          ("const", node.value + 1))
                if node.value == 1:
                    self._add(node, path, qualname, t, "const", "1 → 0", ("const", 0))
        elif isinstance(node, ast.Call):
            self._visit_call(node, path, qualname, t)
        elif isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Add):
                for side in ("left", "right"):
                    value = getattr(node, side)
                    if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value:
                        self._add(node, path, qualname, t, "op", f"{_seg(s, node)} [drop {value.value!r}]",
                                  ("keep", "right" if side == "left" else "left"))
            elif isinstance(node.op, ast.BitOr | ast.BitAnd | ast.Sub) and not _numeric(node):
                self._add(node, path, qualname, t, "op", f"{_seg(s, node)} [drop {_seg(s, node.right, 40)}]",
                          ("keep", "left"))
        elif isinstance(node, ast.List | ast.Tuple | ast.Set) and isinstance(getattr(node, "ctx", ast.Load()),
                                                                            ast.Load):
            if node.elts and all(isinstance(e, ast.Constant) for e in node.elts):
                for i, e in enumerate(node.elts):
                    self._add(node, path, qualname, t, "elem", f"{_seg(s, node, 50)} [drop {e.value!r}]",
                              ("elem", i))
        elif isinstance(node, ast.Dict):
            if node.keys and all(isinstance(k, ast.Constant) for k in node.keys):
                for i, k in enumerate(node.keys):
                    self._add(node, path, qualname, t, "elem", f"{_seg(s, node, 50)} [drop key {k.value!r}]",
                              ("elem", i))
        elif isinstance(node, ast.comprehension):
            for i, cond in enumerate(node.ifs):
                self._add(cond, path, qualname, t, "filter", f"if {_seg(s, cond)} [dropped]", ("filter", i))
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            self._add(node, path, qualname, t, "ret", f"return {_seg(s, node.value)} [→ None]", ("ret_none",))
        if isinstance(node, ast.stmt) and _deletable(node):
            self._add(node, path, qualname, t, "del", f"{_seg(s, node)} [left out]", ("delete",))

    def _visit_call(self, node: ast.Call, path: tuple, qualname: str, t: bool) -> None:
        s = self.source
        func = node.func
        if isinstance(func, ast.Name) and func.id in CALL_SWAP:
            self._add(node, path, qualname, t, "call", f"{_seg(s, node)} [{func.id} → {CALL_SWAP[func.id]}]",
                      ("rename", CALL_SWAP[func.id]))
        if isinstance(func, ast.Attribute) and func.attr in STR_METHODS:
            for i, arg in enumerate(node.args):
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value:
                    self._add(node, path, qualname, t, "str", f"{_seg(s, node)} [{arg.value!r} → '']", ("arg_str", i))
                elif isinstance(arg, ast.Tuple) and arg.elts and all(isinstance(e, ast.Constant) for e in arg.elts):
                    for j, e in enumerate(arg.elts):
                        self._add(node, path, qualname, t, "elem", f"{_seg(s, node, 50)} [drop {e.value!r}]",
                                  ("arg_elem", i, j))
        if (isinstance(func, ast.Name) and func.id == "_s" and len(node.args) == 1
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            for word in node.args[0].value.split():
                self._add(node, path, qualname, t, "elem", f"_s(…) [drop {word!r}]", ("word", word))


def _numeric(node: ast.BinOp) -> bool:
    return any(isinstance(v, ast.Constant) and isinstance(v.value, int | float) for v in (node.left, node.right))


def _deletable(node: ast.stmt) -> bool:
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Call | ast.Await)
    if isinstance(node, ast.Assign):
        return all(isinstance(t, ast.Attribute | ast.Subscript) for t in node.targets)
    if isinstance(node, ast.Return):
        return node.value is None  # an early exit; `return X` is the `ret` operator's
    return isinstance(node, DELETABLE)


def _assigned_names(stmt: ast.stmt) -> frozenset[str]:
    if isinstance(stmt, ast.Assign):
        return frozenset(t.id for t in stmt.targets if isinstance(t, ast.Name))
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return frozenset({stmt.target.id})
    return frozenset()


def find_mutants(file: str, source: str, allowed: tuple[str, ...] | None = None) -> list[Mutant]:
    return _Finder(file, source, allowed).run(ast.parse(source))


# ---- applying one to the AST ---------------------------------------------------------------------

def _get(node: ast.AST, step: tuple[str, int | None]) -> ast.AST:
    fname, index = step
    value = getattr(node, fname)
    return value[index] if index is not None else value


def _set(node: ast.AST, step: tuple[str, int | None], new: ast.AST) -> None:
    fname, index = step
    if index is None:
        setattr(node, fname, new)
    else:
        getattr(node, fname)[index] = new


def mutated_statement(tree: ast.Module, mutant: Mutant) -> ast.stmt:
    """A copy of the mutant's top-level statement with the change made."""
    stmt = copy.deepcopy(tree.body[mutant.stmt_index])
    if not mutant.path:
        parent, step, node = None, None, stmt
    else:
        parent = stmt
        for step in mutant.path[:-1]:
            parent = _get(parent, step)
        step = mutant.path[-1]
        node = _get(parent, step)
    new = _changed(node, mutant.change)
    if parent is None:
        return new if new is not None else ast.Pass()
    if new is None:
        fname, index = step  # type: ignore[misc]
        items = getattr(parent, fname)
        del items[index]
        if not items:
            items.append(ast.Pass())
    else:
        _set(parent, step, new)  # type: ignore[arg-type]
    return stmt


def _changed(node: ast.AST, change: tuple) -> ast.AST | None:
    kind = change[0]
    if kind == "cmp":
        node.ops[change[1]] = CMP_SWAP[type(node.ops[change[1]])]()
    elif kind == "cmp_str":
        operands = [node.left, *node.comparators]
        operands[change[1]] = ast.Constant("")
        node.left, node.comparators = operands[0], operands[1:]
    elif kind == "drop":
        values = [v for i, v in enumerate(node.values) if i != change[1]]
        return values[0] if len(values) == 1 else ast.BoolOp(node.op, values)
    elif kind == "unnot":
        return node.operand
    elif kind == "never":
        node.test = ast.Constant(False)
    elif kind == "const":
        return ast.Constant(change[1])
    elif kind == "keep":
        return getattr(node, change[1])
    elif kind == "elem":
        if isinstance(node, ast.Dict):
            del node.keys[change[1]]
            del node.values[change[1]]
        else:
            del node.elts[change[1]]
    elif kind == "filter":
        del node.ifs[change[1]]
    elif kind == "ret_none":
        node.value = ast.Constant(None)
    elif kind == "delete":
        return None
    elif kind == "rename":
        node.func = ast.Name(change[1], ast.Load())
    elif kind == "arg_str":
        node.args[change[1]] = ast.Constant("")
    elif kind == "arg_elem":
        del node.args[change[1]].elts[change[2]]
    elif kind == "word":
        words = node.args[0].value.split()
        words.remove(change[1])
        node.args[0] = ast.Constant(" ".join(words))
    return node


def iter_targets(root: str, targets: dict[str, tuple[str, ...] | None]) -> Iterator[tuple[str, str, list[Mutant]]]:
    import os

    for file, allowed in targets.items():
        with open(os.path.join(root, file), encoding="utf-8") as handle:
            source = handle.read()
        yield file, source, find_mutants(file, source, allowed)
