"""Whether a line that uploads to the device uses what the host worked out from a read earlier in the step: the
names bound from the read's statement (``idx = np.argsort(-per.cpu().numpy())[:k]``, ``grads = [p.grad.cpu() for
p in params]``), and every name later bound from those, up to the upload's line (``torch.from_numpy(idx).to(dev)``,
``p.grad = (g * scale).to(dev)``). An upload that uses none of them (a NaN guard's ``loss.item()``, then a target
drawn with NumPy and sent with ``.to(dev)``) sends the host's own data, not the read's (stop 51: that look-alike was
told "what the host works out from it comes back").

Read from the user's file when it is on disk (None without it: the caller keeps what the reports alone say)."""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import tree_if_present


def upload_uses_read(file: str, read_line: int, upload_line: int) -> bool | None:
    """True when the statement on ``upload_line`` reads a name bound, directly or through later assignments, from
    the statement on ``read_line`` of the same function; None when the file is not on disk."""
    tree = tree_if_present(file)
    if tree is None:
        return None
    scope = _scope_of(tree, read_line)
    read = _statement_at(scope, read_line)
    upload = _statement_at(scope, upload_line)
    if read is None or upload is None:
        return None
    tainted = _bound_by(read, read_line)
    for stmt in sorted(_statements(scope), key=lambda s: s.lineno):
        if read_line < stmt.lineno < upload_line and _reads_any(_value_of(stmt), tainted):
            tainted |= _bound_by(stmt, stmt.lineno)
    return _reads_any(upload, tainted)


def _scope_of(tree: ast.Module, line: int) -> ast.AST:
    best: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= line <= (node.end_lineno or node.lineno) and (best is tree or node.lineno >= best.lineno):
            best = node
    return best


def _statements(scope: ast.AST):
    return (n for n in ast.walk(scope) if isinstance(n, ast.stmt) and n is not scope
            and not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))


def _statement_at(scope: ast.AST, line: int) -> ast.stmt | None:
    """The innermost statement covering ``line`` (a compound one only by its header)."""
    best = None
    for stmt in _statements(scope):
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) and (best is None or stmt.lineno >= best.lineno):
            best = stmt
    return best


def _value_of(stmt: ast.stmt) -> ast.AST | None:
    """What a statement computes its bindings from: an assignment's value, a loop's iterable, a call's arguments."""
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return stmt.value
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return stmt.iter
    if isinstance(stmt, ast.Expr):
        return stmt.value
    return None


def _bound_by(stmt: ast.stmt, line: int) -> set[str]:
    """Names a statement binds from its value: targets, a loop's targets, the object of ``xs.append(v)``."""
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
            isinstance(stmt.value.func, ast.Attribute):
        targets = [stmt.value.func.value]  # hard.append(idx), buf.extend(...)
    else:
        return set()
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _reads_any(node: ast.AST | None, names: set[str]) -> bool:
    return node is not None and bool(names) and any(
        isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) for n in ast.walk(node))
