"""A user's source file, read when it is still on disk: parameter names of a function, where an argument was made.

JAX names a changed static argument only by its path in ``(args, kwargs)`` (``[0][1]``: positional argument 1);
the user knows it as ``n_layers``. JAX's log says where the function is defined, so the name is one parse of that
file away. The file is only read (never required: a moved or scrubbed path gives None) and bounded in size.
"""

from __future__ import annotations

import ast
from pathlib import Path

from hlodiff.dumps.source_paths import note_missing, on_disk, where_now

_MAX_BYTES = 2_000_000


def parameter_names(file: str, line: int | None) -> list[str] | None:
    """Positional parameter names of the function defined (or decorated) at ``file:line``; None when unknown."""
    if line is None:
        return None
    tree = parse_file(file)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            starts = {node.lineno} | {d.lineno for d in node.decorator_list}
            if line in starts:
                a = node.args
                return [p.arg for p in a.posonlyargs + a.args]
    return None


def argument_made_at(file: str, call_line: int | None, function: str, parameter: str,
                     parameters: list[str] | None = None) -> int | None:
    """The line that last assigned the variable passed as ``parameter`` of ``function`` in the call at
    ``file:call_line``, before that call and in the same function body (``labels = labels * 1.0`` two lines above
    ``loss_fn(w, x, labels)``); None when the source is not on disk, the call is not found there, or the argument
    is no plain name (an expression is made on the call's own line). ``parameters``: the function's positional
    parameter names, to map a positional argument to ``parameter``."""
    found = argument_at_call(file, call_line, function, parameter, parameters)
    if found is None or not isinstance(found[1], ast.Name):
        return None
    scope, passed = found
    return _loop_carried(scope, passed.id, call_line) or _last_assignment(scope, passed.id, call_line)


def argument_at_call(file: str, call_line: int | None, function: str, parameter: str,
                     parameters: list[str] | None = None) -> tuple[ast.AST, ast.expr] | None:
    """The function body holding the call of ``function`` at ``file:call_line`` and the expression it passes for
    ``parameter``: what :func:`argument_made_at` and the loop-counter check both start from. None when the source
    is not on disk, or the call or the argument is not found there."""
    tree = parse_file(file)
    if tree is None or call_line is None:
        return None
    scope, call = _call_on_line(tree, call_line, function)
    if call is None:
        return None
    passed = passed_argument(call, parameter, parameters, tree, function)
    return None if passed is None else (scope, passed)


def passed_argument(call: ast.Call, parameter: str, parameters: list[str] | None, tree: ast.Module,
                    function: str) -> ast.expr | None:
    """The expression ``call`` passes for ``parameter`` of ``function``: by keyword, or by position from
    ``parameters`` (the function's positional parameter names; None: read from its ``def`` in ``tree``, the jitted
    function defined in the calling file); None when not passed, or past a ``*args``."""
    passed = next((k.value for k in call.keywords if k.arg == parameter), None)
    if passed is not None:
        return passed
    if parameters is None:  # the jitted function defined in the calling file
        parameters = next(([p.arg for p in n.args.posonlyargs + n.args.args] for n in ast.walk(tree)
                           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == function), None)
    if not parameters or parameter not in parameters:
        return None
    index = parameters.index(parameter)
    if index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return call.args[index]
    return None


def _loop_carried(scope: ast.AST, name: str, call_line: int) -> int | None:
    """The line after the call, in the innermost loop around it, that rebinds ``name`` for the next iteration
    (``ids = jnp.concatenate([ids, nxt], axis=1)`` below ``forward(params, ids)``), when nothing in that loop rebinds
    it before the call: from the second iteration on, that line made the argument, not the one before the loop
    (review 5, F2). The call's own line when it rebinds ``name`` itself and no later line does (``params =
    train_step(params, x)``): from the second iteration on the call made its own argument, not the line that
    first set it before the loop. None outside a loop, or when the loop body makes the value before the call (a
    prompt per iteration)."""
    loop = None
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and \
                node.body[0].lineno <= call_line <= (node.end_lineno or node.lineno):
            loop = node  # deeper loops are pushed later, popped after: the innermost wins
        stack.extend(ast.iter_child_nodes(node))
    if loop is None:
        return None
    start = loop.body[0].lineno
    lines = []
    for stmt in loop.body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                break
            line = getattr(node, "lineno", None)
            if line is not None and any(_binds(t, name) for t in _targets(node)):
                lines.append(line)
    if any(start <= line < call_line for line in lines):
        return None
    after = [line for line in lines if line >= call_line]
    return max(after) if after else None


GROWING_CALLS = frozenset({"concatenate", "concat", "cat", "append", "hstack", "vstack", "column_stack", "dstack"})


def fed_its_own_concatenation(file: str, line: int | None) -> bool:
    """The statement at ``file:line`` rebinds a name to a concatenation that includes that name (``tokens =
    jnp.concatenate([tokens, nxt], axis=1)``) inside a loop: the value grows on every iteration, whatever a capture
    of compilations alone can show (review 8, F9: a decoding prefix told "pad to a few fixed sizes"). False when
    the source is not on disk."""
    if line is None:
        return False
    tree = parse_file(file)
    if tree is None:
        return False
    for loop in ast.walk(tree):
        if not isinstance(loop, (ast.For, ast.While, ast.AsyncFor)):
            continue
        for node in ast.walk(loop):
            if not isinstance(node, ast.Assign) or node.lineno != line or len(node.targets) != 1 \
                    or not isinstance(node.targets[0], ast.Name):
                continue
            name = node.targets[0].id
            for call in ast.walk(node.value):
                if not isinstance(call, ast.Call):
                    continue
                f = call.func
                called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if called in GROWING_CALLS and any(isinstance(n, ast.Name) and n.id == name
                                                    for a in call.args for n in ast.walk(a)):
                    return True
    return False


def in_loop(file: str, line: int | None) -> bool | None:
    """Whether ``file:line`` lies in the body of a ``for``/``while`` loop (run again every iteration: a value made
    there is made anew each step); None when the source is not on disk."""
    tree = tree_if_present(file) if line is not None else None
    if tree is None:
        return None
    return any(isinstance(n, (ast.For, ast.AsyncFor, ast.While)) and n.body[0].lineno <= line <= (n.end_lineno or 0)
               for n in ast.walk(tree))


def loop_header(file: str, line: int | None) -> bool:
    """Whether ``file:line`` is a ``for`` loop's header: a name bound there is an item the iterator made elsewhere
    (a prefetching generator), not a value made on that line (jax_prefetch_fallback: the batch comes from line 20)."""
    tree = tree_if_present(file) if line is not None else None
    return tree is not None and any(isinstance(n, (ast.For, ast.AsyncFor)) and n.lineno == line
                                    for n in ast.walk(tree))


def enclosing_choice(file: str, line: int | None) -> int | None:
    """The line of the innermost ``if`` or ``for`` whose body holds ``file:line``, in the same function: the Python
    that decides whether (or how many times) that line is traced (``for blk in self.blocks[:self.active]``). None
    when the file is not on disk or neither encloses the line."""
    tree = tree_if_present(file) if line is not None else None
    return None if tree is None else _innermost_head(tree, line, with_loops=True)


def _innermost_head(tree: ast.Module, line: int, with_loops: bool) -> int | None:
    """The line of the innermost ``if`` (or, ``with_loops``, ``for``) whose head ends above ``line`` and whose body
    holds it; a nested function, class or lambda starts afresh, since only its own branches decide its lines."""
    best: int | None = None

    def visit(node: ast.AST) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            start, end = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
            if start is None or end is None or not start <= line <= end:
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                best = None
            head = child.test if isinstance(child, ast.If) else child.iter if with_loops and isinstance(
                child, (ast.For, ast.AsyncFor)) else None
            if head is not None and head.end_lineno is not None and line > head.end_lineno:
                best = child.lineno
            visit(child)

    visit(tree)
    return best


def tree_if_present(file: str) -> ast.Module | None:
    """The module at ``file`` if it is on disk, else None without noting it missing (the caller only asks)."""
    return parse_file(file) if on_disk(file) else None


def parse_file(file: str) -> ast.Module | None:
    """The module at ``file`` where it is now (``--source-map``); None, noted as missing, when it is not there."""
    try:
        path = Path(where_now(file))
        if not path.is_file():
            note_missing(file)
            return None
        if path.stat().st_size > _MAX_BYTES:
            return None
        return ast.parse(path.read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None


def _call_on_line(tree: ast.Module, line: int, function: str) -> tuple[ast.AST, ast.Call | None]:
    """The innermost function body holding a call that starts on ``line``, and the call: one of ``function`` by
    name, else the line's outermost call (``train_step(w, batch)`` where ``train_step = jax.jit(loss_fn)``)."""
    def called(node: ast.Call) -> str | None:
        f = node.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None

    named: tuple[ast.AST, ast.Call] | None = None
    first: tuple[ast.AST, ast.Call] | None = None

    def visit(scope: ast.AST, node: ast.AST) -> None:
        nonlocal named, first
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if child.lineno <= line <= (child.end_lineno or child.lineno):
                    visit(child, child)
                continue
            if isinstance(child, ast.Call) and child.lineno == line:
                if named is None and called(child) == function:
                    named = (scope, child)
                if first is None:
                    first = (scope, child)
            visit(scope, child)

    visit(tree, tree)
    return named or first or (tree, None)


PLACING_CALLS = frozenset({"device_put"})
"""Calls that move a value to devices without changing its shape or dtype (``ids, mask = jax.device_put((ids,
mask), sharding)``): an assignment of one that passes ``name`` through did not make it; the line before did."""


def _last_assignment(scope: ast.AST, name: str, before: int) -> int | None:
    """The last line before ``before`` in ``scope`` (not in nested functions or classes) that binds ``name``, past
    assignments that only place it (:data:`PLACING_CALLS`); the ``def`` line when ``name`` is a parameter of the
    calling function and nothing rebinds it."""
    found: list[tuple[int, ast.AST]] = []
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.arguments)):
            continue
        line = getattr(node, "lineno", None)
        if line is not None and line < before and any(_binds(t, name) for t in _targets(node)):
            found.append((line, node))
        stack.extend(ast.iter_child_nodes(node))
    found.sort(key=lambda f: -f[0])
    made = next((line for line, node in found if not _places(node, name)), None)
    best = made if made is not None else (found[0][0] if found else None)
    if best is None and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = scope.args
        if name in {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}:
            return scope.lineno
    return best


def _places(node: ast.AST, name: str) -> bool:
    """Whether ``node`` assigns ``name`` a placing call's result (:data:`PLACING_CALLS`) that takes ``name`` itself."""
    value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
    func = value.func if isinstance(value, ast.Call) else None
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return called in PLACING_CALLS and any(
        isinstance(n, ast.Name) and n.id == name for a in value.args for n in ast.walk(a))


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor)):
        return [node.target]
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [node.optional_vars]
    return []


def _binds(target: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(target))


def enclosing_if(file: str, line: int | None) -> int | None:
    """The line of the innermost ``if`` whose body or ``else`` holds ``file:line``, in the same function: the Python
    decision that traced (or skipped) that line. A branch traces nothing itself, so no capture holds its line; the
    source on disk does. None when the file is not on disk or no ``if`` encloses the line."""
    tree = parse_file(file)
    if tree is None or line is None:
        return None
    return _innermost_head(tree, line, with_loops=False)


_READ_METHODS = frozenset({"item", "tolist", "numpy", "cpu"})
"""Methods that bring a tensor's value to the host: a read the step waits for."""


def read_in_condition(file: str, line: int | None) -> bool:
    """The read at ``file:line`` is the test of an ``if`` or ``while`` (``if loss.item() > 1e6: continue``): its
    value decides in Python whether the rest of the step runs, so it cannot be read after the sync or in a step
    closure (new-user review 14, F1). A read in the body of a one-line ``if`` (``if step % 10 == 0:
    print(loss.item())``) is not: the test holds no read, the body does. False when the file is not on disk."""
    tree = parse_file(file)
    if tree is None or line is None:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, (ast.If, ast.While)):
            continue
        test = node.test
        if test.end_lineno is None or not test.lineno <= line <= test.end_lineno:
            continue
        if _reads_on(test, line) or not any(_reads_on(stmt, line) for stmt in node.body + node.orelse):
            return True
    return False


def _reads_on(node: ast.AST, line: int) -> bool:
    """``node`` holds, on ``line``, a method call that brings a value to the host (``.item()``, ``.tolist()``)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _READ_METHODS
               and getattr(n, "lineno", None) == line for n in ast.walk(node))


