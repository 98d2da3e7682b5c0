"""Whether a compiled function's Python number only steers its Python control flow (new-user review 17, F1).

``if step % 3 == 0: print(...)`` inside a function compiled by Dynamo: Dynamo guards ``step`` by value and traces
the function once per step. A tensor cannot steer a Python ``if``: passed as ``torch.tensor(step)``, the guard
becomes a data-dependent branch, a graph break and a host read on every call. Only the source tells whether the
number also feeds tensor math (where a tensor does serve every value), so the file is read when it is on disk
(never required: a moved or scrubbed path gives False, and the fix stays the general one).
"""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import tree_if_present

_LOGGING = frozenset({"print", "log", "info", "debug", "warning", "warn", "error", "write", "print_", "pprint"})
"""Calls that only report (``print``, ``logger.info``, ``sys.stdout.write``): a number read there feeds no tensor."""


def steers_only_branches(file: str, function: str, name: str) -> bool:
    """Whether every read of ``name`` (a parameter of ``function`` in ``file``) inside that function is in an
    ``if``/``while`` test or in the arguments of a call that only reports (``print``, ``logger.info``), with at least
    one test: the number decides Python control flow and feeds no tensor op. False when the file is not on disk,
    ``function`` is not defined there exactly once, it does not take ``name``, or the body assigns ``name``."""
    tree = tree_if_present(file)
    if tree is None:
        return False
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == function]
    if len(defs) != 1:
        return False
    fn = defs[0]
    a = fn.args
    if name not in {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}:
        return False
    allowed: set[int] = set()  # ids of Name nodes read in a test or a report
    tested = False
    for node in ast.walk(fn):
        if isinstance(node, (ast.If, ast.While)):
            reads = _reads(node.test, name)
            if reads and not _only_reports(node):
                return False  # the branch does work of its own (`out = out * 0.5`): moving it out changes the result
            tested = tested or bool(reads)
            allowed.update(reads)
        elif isinstance(node, ast.Call) and _reports(node.func):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                allowed.update(_reads(arg, name))
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name]
    if any(not isinstance(n.ctx, ast.Load) for n in uses):
        return False  # assigned in the body: a counter kept inside has its own row
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and n is not fn
           and _reads(n, name) for n in ast.walk(fn)):
        return False  # read in a nested function: what it does with the number is not followed
    return tested and bool(uses) and all(id(n) in allowed for n in uses)


def _only_reports(branch: ast.If | ast.While) -> bool:
    """Whether every statement of the branch's bodies (``else``/``elif`` included) only reports (a print, a log
    call) or does nothing (``pass``; ``break`` ending a ``while`` of reports): only then can the branch and what it
    does move out of the compiled function (the eleventh stop's read: ``if step % 3 == 0: out = out * 0.5`` was
    told to move out)."""
    def quiet(stmt: ast.stmt, loop: bool) -> bool:
        if isinstance(stmt, ast.Pass) or (loop and isinstance(stmt, ast.Break)):
            return True
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            return _reports(stmt.value.func)
        if isinstance(stmt, ast.If):
            return all(quiet(s, loop) for s in stmt.body + stmt.orelse)
        return False
    loop = isinstance(branch, ast.While)
    return all(quiet(s, loop) for s in branch.body + branch.orelse)


def _reads(node: ast.AST, name: str) -> set[int]:
    return {id(n) for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)}


def _reports(func: ast.AST) -> bool:
    """``print(...)``, ``logger.info(...)``, ``sys.stdout.write(...)``: a call that only reports."""
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return last in _LOGGING
