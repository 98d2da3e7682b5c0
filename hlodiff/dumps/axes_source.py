"""Whether a static argument is an axis specification: the jitted function passes it to ``jax.vmap``/``jax.pmap``
as ``in_axes``/``out_axes``, read from the user's source when it is on disk.

Tuples of small numbers and None are vmap's in_axes (``(0, None, None)``: None is "not mapped", no padding
expresses it; round 30, r30_jx_vmap_bagging_axes), but they are also a static pad target (``(256, None)``: None is
"keep this dimension"), which the sizes rows answer. The values alone cannot tell them apart when the numbers are
small; the call they reach can (thirteenth stop's last read).
"""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import parse_file

_MAPS = ("vmap", "pmap")
_AXES_KEYWORDS = ("in_axes", "out_axes")


def passed_as_axes(file: str, def_line: int | None, parameter: str) -> bool | None:
    """True when the function defined (or decorated) at ``file:def_line`` passes ``parameter`` to a vmap/pmap call
    as ``in_axes``/``out_axes`` (by keyword, or as vmap's second argument); False when it does not; None when the
    source is not on disk or the function is not found."""
    if def_line is None or not parameter.isidentifier():
        return None
    tree = parse_file(file)
    if tree is None:
        return None
    jitted = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and def_line in {n.lineno} | {d.lineno for d in n.decorator_list}), None)
    if jitted is None:
        return None
    for call in (n for n in ast.walk(jitted) if isinstance(n, ast.Call) and _names_a_map(n.func)):
        given = [k.value for k in call.keywords if k.arg in _AXES_KEYWORDS] + call.args[1:3]
        if any(isinstance(v, ast.Name) and v.id == parameter for v in given):
            return True
    return False


def _names_a_map(func: ast.AST) -> bool:
    """``vmap``, ``jax.vmap``, ``pmap`` (any attribute chain ending in one)."""
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _MAPS
