"""Whether the value passed for an argument at a call is the loop's step count, read from the caller's source.

A static argument whose values are whole numbers bunched under twice the smallest reads like a statistic of each
batch under a ceiling the data sets (``num_classes = int(y.max()) + 1``: 8, 9, 10). A global step resumed at 1000
(1000, 1001, 1002) is bunched the same way, and in compilation order both count up (a batch maximum is compiled
when first reached, so its values come in rising order too): the values cannot tell them apart. The caller's
source can: the argument is the counter of a loop around the call (``for step in range(start, end)``, the index of
``enumerate``, ``itertools.count``, a name the loop adds a constant to), or a name the loop sets from one before
the call (``global_step = start + i``). Nothing caps a counter: it is no size that follows the data (tenth stop,
t10_jx_resumed_step_log).
"""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import parse_file, argument_at_call

_COUNTING_ITERATORS = frozenset({"range", "count"})
"""``for i in range(...)``, ``for i in itertools.count(start)``: the target counts the iterations."""


def passes_loop_counter(file: str, call_line: int | None, function: str, parameter: str,
                        parameters: list[str] | None = None) -> bool:
    """True when the call at ``file:call_line`` passes, for ``parameter`` of ``function``, an expression of a
    counter of a loop around that call; False when the source is not on disk, the call or the argument is not
    found, or the value is made otherwise (a batch's statistic, a setting). ``parameters``: the function's
    positional parameter names, to map a positional argument."""
    found = argument_at_call(file, call_line, function, parameter, parameters)
    if found is None:
        return False
    scope, passed = found
    # the innermost loop's counter: an outer loop's (an epoch number passed as `stage = epoch` to every batch's
    # call) takes each value for a whole inner loop, a few compilations in all, not one per call (the tenth stop's
    # last read: told "every call compiles again, without end")
    loops = _loops_around(scope, call_line)[-1:]
    counters = _counters_of(loops[0]) if loops else set()
    if not counters:
        return False
    if not _arithmetic(passed):
        return False
    names = _names(passed)
    if names & counters:
        return True
    # one step of assignment: `global_step = start + i` in the loop body, before the call
    for loop in loops:
        for node in ast.walk(loop):
            if isinstance(node, ast.Assign) and node.lineno < call_line and _arithmetic(node.value) and \
                    _names(node.value) & counters and \
                    any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
                return True
    return False


def _loops_around(scope: ast.AST, line: int) -> list[ast.AST]:
    """The loops of ``scope`` (not of functions defined in it) whose body holds ``line``, outermost first."""
    found = []
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and node.body and \
                node.body[0].lineno <= line <= (node.end_lineno or node.lineno):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda n: n.lineno)


def _counters_of(loop: ast.AST) -> set[str]:
    """The names a loop counts with: a ``range``/``count`` loop's target, ``enumerate``'s index, and a name the body
    adds a constant to (``step += 1``)."""
    found: set[str] = set()
    if isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.iter, ast.Call):
        called = _called(loop.iter)
        if called in _COUNTING_ITERATORS and isinstance(loop.target, ast.Name):
            found.add(loop.target.id)
        elif called == "enumerate" and isinstance(loop.target, ast.Tuple) and loop.target.elts and \
                isinstance(loop.target.elts[0], ast.Name):
            found.add(loop.target.elts[0].id)
    for node in ast.walk(loop):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)) and \
                isinstance(node.target, ast.Name) and isinstance(node.value, ast.Constant) and \
                isinstance(node.value.value, int) and not isinstance(node.value.value, bool):
            found.add(node.target.id)
    return found


def _called(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _arithmetic(expr: ast.AST) -> bool:
    """Names and numbers joined by + - * // (``step``, ``start + i``, ``epoch * steps + i``): the counter moved or
    scaled, still counting. A lookup (``schedule[step]``), a call (``min(step, 100)``) or an attribute is not."""
    allowed = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Load, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv,
               ast.USub, ast.UAdd)
    return all(isinstance(n, allowed) for n in ast.walk(expr))


def _names(expr: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def calls_in_loops_around(file: str, line: int | None, names: tuple[str, ...]) -> list[int]:
    """Lines, in a loop whose body holds ``line``, that call one of ``names`` by its plain or attribute name
    (``jax.clear_caches()`` in the epoch loop around the step's call), in line order; empty when the file is not on
    disk. A call after the loop (once, at the end of training) is no reason for a recompilation inside it."""
    tree = parse_file(file)
    if tree is None or line is None:
        return []
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))
             and n.lineno <= line <= (n.end_lineno or n.lineno)]
    return sorted({c.lineno for loop in loops for c in ast.walk(loop) if isinstance(c, ast.Call)
                   and (c.func.id if isinstance(c.func, ast.Name) else
                        c.func.attr if isinstance(c.func, ast.Attribute) else None) in names})
