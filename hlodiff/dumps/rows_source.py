"""How the rows of a call's arguments are cut, read from the user's file: a range slice (``data[i:i + B]``: a
batch, whose last one is the epoch's remainder) or a boolean or index array (``x[keep]``, ``pool[labels !=
label]``: rows kept by a filter, as many as the data holds). JAX logs compilations only, so a leading dimension
that shrank says neither by itself: arrays filtered together on the host (``step(w, x[keep], y[keep])``: 16 rows
then 15 mid-run) lose the same rows as a batch's do, and a one-array batch (an LM's tokens) has no sibling to
shrink with it (stop 51, the look-alikes of review 23's rule).

Read from the user's file when it is on disk (never required: without it the answer is "")."""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import tree_if_present

_DEPTH = 3
"""How many assignments back a name is followed (``x = x.reshape(...)`` after ``x = data[i:i + B]``)."""


def rows_cut_by(file: str, line: int | None) -> str:
    """``filter`` when an argument of a call on ``file:line`` (or the value assigned there) is made by indexing
    with an array or a comparison; ``slice`` when one is a slice with a bound that varies (``i:i + B``) and none is
    filtered; "" when neither is seen or no file is on disk."""
    tree = tree_if_present(file) if line is not None else None
    if tree is None:
        return ""
    scope = _scope_of(tree, line)
    found: set[str] = set()
    for node in ast.walk(scope):
        if getattr(node, "lineno", None) != line:
            continue
        if isinstance(node, ast.Call):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                found |= _cuts(arg, scope, line, _DEPTH)
        elif isinstance(node, ast.Assign):
            found |= _cuts(node.value, scope, line + 1, _DEPTH)
    return "filter" if "filter" in found else "slice" if "slice" in found else ""


def _scope_of(tree: ast.Module, line: int) -> ast.AST:
    """The innermost function holding ``line``, else the module."""
    best: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is tree or node.lineno >= best.lineno:
                best = node
    return best


def _cuts(expr: ast.AST, scope: ast.AST, before: int, depth: int) -> set[str]:
    """The kinds of row cuts ``expr`` makes, following the names it reads to their last assignment before
    ``before``."""
    found: set[str] = set()
    for node in ast.walk(expr):
        if isinstance(node, ast.Subscript):
            kind = _subscript_kind(node.slice)
            if kind:
                found.add(kind)
        elif isinstance(node, ast.Name) and depth > 0:
            value, at = _assigned(scope, node.id, before)
            if value is not None:
                found |= _cuts(value, scope, at, depth - 1)
    return found


def _subscript_kind(index: ast.AST) -> str:
    """``slice`` for ``i:i + B``; ``filter`` for a comparison, a name (an index or mask array) or a call; ""
    for constants (``[:200]``, ``[0]``) and tuples of them."""
    if isinstance(index, ast.Slice):
        bounds = [b for b in (index.lower, index.upper) if b is not None]
        return "slice" if any(not isinstance(b, ast.Constant) and not _negative(b) for b in bounds) else ""
    if isinstance(index, ast.Tuple):
        kinds = {_subscript_kind(e) for e in index.elts[:1]}  # the rows: the first axis only
        return next(iter(kinds - {""}), "")
    if isinstance(index, (ast.Compare, ast.BoolOp, ast.Call, ast.List)) or \
            (isinstance(index, ast.UnaryOp) and isinstance(index.op, (ast.Not, ast.Invert))) or \
            (isinstance(index, ast.BinOp) and isinstance(index.op, (ast.BitAnd, ast.BitOr))):
        return "filter"
    if isinstance(index, ast.Name):
        return "filter" if _mask_name(index.id) else ""
    return ""


def _mask_name(name: str) -> bool:
    """A name indexing rows that is no loop counter (``i``, ``step``, ``idx``: one row, not a set of them)."""
    return name not in ("i", "j", "k", "n", "b", "t", "idx", "step", "epoch", "index")


def _negative(node: ast.AST) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)


def _assigned(scope: ast.AST, name: str, before: int) -> tuple[ast.AST | None, int]:
    """The value last assigned to ``name`` in ``scope`` on a line before ``before`` (a tuple target's own
    element), and that line."""
    best: tuple[ast.AST | None, int] = (None, 0)
    for node in ast.walk(scope):
        if not isinstance(node, ast.Assign) or node.lineno >= before or node.lineno < best[1]:
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id == name:
                best = (node.value, node.lineno)
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and \
                    len(target.elts) == len(node.value.elts):
                for t, v in zip(target.elts, node.value.elts):
                    if isinstance(t, ast.Name) and t.id == name:
                        best = (v, node.lineno)
    return best
