"""The calls a user's source file makes, read when it is still on disk: what the call on a line calls (``cmodel`` in
``out = cmodel(req)``), the lines that call a compiled function or a name bound to ``torch.compile(...)``, the lines
calling named functions (``requires_grad_``, ``device_put``) or handing them one submodule.

Apart from :mod:`hlodiff.dumps.python_source`, which reads where an argument was made and the conditions around a
line; both parse through its bounded, ``--source-map``-aware reader.
"""

from __future__ import annotations

import ast
import builtins

from hlodiff.dumps.python_source import parse_file, tree_if_present


def callee_on_line(file: str, line: int | None) -> str | None:
    """What the outermost call on ``file:line`` calls, as written (``cmodel`` in ``out = cmodel(req)``,
    ``self.net``); None when the file is not here or the line holds no call."""
    if line is None:
        return None
    tree = parse_file(file)
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
    tree = tree_if_present(file)
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


def compiles_of_function(file: str, function: str) -> list[tuple[int, str | None, tuple[str, ...]]] | None:
    """The ``torch.compile(function, ...)`` calls of the file that compile ``function`` by its plain name: (line,
    the ``backend=`` given as a string literal, else None, the plain names the result is bound to), in line order;
    None when the file is not on disk. Two with different backends keep two cache entries of one code object
    (Dynamo round 30)."""
    tree = tree_if_present(file)
    if tree is None:
        return None
    found = {}
    for node in ast.walk(tree):
        call = node.value if isinstance(node, ast.Assign) else node  # an assigned call is met twice: once bound
        if not isinstance(call, ast.Call) or not isinstance(call.func, (ast.Name, ast.Attribute)):
            continue
        if ast.unparse(call.func).split(".")[-1] != "compile" or not call.args:
            continue
        if not (isinstance(call.args[0], ast.Name) and call.args[0].id == function):
            continue
        backend = next((k.value.value for k in call.keywords if k.arg == "backend"
                        and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)), None)
        names = tuple(t.id for t in node.targets if isinstance(t, ast.Name)) if node is not call else ()
        if names or call.lineno not in found:
            found[call.lineno] = (call.lineno, backend, names)
    return sorted(found.values())


def calls_of_names(file: str, names: tuple[str, ...]) -> list[int] | None:
    """Lines that call one of ``names`` as a plain name (``check_loss(x, y)``), in line order; None when the file
    is not on disk."""
    tree = tree_if_present(file)
    if tree is None:
        return None
    return sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                   and n.func.id in names})


def calls_of_compiled(file: str) -> list[int] | None:
    """Lines that call, by its plain name, a name the module binds to ``torch.compile(...)`` (``out =
    compiled(x)`` after ``compiled = torch.compile(model, ...)``), in line order; None when the file is not on
    disk. Where Dynamo names only torch's wrapper of a compiled module, the one such call is the user's line."""
    tree = tree_if_present(file)
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


def calls_named(file: str, names: tuple[str, ...]) -> list[int]:
    """Lines of the calls to any of ``names`` (``requires_grad_``, ``device_put``) and of assignments to an
    attribute of those names (``p.requires_grad = False``), in line order; empty when the file is not on disk. A
    name written ``call(arg)`` is a call of ``call`` given ``arg`` by name (``to(bfloat16)``:
    ``net.to(torch.bfloat16)``, ``net.to(dtype=torch.bfloat16)``; not ``x.to(w.dtype)``)."""
    tree = parse_file(file)
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
    tree = parse_file(file)
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
