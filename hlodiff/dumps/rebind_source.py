"""The line inside the loop around a jitted call that binds the called name to a new function object (new-user
review 20, F7: ``train_step = make_train_step(lr)`` every 3 steps, a step-decay lr applied by jitting again).

JAX's log says it never saw the function object and names the call and the ``def``; the line to change is the one
that makes the object anew. Only a plain assignment of that very name, inside a loop that also holds the call, counts:
the first binding before the loop made the object JAX compiled first, and a name rebound in another loop (an
evaluation loop) is not what this call ran.
"""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import tree_if_present


def rebound_in_loop(file: str, call_line: int | None, name: str) -> list[int]:
    """Lines of ``name = <call or lambda>`` in the innermost loop around ``file:call_line``, before or after the call
    (the loop's next pass runs them before it); empty when the source is not on disk or shows none."""
    tree = tree_if_present(file) if call_line is not None and name else None
    if tree is None:
        return []
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))
             and n.lineno <= call_line <= (n.end_lineno or n.lineno)]
    if not loops:
        return []
    loop = max(loops, key=lambda n: n.lineno)  # the innermost: it starts last
    return sorted(n.lineno for n in ast.walk(loop) if isinstance(n, ast.Assign)
                  and isinstance(n.value, (ast.Call, ast.Lambda))
                  and any(isinstance(t, ast.Name) and t.id == name for t in n.targets))
