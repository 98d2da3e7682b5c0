"""A user's source file, read when it is still on disk: parameter names of a function, where an argument was made.

JAX names a changed static argument only by its path in ``(args, kwargs)`` (``[0][1]``: positional argument 1);
the user knows it as ``n_layers``. JAX's log says where the function is defined, so the name is one parse of that
file away. The file is only read (never required: a moved or scrubbed path gives None) and bounded in size.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

from hlodiff.dumps.source_paths import note_missing, on_disk, where_now

_MAX_BYTES = 2_000_000


def parameter_names(file: str, line: int | None) -> list[str] | None:
    """Positional parameter names of the function defined (or decorated) at ``file:line``; None when unknown."""
    if line is None:
        return None
    tree = _parse(file)
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
    tree = _parse(file)
    if tree is None or call_line is None:
        return None
    scope, call = _call_on_line(tree, call_line, function)
    if call is None:
        return None
    passed = passed_argument(call, parameter, parameters, tree, function)
    if not isinstance(passed, ast.Name):
        return None
    return _loop_carried(scope, passed.id, call_line) or _last_assignment(scope, passed.id, call_line)


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


_GROWING_CALLS = frozenset({"concatenate", "concat", "cat", "append", "hstack", "vstack", "column_stack", "dstack"})


def fed_its_own_concatenation(file: str, line: int | None) -> bool:
    """The statement at ``file:line`` rebinds a name to a concatenation that includes that name (``tokens =
    jnp.concatenate([tokens, nxt], axis=1)``) inside a loop: the value grows on every iteration, whatever a capture
    of compilations alone can show (review 8, F9: a decoding prefix told "pad to a few fixed sizes"). False when
    the source is not on disk."""
    if line is None:
        return False
    tree = _parse(file)
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
                if called in _GROWING_CALLS and any(isinstance(n, ast.Name) and n.id == name
                                                    for a in call.args for n in ast.walk(a)):
                    return True
    return False


def callee_on_line(file: str, line: int | None) -> str | None:
    """What the outermost call on ``file:line`` calls, as written (``cmodel`` in ``out = cmodel(req)``,
    ``self.net``); None when the file is not here or the line holds no call."""
    if line is None:
        return None
    tree = _parse(file)
    if tree is None:
        return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == line
             and isinstance(n.func, (ast.Name, ast.Attribute))]
    compiled = _compiled_names(tree)
    chosen = next((c for c in calls if _simple_name(c.func) in compiled), None)
    if chosen is None:
        # review 8 F2: `print(predict(x).argmax(-1).cpu())` named `print`; a builtin is never what torch.compile
        # ran, so the next call on the line written as a plain name is taken (or nothing)
        chosen = next((c for c in calls if _simple_name(c.func) is not None
                       and not (isinstance(c.func, ast.Name) and c.func.id in _BUILTINS)), None)
    return ast.unparse(chosen.func) if chosen is not None else None


def calls_of_function(file: str, function: str) -> list[int] | None:
    """Lines that call ``function`` by its plain name outside its own body (``out = forward(xb)`` for a compiled
    ``def forward``), or by a plain name bound to ``torch.compile(function, ...)`` (``compiled(x, y)`` after
    ``compiled = torch.compile(loss_fn, backend="openxla")``: Dynamo round 20, where the log named only the ``def``),
    in line order; None when the file is not on disk (nothing noted missing: the caller only asks). A wrapper's
    call (``torch.compile(f)(x)``, ``self.f(x)``) is not counted."""
    tree = _tree_if_present(file)
    if tree is None:
        return None
    inside = {n.lineno for d in ast.walk(tree) if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))
              and d.name == function for n in ast.walk(d) if hasattr(n, "lineno")}
    names = {function} | _compiled_aliases(tree, function)
    return sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                   and n.func.id in names and n.lineno not in inside})


def _compiled_aliases(tree: ast.Module, function: str) -> set[str]:
    """Plain names bound to ``torch.compile(function, ...)`` (the function itself as its first argument): what the
    loop calls when it never calls the function by its own name."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        target = call.func
        if not (isinstance(target, (ast.Name, ast.Attribute)) and ast.unparse(target).split(".")[-1] == "compile"):
            continue
        if call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == function:
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def loop_header(file: str, line: int | None) -> bool:
    """Whether ``file:line`` is a ``for`` loop's header: a name bound there is an item the iterator made elsewhere
    (a prefetching generator), not a value made on that line (jax_prefetch_fallback: the batch comes from line 20)."""
    tree = _tree_if_present(file) if line is not None else None
    return tree is not None and any(isinstance(n, (ast.For, ast.AsyncFor)) and n.lineno == line
                                    for n in ast.walk(tree))


def _tree_if_present(file: str) -> ast.Module | None:
    """The module at ``file`` if it is on disk, else None without noting it missing (the caller only asks)."""
    return _parse(file) if on_disk(file) else None


def calls_of_compiled(file: str) -> list[int] | None:
    """Lines that call, by its plain name, a name the module binds to ``torch.compile(...)`` (``out =
    compiled(x)`` after ``compiled = torch.compile(model, ...)``), in line order; None when the file is not on
    disk. Where Dynamo names only torch's wrapper of a compiled module, the one such call is the user's line."""
    tree = _tree_if_present(file)
    if tree is None:
        return None
    names = {n for n in _compiled_names(tree) if "." not in n}
    return sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                   and n.func.id in names})


_BUILTINS = frozenset(dir(builtins))


def _simple_name(func: ast.AST) -> str | None:
    """``predict`` or ``self.net`` as written: a name or a dotted attribute of a name, never a method of a call's
    result (``predict(x).argmax``)."""
    node = func
    while isinstance(node, ast.Attribute):
        node = node.value
    return ast.unparse(func) if isinstance(node, ast.Name) else None


def _compiled_names(tree: ast.Module) -> set[str]:
    """Names the module binds to a ``torch.compile(...)`` result, or defines under an ``@torch.compile`` decorator:
    the callee of a line that also calls other things (``print(predict(...))``) is the one Dynamo compiled."""
    def is_compile(node: ast.AST) -> bool:
        target = node.func if isinstance(node, ast.Call) else node
        return isinstance(target, (ast.Name, ast.Attribute)) and ast.unparse(target).split(".")[-1] == "compile"

    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and is_compile(node.value):
            names.update(ast.unparse(t) for t in node.targets if isinstance(t, (ast.Name, ast.Attribute)))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(map(is_compile, node.decorator_list)):
            names.add(node.name)
    return names


def _parse(file: str) -> ast.Module | None:
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
    tree = _parse(file)
    if tree is None or line is None:
        return None
    best: int | None = None

    def visit(node: ast.AST) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            start, end = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
            if start is None or end is None or not start <= line <= end:
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                best = None  # a nested function: only its own branches count
            if isinstance(child, ast.If) and child.test.end_lineno is not None and line > child.test.end_lineno:
                best = child.lineno
            visit(child)

    visit(tree)
    return best


_READ_METHODS = frozenset({"item", "tolist", "numpy", "cpu"})
"""Methods that bring a tensor's value to the host: a read the step waits for."""


def read_in_condition(file: str, line: int | None) -> bool:
    """The read at ``file:line`` is the test of an ``if`` or ``while`` (``if loss.item() > 1e6: continue``): its
    value decides in Python whether the rest of the step runs, so it cannot be read after the sync or in a step
    closure (new-user review 14, F1). A read in the body of a one-line ``if`` (``if step % 10 == 0:
    print(loss.item())``) is not: the test holds no read, the body does. False when the file is not on disk."""
    tree = _parse(file)
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


def calls_named(file: str, names: tuple[str, ...]) -> list[int]:
    """Lines of the calls to any of ``names`` (``requires_grad_``, ``device_put``) and of assignments to an
    attribute of those names (``p.requires_grad = False``), in line order; empty when the file is not on disk. A
    name written ``call(arg)`` is a call of ``call`` given ``arg`` by name (``to(bfloat16)``:
    ``net.to(torch.bfloat16)``, ``net.to(dtype=torch.bfloat16)``; not ``x.to(w.dtype)``)."""
    tree = _parse(file)
    if tree is None:
        return []
    plain = {n for n in names if "(" not in n}
    given = {tuple(n.rstrip(")").split("(", 1)) for n in names if "(" in n}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            args = {a.attr if isinstance(a, ast.Attribute) else a.id if isinstance(a, ast.Name) else None
                    for a in [*node.args, *(k.value for k in node.keywords)]}
            if name in plain or any(name == call and arg in args for call, arg in given):
                found.add(node.lineno)
        elif isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Attribute) and t.attr in names for t in node.targets):
                found.add(node.lineno)
    return sorted(found)


def calls_on_submodule(file: str, names: tuple[str, ...], key: str) -> list[int]:
    """Lines calling one of ``names`` whose first argument is the submodule ``key`` of something (``net[2]``,
    ``net['2']``, ``model.head`` for key ``head``), in line order; empty when the file is not on disk. A
    parametrization registered on another layer changes another guard."""
    tree = _parse(file)
    if tree is None:
        return []
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if name not in names:
            continue
        arg = node.args[0]
        if isinstance(arg, ast.Subscript) and isinstance(arg.slice, ast.Constant) and str(arg.slice.value) == key:
            found.add(node.lineno)
        elif isinstance(arg, ast.Attribute) and arg.attr == key:
            found.add(node.lineno)
    return sorted(found)
