"""Why a static argument must stay static: it feeds a ``jax.custom_vjp`` / ``custom_jvp`` function's
``nondiff_argnums``, read from the user's source when it is on disk.

``custom_vjp`` refuses tracers in ``nondiff_argnums`` (UnexpectedTracerError), so a user whose value changes every
step (DANN's gradient-reversal strength, a clip value, a temperature) marks it static in the jitted step and
compiles once per value. "Pass it traced" alone brings the tracer error back: the value must leave
``nondiff_argnums`` (an ordinary argument whose cotangent the backward rule returns as zeros) first (round 17,
r17_jx_grl_nondiff_static). Nothing in the HLO or JAX's log says so; one parse of the file does.
"""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import parse_file

_CUSTOM = ("custom_vjp", "custom_jvp")


def nondiff_callee(file: str, def_line: int | None, parameter: str) -> str | None:
    """The name of the custom_vjp/custom_jvp function that the jitted function defined (or decorated) at
    ``file:def_line`` passes ``parameter`` to at one of its ``nondiff_argnums`` positions; None when the source is
    not on disk or no such call is found."""
    if def_line is None or not parameter.isidentifier():
        return None
    tree = parse_file(file)
    if tree is None:
        return None
    nondiff = _nondiff_functions(tree)
    if not nondiff:
        return None
    jitted = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and def_line in {n.lineno} | {d.lineno for d in n.decorator_list}), None)
    if jitted is None:
        return None
    for call in (n for n in ast.walk(jitted) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
        positions = nondiff.get(call.func.id, ())
        if any(p < len(call.args) and isinstance(call.args[p], ast.Name) and call.args[p].id == parameter
               for p in positions):
            return call.func.id
    return None


def _nondiff_functions(tree: ast.Module) -> dict[str, tuple[int, ...]]:
    """Module-level functions made custom_vjp/custom_jvp with ``nondiff_argnums``: name -> the positions."""
    found: dict[str, tuple[int, ...]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                positions = _positions(deco)
                if positions:
                    found[node.name] = positions
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            positions = _positions(node.value)  # grl = jax.custom_vjp(f, nondiff_argnums=(1,))
            if positions:
                found[node.targets[0].id] = positions
    return found


def _positions(node: ast.AST) -> tuple[int, ...]:
    """``nondiff_argnums`` of a call that names custom_vjp/custom_jvp (itself or through functools.partial)."""
    if not isinstance(node, ast.Call) or not any(name in ast.unparse(node) for name in _CUSTOM):
        return ()
    for keyword in node.keywords:
        if keyword.arg == "nondiff_argnums":
            try:
                value = ast.literal_eval(keyword.value)
            except ValueError:
                return ()
            values = value if isinstance(value, (tuple, list)) else (value,)
            return tuple(v for v in values if isinstance(v, int))
    return ()
