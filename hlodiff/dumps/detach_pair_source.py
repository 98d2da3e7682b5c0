"""Whether a compiled callable is called with a tensor on one call and with that same tensor's ``.detach()`` on
another (``disc(fake.detach())`` for the discriminator's update, ``disc(fake)`` for the generator's): the input
requires grad on some calls only, by design, and each setting is one graph that is kept (Dynamo round 32,
d32_gan_d_calls_control). A tensor made to require grad on some steps (``x.requires_grad_(True)`` for an
adversarial pass: rev12_dc_adv_requires_grad) has no such pair, and keeps the row that asks for one setting.

Read from the user's file when it is on disk (never required: without it the answer is False)."""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import tree_if_present


def called_detached_and_not(file: str, line: int | None) -> bool:
    """Whether a callable called by name on ``file:line`` is called somewhere in the file with ``X.detach()`` as an
    argument and elsewhere with ``X`` itself (the same expression)."""
    tree = tree_if_present(file) if line is not None else None
    if tree is None:
        return False
    calls: dict[str, list[ast.Call]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (name := _callee(node)) is not None:
            calls.setdefault(name, []).append(node)
    here = {name for name, nodes in calls.items() if any(n.lineno <= line <= (n.end_lineno or n.lineno)
                                                           for n in nodes)}
    return any(_pair(calls[name]) for name in here)


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return ast.unparse(f) if isinstance(f, (ast.Name, ast.Attribute)) else None


def _pair(calls: list[ast.Call]) -> bool:
    """Some call passes ``X.detach()`` in the position another call passes ``X``."""
    plain, detached = set(), set()
    for call in calls:
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "detach" \
                    and not arg.args:
                detached.add((i, ast.unparse(arg.func.value)))
            else:
                plain.add((i, ast.unparse(arg)))
    return bool(plain & detached)
