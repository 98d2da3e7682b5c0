"""The training mode each call of a compiled module runs in, as the user's source sets it.

A compiled ``nn.Module`` called on two lines (a training loop, then ``model.eval()`` and one more call) recompiles on
Dynamo's guard ``....training == True``; a TORCH_LOGS text log names only torch's wrapper of the module and no call
(new-user review 17, C2 by hand: "no line"). The guard says which mode the call that recompiled ran in (the other
one), and the source says which call runs in which mode: the nearest ``model.eval()`` / ``model.train()`` before it.
A call whose mode the source leaves open (a setter only on some paths, one later in its loop that the next
iteration meets, a function that never sets it) has no mode: the caller then names no line rather than guess.
"""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import tree_if_present

MODE_SETTERS: dict[str, bool] = {
    "eval": False,   # model.eval(): training off
    "train": True,   # model.train(), model.train(True); model.train(False) is eval (read from its argument)
}
"""Methods of an ``nn.Module`` that set its ``training`` flag, and the flag each sets when called without an
argument."""

_BRANCHES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.Match)
"""Statements whose body runs on some paths only (a ``with`` block's runs whenever the line before it did)."""
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def compiled_calls_by_mode(file: str) -> dict[int, bool | None] | None:
    """Line of each call of a ``torch.compile(...)`` result (by a plain name) -> the ``training`` flag it runs with
    (None: the source leaves it open); None when the file is not on disk."""
    tree = tree_if_present(file)
    if tree is None:
        return None
    compiled = _compiled_modules(tree)
    modules = set(compiled) | set(compiled.values())
    parents = _parents(tree)
    setters = [(node, mode) for node in ast.walk(tree) for mode in [_sets_mode(node, modules)] if mode is not ...]
    modes: dict[int, bool | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in compiled:
            mode = _mode_at(node, setters, parents)
            modes[node.lineno] = mode if modes.get(node.lineno, mode) == mode else None
    return modes


def _compiled_modules(tree: ast.Module) -> dict[str, str]:
    """Plain names bound to ``torch.compile(module, ...)`` -> the module passed (``cmodel`` -> ``model``): its
    ``model.eval()`` sets the mode of ``cmodel``'s calls. A function compiled by a decorator is left out: which
    module's flag it reads is not in its name."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args):
            continue
        if ast.unparse(node.value.func).split(".")[-1] != "compile":
            continue
        names.update((t.id, ast.unparse(node.value.args[0])) for t in node.targets if isinstance(t, ast.Name))
    return names


def _sets_mode(node: ast.AST, modules: set[str]):
    """The flag ``node`` sets on one of ``modules`` (None: set from a value the source does not fix), or ``...``
    when it is no such call."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MODE_SETTERS
            and ast.unparse(node.func.value) in modules):
        return ...
    args = [*node.args, *(k.value for k in node.keywords if k.arg == "mode")]
    if not args:
        return MODE_SETTERS[node.func.attr]
    return bool(args[0].value) if isinstance(args[0], ast.Constant) and node.func.attr == "train" else None


def _parents(tree: ast.Module) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _ancestors(node: ast.AST, parents: dict) -> list[ast.AST]:
    """Enclosing nodes, innermost first, up to the scope (function or module) ``node`` runs in."""
    out = []
    while node in parents:
        node = parents[node]
        out.append(node)
        if isinstance(node, _SCOPES):
            break
    return out


def _mode_at(call: ast.Call, setters: list, parents: dict) -> bool | None:
    """The flag at ``call``: the nearest setter before it in its scope that every path to the call passes, with
    the setters it may follow instead (one only on some paths before it; one later in a loop around the call that
    the next iteration meets). Every path agreeing gives the flag; a function's body starts with it unknown, the
    module's with ``nn.Module``'s default (training)."""
    around = _ancestors(call, parents)
    scope = around[-1] if around and isinstance(around[-1], _SCOPES) else None
    mine = [(s, m) for s, m in setters if _scope_of(s, parents) is scope]
    possible: set = set()
    definite = None
    overridden: set = set()
    for s, mode in sorted((p for p in mine if p[0].lineno < call.lineno), key=lambda p: -p[0].lineno):
        block = _block(s, parents)
        if block in overridden:
            continue  # a later setter of the same block decides what the block leaves
        possible.add(mode)
        if block[0] is None or block[0] in around:
            definite = s
            break
        overridden.add(block)
    if definite is None:
        possible.add(True if scope is None else None)
    for loop in (a for a in around if isinstance(a, _LOOPS)):
        if definite is not None and loop in _ancestors(definite, parents):
            break
        possible |= {m for s, m in mine if s.lineno > call.lineno and loop in _ancestors(s, parents)}
    return possible.pop() if len(possible) == 1 else None


def _block(node: ast.AST, parents: dict) -> tuple:
    """The innermost branch around ``node`` and which of its bodies holds it (``body``, ``orelse``, a handler):
    setters of one body run in order, the last one decides."""
    child = node
    for a in _ancestors(node, parents):
        if isinstance(a, _BRANCHES):
            for name, value in ast.iter_fields(a):
                if isinstance(value, list) and child in value:
                    return a, name
            return a, id(child)
        child = a
    return None, None


def _scope_of(node: ast.AST, parents: dict):
    around = _ancestors(node, parents)
    return around[-1] if around and isinstance(around[-1], _SCOPES) else None


GRAD_OFF = ("no_grad", "inference_mode")
"""Context managers (and decorators) under which a call runs with grad mode off; ``set_grad_enabled(False)`` too."""


def compiled_calls_by_grad_mode(file: str) -> tuple[dict[int, bool | None], int | None] | None:
    """Line of each call of a ``torch.compile(...)`` result -> whether grad mode is on there (False under ``with
    torch.no_grad()``, ``torch.inference_mode()``, ``torch.set_grad_enabled(False)``; None in a function whose
    caller sets it), and the call that runs first (the first in line order, when every call is in one scope and it
    runs on every pass: no ``if`` between it and that scope), or None. None when the file is not on disk.

    Dynamo's ``GLOBAL_STATE changed: grad_mode`` names no direction: the call that recompiled is the one whose mode
    differs from the first call's, which compiled first (rev11_dc_train_eval: the training call, then the
    validation call under ``torch.no_grad()``)."""
    tree = tree_if_present(file)
    if tree is None:
        return None
    compiled = _compiled_modules(tree)
    parents = _parents(tree)
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id in compiled), key=lambda n: (n.lineno, n.col_offset))
    modes = {c.lineno: _grad_at(c, parents) for c in calls}
    scopes = {id(_scope_of(c, parents)) for c in calls}
    first = calls[0] if calls and len(scopes) == 1 else None
    if first is not None and any(isinstance(a, _BRANCHES) and not isinstance(a, _LOOPS)
                                 for a in _ancestors(first, parents)):
        first = None
    return modes, (first.lineno if first is not None else None)


def _grad_at(call: ast.Call, parents: dict) -> bool | None:
    around = _ancestors(call, parents)
    for a in around:
        if isinstance(a, (ast.With, ast.AsyncWith)):
            for item in a.items:
                mode = _grad_context(item.context_expr)
                if mode is not None:
                    return mode
        if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in a.decorator_list:
                mode = _grad_context(d)
                if mode is not None:
                    return mode
            return None  # a function's body: its caller's mode
    return True  # the module's code: grad mode is on unless a block turns it off


def _grad_context(node: ast.AST) -> bool | None:
    """``torch.no_grad()`` -> False, ``torch.enable_grad()`` -> True, ``torch.set_grad_enabled(False)`` -> False;
    None for anything else."""
    func = node.func if isinstance(node, ast.Call) else node
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in GRAD_OFF:
        return False
    if name == "enable_grad":
        return True
    if name == "set_grad_enabled" and isinstance(node, ast.Call) and node.args \
            and isinstance(node.args[0], ast.Constant):
        return bool(node.args[0].value)
    return None
