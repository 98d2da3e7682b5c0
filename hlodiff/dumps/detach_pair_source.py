"""Whether a compiled callable is called with a tensor on one call and with that same tensor's ``.detach()`` on
another (``disc(fake.detach())`` for the discriminator's update, ``disc(fake)`` for the generator's): the input
requires grad on some calls only, by design, and each setting is one graph that is kept (Dynamo round 32,
d32_gan_d_calls_control). A tensor made to require grad on some steps (``x.requires_grad_(True)`` for an
adversarial pass: rev12_dc_adv_requires_grad) has no such pair, and keeps the row that asks for one setting, also
when the file probes the model with ``cmodel(x.detach())`` elsewhere (stop 51: a pair of any callable on the line,
``F.cross_entropy`` or a probe, had told that FGSM loop "expected").

Only the compiled callable counts (a name bound to ``torch.compile(...)``, or the one the guard names), only the
argument position the guard names (``args[0]``), and never a name the file makes require grad itself.

Read from the user's file when it is on disk (never required: without it the answer is False)."""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import tree_if_present


def called_detached_and_not(file: str, line: int | None, callee: str | None = None,
                            position: int | None = None) -> bool:
    """Whether a compiled callable called on ``file:line`` (``callee`` when the guard names it) is called somewhere
    in the file with ``X.detach()`` at argument ``position`` (any, when the guard names none) and elsewhere with
    ``X`` itself, ``X`` being no name the file sets to require grad."""
    tree = tree_if_present(file) if line is not None else None
    if tree is None:
        return False
    compiled = _compiled_names(tree) | ({callee} if callee else set())
    calls: dict[str, list[ast.Call]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (name := _callee(node)) in compiled:
            calls.setdefault(name, []).append(node)
    here = {name for name, nodes in calls.items() if any(n.lineno <= line <= (n.end_lineno or n.lineno)
                                                           for n in nodes)}
    if callee:
        here &= {callee}
    made_to_require = _made_to_require_grad(tree)
    return any(x not in made_to_require for name in here for x in _pairs(calls[name], position))


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return ast.unparse(f) if isinstance(f, (ast.Name, ast.Attribute)) else None


def _is_compile(node: ast.AST) -> bool:
    """``torch.compile(...)`` or ``compile(...)`` imported from torch (a call, or a decorator with options)."""
    target = node.func if isinstance(node, ast.Call) else node
    return ast.unparse(target) in ("torch.compile", "compile")


def _compiled_names(tree: ast.AST) -> set[str]:
    """The names the file binds to a compiled callable: ``disc = torch.compile(D)``, ``@torch.compile def f``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_compile(node.value) and isinstance(node.value, ast.Call):
            names.update(ast.unparse(t) for t in node.targets)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                _is_compile(d) for d in node.decorator_list):
            names.add(node.name)
    return names


def _made_to_require_grad(tree: ast.AST) -> set[str]:
    """Names the file makes require grad: ``x.requires_grad_(True)``, ``x.requires_grad = True``,
    ``x = torch.zeros(..., requires_grad=True)``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "requires_grad_" and not _false(node.args[:1]):
            names.add(ast.unparse(node.func.value))
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and t.attr == "requires_grad" and not _false([node.value]):
                    names.add(ast.unparse(t.value))
            if isinstance(node.value, ast.Call) and any(k.arg == "requires_grad" and not _false([k.value])
                                                        for k in node.value.keywords):
                names.update(ast.unparse(t) for t in node.targets)
    return names


def _false(args: list[ast.expr]) -> bool:
    return bool(args) and isinstance(args[0], ast.Constant) and args[0].value is False


def _pairs(calls: list[ast.Call], position: int | None) -> set[str]:
    """The ``X`` some call passes as ``X.detach()`` in the position another call passes ``X`` (``position`` only,
    when given)."""
    plain, detached = set(), set()
    for call in calls:
        for i, arg in enumerate(call.args):
            if position is not None and i != position:
                continue
            if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "detach" \
                    and not arg.args:
                detached.add((i, ast.unparse(arg.func.value)))
            else:
                plain.add((i, ast.unparse(arg)))
    return {x for _, x in plain & detached}
