"""Where a loop carries a tensor into its next iteration: ``center = 0.9 * center + 0.1 * f.mean(0)``.

A tensor rebound from itself in a training loop, with no ``.detach()``, keeps the autograd history of every earlier
step: each step's graph traces them again and grows (fix row ``history_carried``). The ops torch_xla records are
where the history is walked (``loss.backward()``, ``opt.step()``), not where it is kept; the user's file, on disk,
shows the assignment that keeps it.
"""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import tree_if_present

_CUTS_HISTORY = frozenset({"detach", "detach_", "item", "tolist", "cpu", "numpy"})
"""Calls that leave no autograd history on the value they return (or no tensor at all)."""


def carried_without_detach(file: str, line: int | None) -> list[int] | None:
    """Lines of the innermost loop around ``line`` that rebind a name from its own value (``x = f(x)``,
    ``x += y``) with no call that cuts the history, the name bound before the loop too (carried, not made anew each
    iteration); in line order. None when the file is not on disk."""
    tree = tree_if_present(file) if line is not None else None
    if tree is None:
        return None
    loop = _innermost_loop(tree, line)
    if loop is None:
        return []
    before = _bound_before(tree, loop)
    found = []
    for node in _walk_body(loop):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            name, value = node.target.id, node.value
            if name in before and not _cuts(value):
                found.append(node.lineno)
            continue
        else:
            continue
        reads = any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(value))
        if reads and name in before and not _cuts(value):
            found.append(node.lineno)
    return sorted(set(found))


def _cuts(value: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _CUTS_HISTORY
               for n in ast.walk(value))


def _innermost_loop(tree: ast.Module, line: int):
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and node.lineno <= line <= (node.end_lineno or 0):
            if best is None or node.lineno > best.lineno:
                best = node
    return best


def _walk_body(loop):
    """The loop body's nodes, nested loops and blocks included, function and class bodies left out."""
    stack = list(loop.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.With) and any("no_grad" in ast.unparse(i.context_expr) for i in node.items):
            continue  # updated under torch.no_grad(): no history kept
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _bound_before(tree: ast.Module, loop) -> set[str]:
    """Plain names bound by an assignment (or a loop's target) before ``loop`` starts."""
    names = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", loop.lineno) >= loop.lineno:
            continue
        if isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names
