"""Which function of an installed library holds a line: the name a dump's innermost library frame stands in.

A torch_xla dump names ``torch/nn/functional.py:2206`` for ops traced inside a library function; the library's file,
where it lies beside the dump's path or under this interpreter's ``site-packages``, names the function (``gumbel_softmax``)
the user's file then calls (:mod:`hlodiff.explain.library_call_lines`). Reading installed files is this layer's.
"""

from __future__ import annotations

import ast
import os
import sys
from functools import lru_cache

from hlodiff.hlo.installed import package_path

_MAX_BYTES = 4_000_000


@lru_cache(maxsize=64)
def library_function(file: str, line: int) -> str | None:
    """The name of the innermost function whose body holds ``line`` of the library file ``file`` (where it is, or
    the same package path under an installed ``site-packages`` of this interpreter); None when not found."""
    path = _installed(file)
    if path is None:
        return None
    try:
        if os.path.getsize(path) > _MAX_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
            if best is None or node.lineno > best.lineno:
                best = node
    return best.name if best is not None else None


def _installed(file: str) -> str | None:
    if os.path.isfile(file):
        return file
    rel = package_path(file)
    if rel == file or rel.startswith("/"):
        return None
    for entry in sys.path:
        if entry and ("site-packages" in entry or "dist-packages" in entry):
            candidate = os.path.join(entry, rel)
            if os.path.isfile(candidate):
                return candidate
    return None
