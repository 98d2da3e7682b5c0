"""Parameter names of a user's function, read from its source file when it is still on disk.

JAX names a changed static argument only by its path in ``(args, kwargs)`` (``[0][1]``: positional argument 1);
the user knows it as ``n_layers``. JAX's log says where the function is defined, so the name is one parse of that
file away. The file is only read (never required: a moved or scrubbed path gives None) and bounded in size.
"""

from __future__ import annotations

import ast
from pathlib import Path

_MAX_BYTES = 2_000_000


def parameter_names(file: str, line: int | None) -> list[str] | None:
    """Positional parameter names of the function defined (or decorated) at ``file:line``; None when unknown."""
    if line is None:
        return None
    try:
        path = Path(file)
        if not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return None
        tree = ast.parse(path.read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            starts = {node.lineno} | {d.lineno for d in node.decorator_list}
            if line in starts:
                a = node.args
                return [p.arg for p in a.posonlyargs + a.args]
    return None
